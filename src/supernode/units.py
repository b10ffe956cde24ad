"""Unit conversions from file units to SI.

File fields carry their unit in their name (``bandwidth_gbit_per_s``,
``memory_gbyte``, ``latency_ns``, ``power_kw``); the loader converts them once
with these constants. Inside the library every quantity is SI: bytes, bytes/s,
seconds, watts, FLOP/s. Bits and bytes are never mixed: a name with ``gbit``
is gigabits (1e9 bit), ``gbyte`` gigabytes (1e9 byte), ``gib`` gibibytes (2**30 byte).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeAlias, Union

if TYPE_CHECKING:  # numpy is not imported for a unit constant
    import numpy as np
    import numpy.typing as npt

BITS_PER_BYTE = 8

GBIT_PER_S = 1e9 / BITS_PER_BYTE  # bytes/s in one Gb/s
GBYTE_PER_S = 1e9  # bytes/s in one GB/s
TBYTE_PER_S = 1e12  # bytes/s in one TB/s
GBYTE = 1e9  # bytes in one GB
GIB = 2**30  # bytes in one GiB
TFLOPS = 1e12  # FLOP/s in one TFLOP/s
NS = 1e-9  # seconds in one nanosecond
US = 1e-6  # seconds in one microsecond
KW = 1e3  # watts in one kilowatt

#: A quantity as one float or a numpy array of them: what the vectorised models take and
#: return (an array in, an array out; plain numbers in, a float out).
FloatLike: TypeAlias = Union[float, "npt.NDArray[np.float64]"]


def bytes_per_s_to_gbyte_per_s(value: float) -> float:
    """Convert bytes/s to GB/s (1e9 byte/s), for display."""
    return value / GBYTE_PER_S


#: Binary size suffixes (``K``, ``Ki``, ``KiB``, ``KB`` all 2**10: nccl-tests' ``-b 64K``
#: and ``-e 8G`` are binary, src/common.cu ``parsesize``).
_SIZE_SUFFIXES = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}


def parse_size_bytes(text: str) -> int:
    """A size in bytes from ``1048576``, ``64K``, ``64KiB``, ``16M``, ``64MiB``, ``8G``,
    ``1TiB`` (binary multiples, as nccl-tests reads ``-b``/``-e``). Raises ``ValueError``
    saying what is allowed (the caller names the option)."""
    raw = text.strip().upper().replace(" ", "")
    for tail in ("IB", "B", "I"):
        if raw.endswith(tail) and raw[: -len(tail)][-1:] in "KMGT" and len(raw) > len(tail):
            raw = raw[: -len(tail)]
            break
    else:
        raw = raw.removesuffix("B")
    suffix = raw[-1:] if raw[-1:] in _SIZE_SUFFIXES and raw[-1:] else ""
    number = raw[: len(raw) - len(suffix)]
    try:
        value = float(number) * _SIZE_SUFFIXES[suffix]
    except ValueError:
        raise ValueError(f"not a size: {text!r} (e.g. 1048576, 64K, 64MiB, 8G)") from None
    if not value == value or value < 0 or value >= 2**63:
        raise ValueError(f"{text!r}: a size of 0 to 2**63 bytes is required")
    return int(value)

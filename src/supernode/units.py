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

"""Which catalog accelerator a benchmark's device name is (``NVIDIA GB300`` -> ``gb300``).

nccl-tests prints the CUDA/HIP device name of every rank (``NVIDIA A100-SXM4-40GB``,
``AMD Instinct MI355X``); a catalog entry matches when the leading part of its name
(``a100`` of ``a100-sxm-80gb``) appears in the device name, the longest such part winning.
The match names the part family, not the memory variant: an A100 40GB matches
``a100-sxm-80gb`` and the note says so.
"""

from __future__ import annotations

import re

from supernode.catalog import accelerators


def _stem(name: str) -> str:
    return name.split("-")[0].lower()


def catalog_accelerator(device_name: str) -> str | None:
    """The catalog accelerator of ``device_name``, or None when none matches."""
    text = re.sub(r"[^a-z0-9]", "", device_name.lower())
    hits = [(len(_stem(n)), n) for n in accelerators() if len(_stem(n)) >= 3
            and re.sub(r"[^a-z0-9]", "", _stem(n)) in text]
    if not hits:
        return None
    longest = max(length for length, _ in hits)
    return sorted(n for length, n in hits if length == longest)[0]


def same_family(a: str, b: str) -> bool:
    """True when two catalog names share their leading part (``gb200`` / ``gb200``)."""
    return _stem(a) == _stem(b)

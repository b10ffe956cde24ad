"""Translation tables: how many entries map the global space, and the miss rate of a
working set.

A unit translating global addresses keeps a table (a TLB-like cache) of ``entries``
entries, each mapping ``page_bytes``. The full map of a global space of ``S`` bytes needs
``ceil(S / page_bytes)`` entries (8 B each, a page-table entry). For a working set of
``W`` bytes touched uniformly at random (the independent reference model: every page
equally likely), a cache of ``E`` entries holds ``E`` of the ``W / page_bytes`` pages in
steady state, so the miss rate is ``max(0, 1 - E * page_bytes / W)`` (Denning, 'The
working set model for program behavior', CACM 1968: no misses once the working set fits).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

#: Bytes of one page-table entry (an address and permission bits: x86-64 and Arm64 PTEs).
ENTRY_BYTES = 8


@dataclass(frozen=True)
class Translation:
    """Table figures of one unit kind for one working set."""

    entries: int
    page_bytes: int
    reach_bytes: int
    full_map_entries: int
    full_map_bytes: int
    working_set_bytes: float
    miss_rate: float

    def as_dict(self) -> dict[str, object]:
        """JSON form."""
        return dict(self.__dict__)


def translation(entries: int, page_bytes: int, global_bytes: float,
                working_set_bytes: float) -> Translation:
    """Reach, full-map size and working-set miss rate of a table (module docstring)."""
    reach = entries * page_bytes
    full = math.ceil(global_bytes / page_bytes)
    miss = 0.0 if working_set_bytes <= 0 else max(0.0, 1.0 - reach / working_set_bytes)
    return Translation(entries, page_bytes, reach, full, full * ENTRY_BYTES,
                       working_set_bytes, miss)

"""The global address map: which (unit, local address) a global address lands on.

Seed 003 §2.3: a request carries a global address, the bus translates it to (unit, local
address) and forwards it. Two layouts (``memory.mapping``):

* ``by_unit`` - unit kinds one after another (accelerators first), each unit of a kind one
  contiguous range of its capacity: unit ``i`` of a kind owns
  ``[base + i * capacity, base + (i + 1) * capacity)``.
* ``interleaved`` - within each kind's region, consecutive granules of
  ``interleave_bytes`` rotate over its units: granule ``g`` lives on unit ``g mod n`` at
  local granule ``g div n`` (the low-order interleave of NUMA and CXL interleave sets).

:func:`region_table` is the closed form per kind (any size); :class:`GranuleMap` is the
explicit table, granule by granule, that membership changes edit
(:mod:`supernode.memory.membership`) and the property tests enumerate.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from supernode.errors import InputError
from supernode.memory.units import MemoryKind


@dataclass(frozen=True)
class Region:
    """One kind's share of the global space (bytes; ``end`` exclusive)."""

    role: str
    name: str
    start: int
    end: int
    units: int
    unit_bytes: int
    layout: str

    def locate(self, address: int, granule_bytes: int) -> tuple[int, int]:
        """(unit index within the kind, local byte address) of a global ``address``."""
        offset = address - self.start
        if self.layout == "by_unit":
            return offset // self.unit_bytes, offset % self.unit_bytes
        granule, within = divmod(offset, granule_bytes)
        return granule % self.units, (granule // self.units) * granule_bytes + within


def region_table(kinds: list[MemoryKind], mapping: str, granule_bytes: int) -> list[Region]:
    """The global map of the kinds that join the global space, in order. Each unit's
    capacity is rounded down to whole granules so every address maps to one granule."""
    regions: list[Region] = []
    start = 0
    for kind in kinds:
        if not kind.global_space:
            continue
        unit_bytes = int(kind.capacity_bytes) // granule_bytes * granule_bytes
        end = start + unit_bytes * kind.count
        regions.append(Region(kind.role, kind.name, start, end, kind.count, unit_bytes,
                              mapping))
        start = end
    return regions


def translate(regions: list[Region], address: int, granule_bytes: int) -> tuple[str, int, int]:
    """(kind role, unit index, local address) of a global ``address``; InputError beyond."""
    for region in regions:
        if region.start <= address < region.end:
            unit, local = region.locate(address, granule_bytes)
            return region.role, unit, local
    top = regions[-1].end if regions else 0
    raise InputError("address", f"{address:#x} is outside the global space [0, {top:#x})")


@dataclass(frozen=True)
class GranuleMap:
    """The explicit map of one version (epoch): granule -> (owner unit, local granule).

    ``capacity[u]`` is unit ``u``'s granule slots (0: the unit is gone); ``owner[g]`` and
    ``local[g]`` say where granule ``g`` of the global space lives.
    """

    epoch: int
    granule_bytes: int
    capacity: tuple[int, ...]
    owner: npt.NDArray[np.int64]
    local: npt.NDArray[np.int64]

    @property
    def granules(self) -> int:
        """Granules in the global space."""
        return int(self.owner.size)

    def resolve(self, address: int) -> tuple[int, int]:
        """(unit, local byte address) of a global byte ``address`` in this version."""
        granule, within = divmod(address, self.granule_bytes)
        if not 0 <= granule < self.granules:
            raise InputError("address", f"{address:#x} is outside the global space")
        return int(self.owner[granule]), int(self.local[granule]) * self.granule_bytes + within

    def used(self) -> npt.NDArray[np.int64]:
        """Granules each unit holds."""
        return np.bincount(self.owner, minlength=len(self.capacity)).astype(np.int64)


def build_map(capacity: list[int], used: list[int], mapping: str,
              granule_bytes: int = 4096) -> GranuleMap:
    """Epoch-0 map of ``sum(used)`` granules over units with ``capacity[u]`` slots, unit
    ``u`` holding ``used[u]`` of them (its low local slots): ``by_unit`` contiguously,
    ``interleaved`` round-robin over the units that still have data to place."""
    if len(capacity) != len(used) or any(u > c or u < 0 for u, c in zip(used, capacity,
                                                                         strict=True)):
        raise InputError("used", "each unit holds between 0 and its capacity granules")
    if mapping == "by_unit":
        owner = np.repeat(np.arange(len(used), dtype=np.int64), used)
        local = np.concatenate([np.arange(n, dtype=np.int64) for n in used]) if used \
            else np.zeros(0, np.int64)
    elif mapping == "interleaved":
        # round r places granule r of every unit holding more than r
        order = sorted(((r, u) for u, n in enumerate(used) for r in range(n)))
        owner = np.array([u for _, u in order], dtype=np.int64)
        local = np.array([r for r, _ in order], dtype=np.int64)
    else:
        raise InputError("mapping", f"{mapping!r}: one of by_unit, interleaved")
    return GranuleMap(0, granule_bytes, tuple(capacity), owner, local)


def is_bijective(amap: GranuleMap) -> bool:
    """True when every granule has exactly one (unit, local slot), no slot holds two
    granules, and every slot is within its unit's capacity."""
    cap = np.asarray(amap.capacity, dtype=np.int64)
    if amap.granules == 0:
        return True
    if (amap.owner < 0).any() or (amap.owner >= cap.size).any():
        return False
    if (amap.local < 0).any() or (amap.local >= cap[amap.owner]).any():
        return False
    keys = amap.owner * (int(cap.max()) + 1) + amap.local
    return bool(np.unique(keys).size == keys.size)

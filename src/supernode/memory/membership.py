"""Changes of membership: a unit added, removed or failed -> new map, bytes to move, time.

Seed 003 §2.3: the map must follow units as they come and go, or accesses land in the
wrong memory. Global addresses stay fixed; a change rewrites the owner of some granules
(:class:`~supernode.memory.addrmap.GranuleMap`) and bumps the epoch:

* **remove** (planned): the leaving unit's granules are copied to the survivors' free
  slots (most free first), then the unit's capacity is 0.
* **fail**: the same re-homing, but the data is gone from the failed unit: the bytes are
  restored from a replica or checkpoint, not copied from it.
* **add**: the new unit takes ``floor(granules / members)`` granules, each from the
  fullest unit at that moment (the fewest moves that even the load out).

Each change returns the granules that move; the epoch protocol that keeps accesses from
landing on the old owner while they move is :mod:`supernode.memory.epoch`.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

import numpy as np

from supernode.errors import InputError
from supernode.memory.addrmap import GranuleMap


@dataclass(frozen=True)
class Change:
    """A membership change: the new map and what moved (granule indices, old owners)."""

    kind: str                    # add, remove, fail
    unit: int
    before: GranuleMap
    after: GranuleMap
    moved: tuple[int, ...]       # granules whose owner changed

    @property
    def moved_bytes(self) -> int:
        """Bytes that must be copied (remove, add) or restored (fail)."""
        return len(self.moved) * self.after.granule_bytes


def _free_slots(amap: GranuleMap, unit: int) -> list[int]:
    taken = set(amap.local[amap.owner == unit].tolist())
    return [s for s in range(amap.capacity[unit]) if s not in taken]


def _rehome(amap: GranuleMap, unit: int, kind: str) -> Change:
    if not 0 <= unit < len(amap.capacity) or amap.capacity[unit] == 0:
        raise InputError("unit", f"unit {unit} is not a member (members: "
                         f"{[u for u, c in enumerate(amap.capacity) if c]})")
    moving = np.flatnonzero(amap.owner == unit)
    free = {u: _free_slots(amap, u) for u, c in enumerate(amap.capacity) if c and u != unit}
    if sum(len(v) for v in free.values()) < moving.size:
        raise InputError("unit", f"the survivors have {sum(len(v) for v in free.values())}"
                         f" free granules, unit {unit} holds {moving.size}: no room")
    owner, local = amap.owner.copy(), amap.local.copy()
    heap = [(-len(slots), u) for u, slots in free.items() if slots]
    heapq.heapify(heap)
    for granule in moving.tolist():
        count, target = heapq.heappop(heap)
        owner[granule], local[granule] = target, free[target].pop(0)
        if count + 1 < 0:
            heapq.heappush(heap, (count + 1, target))
    capacity = tuple(0 if u == unit else c for u, c in enumerate(amap.capacity))
    after = GranuleMap(amap.epoch + 1, amap.granule_bytes, capacity, owner, local)
    return Change(kind, unit, amap, after, tuple(moving.tolist()))


def remove_unit(amap: GranuleMap, unit: int) -> Change:
    """Planned removal: ``unit``'s granules are copied to the survivors' free slots."""
    return _rehome(amap, unit, "remove")


def fail_unit(amap: GranuleMap, unit: int) -> Change:
    """Failure: ``unit``'s granules are re-homed like a removal and restored from replicas."""
    return _rehome(amap, unit, "fail")


def add_unit(amap: GranuleMap, capacity: int) -> Change:
    """A new unit of ``capacity`` granule slots joins; it takes ``floor(granules /
    members)`` granules (or what fits), each from the unit holding the most at that moment
    (its highest local slot): the fewest moves that even the load out."""
    if capacity < 1:
        raise InputError("capacity", f"a new unit brings at least 1 granule, got {capacity}")
    new = len(amap.capacity)
    members = sum(1 for c in amap.capacity if c) + 1
    target = min(capacity, amap.granules // members)
    owner, local = amap.owner.copy(), amap.local.copy()
    held = {u: sorted(np.flatnonzero(owner == u).tolist(), key=lambda g: int(local[g]))
            for u, c in enumerate(amap.capacity) if c}
    moved: list[int] = []
    for slot in range(target):
        donor = max(held, key=lambda u: (len(held[u]), -u))
        granule = held[donor].pop()
        owner[granule], local[granule] = new, slot
        moved.append(granule)
    after = GranuleMap(amap.epoch + 1, amap.granule_bytes, (*amap.capacity, capacity),
                       owner, local)
    return Change("add", new, amap, after, tuple(sorted(moved)))


def move_time_s(moved_bytes: float, source_bytes_per_s: float, sink_bytes_per_s: float,
                sources: int, sinks: int) -> float:
    """Seconds to move ``moved_bytes`` over the fabric when ``sources`` units send at
    ``source_bytes_per_s`` each and ``sinks`` receive at ``sink_bytes_per_s`` each: the
    slower side's aggregate bandwidth bounds it (a non-blocking domain)."""
    rate = min(sources * source_bytes_per_s, sinks * sink_bytes_per_s)
    return moved_bytes / rate if rate > 0 else float("inf")

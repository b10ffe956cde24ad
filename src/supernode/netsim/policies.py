"""Routing policies: how a flow picks among equal-cost next hops (a registry: extension
points, docs/architecture.md).

At every hop the router offers the candidate links that keep a flow on a shortest path
(their capacities in bytes/s, their current load as a utilisation) and the flows' 64-bit
keys; a policy answers which candidate(s) each flow takes and with what share of its bytes:

* ``ecmp``: one link per flow, by a deterministic hash of the flow key and the node,
  weighted by link capacity (a bundle of 4 links draws 4 times as often as one link);
  the same key always takes the same path, so collisions are reproducible per seed.
* ``spray``: every flow is split over all candidates in proportion to capacity (packet
  spraying, NVLink striping over switch planes); the ideal load balance.
* ``adaptive``: least-loaded choice, flow by flow, counting the flows active on each
  candidate when the transfer starts and those already placed in the same batch (per
  byte/s of capacity); flowlet-level adaptive routing.

Register another with ``ROUTING_POLICIES.register(name, policy)``; a taken name is refused.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from supernode.topology.registry import Registry

_MASK = np.uint64(0xFFFFFFFFFFFFFFFF)


def mix64(values: np.ndarray) -> np.ndarray:
    """SplitMix64 finaliser over uint64 arrays (a bijection; wraps modulo 2**64)."""
    z = np.asarray(values, dtype=np.uint64).copy()
    with np.errstate(over="ignore"):
        z = (z + np.uint64(0x9E3779B97F4A7C15)) & _MASK
        z = ((z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)) & _MASK
        z = ((z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)) & _MASK
    return z ^ (z >> np.uint64(31))


def flow_keys(seed: int, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """64-bit flow keys of (source, destination) accelerator pairs under ``seed``.

    The key depends on the pair only (a persistent connection), so every collective
    between the same two ranks takes the same ECMP path.
    """
    s = mix64(np.full(np.shape(src), seed, dtype=np.uint64))
    with np.errstate(over="ignore"):
        a = mix64(s ^ np.asarray(src, dtype=np.uint64))
        return mix64(a ^ (np.asarray(dst, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)))


def unit_draw(keys: np.ndarray, salt) -> np.ndarray:
    """A uniform number in [0, 1) per key, independent for each ``salt`` (a node; scalar
    or one per key)."""
    salts = mix64(np.atleast_1d(np.asarray(salt, dtype=np.uint64)))
    with np.errstate(over="ignore"):
        h = mix64(keys ^ (salts if salts.size == keys.size else salts[0]))
    return (h >> np.uint64(11)).astype(np.float64) * 2.0**-53


def group_totals(ptr: np.ndarray, capacity: np.ndarray) -> np.ndarray:
    """Total candidate capacity of each group (CSR ``ptr`` over ``capacity``)."""
    return np.add.reduceat(capacity, ptr[:-1]) if capacity.size else np.zeros(ptr.size - 1)


def loop_assign(policy, ptr, capacity, load, keys, group, salt):
    """``assign_many`` by calling ``policy.assign`` group by group (any policy)."""
    order = np.argsort(group, kind="stable")
    cuts = np.searchsorted(group[order], np.arange(ptr.size))
    flows, cands, shares = [], [], []
    for g in range(ptr.size - 1):
        idx = order[cuts[g]:cuts[g + 1]]
        if idx.size == 0:
            continue
        a, b = ptr[g], ptr[g + 1]
        f, c, share = policy.assign(capacity[a:b], load[a:b], keys[idx], int(salt[g]))
        flows.append(idx[f])
        cands.append(a + c)
        shares.append(share)
    return np.concatenate(flows), np.concatenate(cands), np.concatenate(shares)


class RoutingPolicy(Protocol):
    """Choose next hops for ``k`` flows among ``D`` candidate links at one node."""

    name: str

    def assign(self, capacity: np.ndarray, load: np.ndarray, keys: np.ndarray,
               salt: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Return ``(flow, candidate, share)`` triples; shares of each flow sum to 1.

        ``capacity``: bytes/s of each candidate; ``load``: flows already on it per byte/s
        of its capacity;
        ``keys``: uint64 flow keys; ``salt``: an integer naming the node.
        """
        ...

    def assign_many(self, ptr: np.ndarray, capacity: np.ndarray, load: np.ndarray,
                    keys: np.ndarray, group: np.ndarray, salt: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`assign` for many groups at once: group ``g`` has candidates
        ``ptr[g]:ptr[g+1]`` of the flat arrays; flow ``i`` belongs to ``group[i]``;
        ``salt[g]`` names group ``g``'s node. Candidates returned are flat indices.
        (:func:`loop_assign` implements it from :meth:`assign`.)"""
        ...


class Ecmp:
    """Hash each flow onto one candidate, weighted by capacity (deterministic)."""

    name = "ecmp"

    def assign(self, capacity, load, keys, salt):
        """One candidate per flow by a weighted hash (see the module docstring)."""
        k = keys.size
        if capacity.size == 1:
            return np.arange(k), np.zeros(k, dtype=np.int64), np.ones(k)
        cum = np.cumsum(capacity) / capacity.sum()
        pick = np.searchsorted(cum, unit_draw(keys, salt), side="right")
        return np.arange(k), np.minimum(pick, capacity.size - 1), np.ones(k)

    def assign_many(self, ptr, capacity, load, keys, group, salt):
        """Vectorised :meth:`assign` over groups (one weighted hash per flow)."""
        sizes = np.diff(ptr)
        total = group_totals(ptr, capacity)
        before = np.cumsum(capacity) - capacity
        start = np.repeat(before[ptr[:-1]] if capacity.size else before, sizes)
        within = (np.cumsum(capacity) - start) / np.repeat(total, sizes)
        level = np.repeat(np.arange(sizes.size, dtype=float), sizes) + within
        draw = group + unit_draw(keys, salt[group])
        pick = np.searchsorted(level, draw, side="right")
        pick = np.minimum(pick, ptr[group + 1] - 1)
        return np.arange(keys.size), pick, np.ones(keys.size)


class Spray:
    """Split every flow over all candidates in proportion to capacity."""

    name = "spray"

    def assign(self, capacity, load, keys, salt):
        """Every flow on every candidate, share = capacity / total capacity."""
        k, d = keys.size, capacity.size
        share = capacity / capacity.sum()
        return np.repeat(np.arange(k), d), np.tile(np.arange(d), k), np.tile(share, k)

    def assign_many(self, ptr, capacity, load, keys, group, salt):
        """Vectorised :meth:`assign`: every flow on every candidate of its group."""
        sizes = np.diff(ptr)
        total = group_totals(ptr, capacity)
        per_flow = sizes[group]
        flows = np.repeat(np.arange(keys.size), per_flow)
        offset = np.arange(flows.size) - np.repeat(np.cumsum(per_flow) - per_flow, per_flow)
        cand = np.repeat(ptr[group], per_flow) + offset
        return flows, cand, capacity[cand] / total[group[flows]]


class Adaptive:
    """Least-loaded candidate per flow, placing flows one by one (ties by hash order)."""

    name = "adaptive"

    def assign(self, capacity, load, keys, salt):
        """Greedy: each flow takes the candidate with the fewest flows per byte/s."""
        k = keys.size
        order = np.argsort(unit_draw(keys, salt), kind="stable")
        level = np.asarray(load, dtype=float).copy()
        unit = 1.0 / capacity  # one more flow on a link, per byte/s of it
        pick = np.empty(k, dtype=np.int64)
        for i in order.tolist():
            j = int(np.argmin(level))
            pick[i] = j
            level[j] += unit[j]
        return np.arange(k), pick, np.ones(k)

    def assign_many(self, ptr, capacity, load, keys, group, salt):
        """:meth:`assign` for every group at once, in rounds: round ``r`` places the
        ``r``-th flow (in hash order) of every group on its group's least-loaded
        candidate (the first of equals), then counts it there; the same picks as group by
        group, with one pass over the candidates per round instead of one call per group."""
        by_rank, cuts = rank_rounds(group, unit_draw(keys, salt[group]), ptr.size - 1)
        level = np.asarray(load, dtype=float).copy()
        unit = 1.0 / np.asarray(capacity, dtype=float)
        pick = np.empty(keys.size, dtype=np.int64)
        for r in range(cuts.size - 1):
            flows = by_rank[cuts[r]:cuts[r + 1]]
            chosen = first_minimum(ptr, level, group[flows])
            pick[flows] = chosen
            level[chosen] += unit[chosen]  # one flow per group a round: no repeats
        return np.arange(keys.size), pick, np.ones(keys.size)


def rank_rounds(group: np.ndarray, draw: np.ndarray, groups: int
                ) -> tuple[np.ndarray, np.ndarray]:
    """Flows in the order :class:`Adaptive` places them: ``(by_rank, cuts)`` where round
    ``r`` is ``by_rank[cuts[r]:cuts[r + 1]]``, the ``r``-th flow of every group (of
    ``groups``) by ``draw`` (ties by flow order), groups in ascending order."""
    order = np.lexsort((draw, group))
    counts = np.bincount(group, minlength=groups)
    starts = np.cumsum(counts) - counts
    rank = np.empty(group.size, dtype=np.int64)
    rank[order] = np.arange(group.size) - starts[group[order]]
    by_rank = np.argsort(rank, kind="stable")
    cuts = np.searchsorted(rank[by_rank], np.arange(int(counts.max(initial=0)) + 1))
    return by_rank, cuts


def least_loaded(level: np.ndarray, unit: np.ndarray, row: np.ndarray,
                 by_rank: np.ndarray, cuts: np.ndarray) -> np.ndarray:
    """:meth:`Adaptive.assign_many` on a padded matrix: flow ``i`` chooses among the
    columns of row ``row[i]`` of ``level`` (flows per byte/s of each candidate; pads
    ``inf``, after the real ones) in the rounds of :func:`rank_rounds`, takes the first
    smallest and adds ``unit`` (1 / its bytes/s) there. Returns each flow's column: the
    walk's picks, the levels summed in the same order."""
    col = _least_loaded_by_slots(level, unit, row, by_rank, cuts)
    if col is not None:
        return col
    level = level.copy()
    col = np.empty(row.size, dtype=np.int64)
    for r in range(cuts.size - 1):
        flows = by_rank[cuts[r]:cuts[r + 1]]
        rows = row[flows]  # one flow per row a round: no repeats
        chosen = np.argmin(level[rows], axis=1)
        col[flows] = chosen
        level[rows, chosen] += unit[rows, chosen]
    return col


#: Most slots per candidate :func:`least_loaded` sorts instead of placing round by round.
MAX_SLOTS = 8


def _least_loaded_by_slots(level: np.ndarray, unit: np.ndarray, row: np.ndarray,
                           by_rank: np.ndarray, cuts: np.ndarray) -> np.ndarray | None:
    """:func:`least_loaded` without rounds, or None where it does not apply.

    Candidate ``j`` of a row offers the levels ``L_j, L_j + u_j, (L_j + u_j) + u_j ...``
    (its *slots*, summed one by one as the rounds sum them); placing the row's ``k``
    flows one by one on the first least-loaded candidate takes exactly the ``k`` smallest
    slots, in the order of ``(level, candidate, slot)`` (a merge of sorted lists). Every
    slot at most the ``k``-th smallest of the first slots is generated (at most
    :data:`MAX_SLOTS` per candidate, else None) and one stable sort orders them."""
    rows, width = level.shape
    counts = np.bincount(row, minlength=rows)
    rounds = cuts.size - 1
    if rounds > width:
        return None
    bound = np.sort(level, axis=1)[np.arange(rows), counts - 1]
    if not np.all(np.isfinite(bound)):
        return None
    with np.errstate(invalid="ignore"):
        need = np.floor((bound[:, None] - level) / unit)
    slots = int(min(np.nanmax(need, initial=0.0) + 2, rounds))
    if slots > MAX_SLOTS:
        return None
    value = np.empty((rows, width, slots))
    value[:, :, 0] = level
    value[:, :, 1:] = unit[:, :, None]
    np.add.accumulate(value, axis=2, out=value)
    if slots < rounds and np.any(value[:, :, -1] <= bound[:, None]):
        return None  # a slot under the bound was not generated
    value[value > bound[:, None, None]] = np.inf
    order = np.argsort(value.reshape(rows, width * slots), axis=1, kind="stable")
    col = np.empty(row.size, dtype=np.int64)
    col[by_rank] = order[row[by_rank], np.repeat(np.arange(rounds), np.diff(cuts))] // slots
    return col


def first_minimum(ptr: np.ndarray, values: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """Flat index of the first smallest of ``values[ptr[g]:ptr[g+1]]`` for each ``g`` of
    ``groups`` (each such group non-empty): ``np.argmin`` per group, all at once."""
    if groups.size == 0:
        return np.zeros(0, dtype=np.int64)
    sizes = np.diff(ptr)
    owner = np.repeat(np.arange(sizes.size), sizes)
    lowest = np.full(sizes.size, np.inf)
    np.minimum.at(lowest, owner, values)
    index = np.where(values == lowest[owner], np.arange(values.size), values.size)
    first = np.full(sizes.size, values.size)
    np.minimum.at(first, owner, index)
    return first[groups].astype(np.int64)


ROUTING_POLICIES: Registry[RoutingPolicy] = Registry("routing policy")
for _policy in (Ecmp(), Spray(), Adaptive()):
    ROUTING_POLICIES.register(_policy.name, _policy)

"""Placement of pages over units: minimise remote and coherence traffic.

Given an access matrix (reads and writes per second by each unit to each page: KV-cache
pages, embedding shards) and a distance between units (switch hops on the scale-up
fabric: 0 for the unit itself), the cost of homing page ``p`` on unit ``h`` is

    sum_u (reads[u, p] + writes[u, p]) * d(u, h) * data_bytes                 (remote)
  + sum_w writes[w, p] * sum_{s != w, reads[s, p] > 0} 2 * d(h, s) * ctrl_bytes  (coherence)

(the data crosses ``d(u, h)`` hops per access; under invalidation each write makes the
home send an Inv and receive an InvAck from every other reader of the page; byte-hops, as
in the volume-times-distance cost of data placement, e.g. Bokhari, 'On the mapping
problem', IEEE TC 1981). Each unit holds at most ``capacity`` pages. :func:`optimise`
places greedily by regret (the page that loses most from its second-best unit first) and
then swaps pairs while the cost falls; deterministic (ties by index). The baseline is the
interleaved placement (page ``p`` on unit ``p mod n``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from supernode.errors import InputError

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Placement:
    """A placement and its cost against the interleaved baseline (byte-hops per second)."""

    home: tuple[int, ...]
    cost: float
    baseline_cost: float

    @property
    def saving(self) -> float:
        """Share of the baseline's traffic the placement saves."""
        return 1 - self.cost / self.baseline_cost if self.baseline_cost > 0 else 0.0

    def as_dict(self) -> dict[str, object]:
        """JSON form."""
        return {"home": list(self.home), "cost_byte_hops_per_s": self.cost,
                "baseline_byte_hops_per_s": self.baseline_cost, "saving": self.saving}


def cost_matrix(reads: FloatArray, writes: FloatArray, distance: FloatArray,
                data_bytes: float = 144.0, ctrl_bytes: float = 16.0) -> FloatArray:
    """``C[p, h]``: the cost of homing page ``p`` on unit ``h`` (module docstring)."""
    if reads.shape != writes.shape or distance.shape != (reads.shape[0],) * 2:
        raise InputError("access", "reads and writes are units x pages; distance units x "
                                   "units")
    remote = (reads + writes).T @ distance * data_bytes           # pages x units
    readers = (reads > 0).astype(float)                          # units x pages
    # sum_w writes[w,p] * sum_{s != w} readers[s,p] * d(h,s)
    per_home = (readers.T @ distance)                            # pages x homes
    total_writes = writes.sum(axis=0)                            # pages
    self_term = (writes * readers).T @ distance                  # pages x homes (s == w)
    coherence = 2 * ctrl_bytes * (total_writes[:, None] * per_home - self_term)
    return np.asarray(remote + coherence, dtype=np.float64)


def _total(costs: FloatArray, home: list[int]) -> float:
    return float(costs[np.arange(len(home)), home].sum())


def optimise(costs: FloatArray, capacity: int) -> Placement:
    """Regret-greedy placement under ``capacity`` pages per unit, then pairwise swaps."""
    pages, units = costs.shape
    if capacity * units < pages:
        raise InputError("capacity", f"{units} units x {capacity} pages hold fewer than "
                                     f"the {pages} pages")
    order = np.argsort(costs, axis=1, kind="stable")
    regret = costs[np.arange(pages), order[:, min(1, units - 1)]] - costs[np.arange(pages),
                                                                          order[:, 0]]
    load = [0] * units
    home = [-1] * pages
    for p in sorted(range(pages), key=lambda q: (-regret[q], q)):
        for h in order[p]:
            if load[int(h)] < capacity:
                home[p], load[int(h)] = int(h), load[int(h)] + 1
                break
    improved = True
    while improved:
        improved = False
        for a in range(pages):
            for b in range(a + 1, pages):
                ha, hb = home[a], home[b]
                if ha == hb:
                    continue
                delta = costs[a, hb] + costs[b, ha] - costs[a, ha] - costs[b, hb]
                if delta < -1e-9:
                    home[a], home[b] = hb, ha
                    improved = True
            for h in range(units):             # a move into a unit with room
                if load[h] < capacity and costs[a, h] < costs[a, home[a]] - 1e-9:
                    load[home[a]] -= 1
                    load[h] += 1
                    home[a] = h
                    improved = True
    baseline = [p % units for p in range(pages)]
    return Placement(tuple(home), _total(costs, home), _total(costs, baseline))


def kv_cache_example(units: int, pages: int, seed: int, group: int,
                     write_share: float = 0.1) -> tuple[FloatArray, FloatArray, FloatArray]:
    """A seeded KV-cache-like access matrix: each page belongs to one request served by a
    few units (its owner and up to 2 others) that read it often and write it sometimes;
    distances: 0 same unit, 1 same switch group of ``group`` units, 3 across (two-tier
    L1-L2-L1). Returns (reads, writes, distance)."""
    rng = np.random.default_rng(seed)
    reads = np.zeros((units, pages))
    writes = np.zeros((units, pages))
    for p in range(pages):
        users = rng.choice(units, size=min(units, 1 + int(rng.integers(0, 3))), replace=False)
        rate = rng.exponential(1e6)
        for i, u in enumerate(users):
            share = 1.0 if i == 0 else 0.3
            reads[u, p] = rate * share * (1 - write_share)
            writes[u, p] = rate * share * write_share
    ids = np.arange(units)
    same = (ids[:, None] // group) == (ids[None, :] // group)
    distance = np.where(ids[:, None] == ids[None, :], 0.0, np.where(same, 1.0, 3.0))
    return reads, writes, distance

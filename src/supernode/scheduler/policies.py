"""Placement policies behind one protocol, in a registry that refuses duplicate names.

A policy answers one question: given the free GPUs (:class:`~supernode.scheduler.state.
Occupancy`), which GPUs does a job of ``gpus`` GPUs with tensor-parallel size ``tp`` get
now (sorted indices), or ``None`` to wait. Queueing, pre-emption and time live in the
engine (:mod:`supernode.scheduler.engine`).

* ``random``: any free GPUs, uniformly at random (seeded).
* ``first-fit``: the lowest-numbered free GPUs: topology-blind.
* ``node-pack``: Slurm ``select/cons_tres`` without a topology plugin: whole nodes
  lowest-numbered first, a job smaller than a node best-fit on one node; blind to
  supernodes and port groups (:mod:`supernode.scheduler.node_pack`).
* ``best-fit``: topology-aware. A job that fits a supernode goes to the one with the
  fewest free GPUs that holds it; a larger job is cut into equal segments
  (:func:`~supernode.scheduler.segments.segment_size`), each inside one supernode, placed
  in the run of cells that spans the fewest port groups, then supernodes, then leaves the
  least free (best fit); if no run holds them, segments of one TP group.
* ``slurm-block``: Slurm ``topology/block``-like. The same segments, each inside one
  supernode, the whole job inside the smallest aligned aggregate of 2^k blocks that holds
  it; blocks and GPUs taken first-fit.
* ``preempt``: ``best-fit`` placement; a blocked high-priority job may pre-empt
  lower-priority jobs, which stop at their next checkpoint
  (:mod:`supernode.scheduler.preempt`).
"""

from __future__ import annotations

from typing import ClassVar, Protocol, TypeVar

import numpy as np

from supernode.errors import InputError
from supernode.scheduler.node_pack import node_pack
from supernode.scheduler.segments import best_window, fill_order, segment_size
from supernode.scheduler.state import Occupancy


class PlacementPolicy(Protocol):
    """What every placement policy provides."""

    name: ClassVar[str]
    description: ClassVar[str]
    #: True when the engine should ask :meth:`victims` for a blocked job.
    preempts: ClassVar[bool]

    def place(self, gpus: int, tp: int, state: Occupancy,
              rng: np.random.Generator) -> np.ndarray | None:
        """Sorted GPU indices for the job, or None when it must wait."""
        ...


_PolicyClass = TypeVar("_PolicyClass", bound=type[PlacementPolicy])


class PolicyRegistry:
    """Placement policies by name; registering a name twice is an error."""

    def __init__(self) -> None:
        self._policies: dict[str, type[PlacementPolicy]] = {}

    def register(self, policy: _PolicyClass) -> _PolicyClass:
        """Add a policy class (usable as a decorator)."""
        if policy.name in self._policies:
            raise ValueError(f"placement policy {policy.name!r} is already registered")
        self._policies[policy.name] = policy
        return policy

    def names(self) -> list[str]:
        """Registered names, in registration order."""
        return list(self._policies)

    def create(self, name: str, path: str = "--policy") -> PlacementPolicy:
        """A new instance of the policy called ``name``; InputError when unknown."""
        if name not in self._policies:
            raise InputError(path, f"unknown policy {name!r}; known: {', '.join(self._policies)}")
        return self._policies[name]()


POLICIES = PolicyRegistry()


@POLICIES.register
class RandomPolicy:
    """Any free GPUs, drawn uniformly at random."""

    name: ClassVar[str] = "random"
    description: ClassVar[str] = "free GPUs drawn uniformly at random (seeded)"
    preempts: ClassVar[bool] = False

    def place(self, gpus, tp, state, rng):
        """``gpus`` free GPUs drawn without replacement."""
        if gpus > state.total_free:
            return None
        pool = state.free_in(0, state.gpus)
        return np.sort(rng.choice(pool, size=gpus, replace=False))


@POLICIES.register
class FirstFitPolicy:
    """The lowest-numbered free GPUs, blind to the topology."""

    name: ClassVar[str] = "first-fit"
    description: ClassVar[str] = "lowest-numbered free GPUs (topology-blind)"
    preempts: ClassVar[bool] = False

    def place(self, gpus, tp, state, rng):
        """The first ``gpus`` free GPUs in index order."""
        if gpus > state.total_free:
            return None
        return state.first_free(gpus)


@POLICIES.register
class NodePackingPolicy:
    """Slurm without topology: whole nodes lowest-numbered first, best fit on nodes."""

    name: ClassVar[str] = "node-pack"
    description: ClassVar[str] = ("Slurm cons_tres without topology: whole nodes "
                                  "lowest-numbered first, best fit on nodes")
    preempts: ClassVar[bool] = False

    def place(self, gpus, tp, state, rng):
        """See :func:`~supernode.scheduler.node_pack.node_pack`."""
        return node_pack(gpus, state)


@POLICIES.register
class BestFitPolicy:
    """Topology-aware best fit: TP inside a supernode, fewest port groups, least leftover."""

    name: ClassVar[str] = "best-fit"
    description: ClassVar[str] = ("topology-aware: TP inside a supernode, job inside the "
                                  "fewest port groups, least fragmentation")
    preempts: ClassVar[bool] = False

    def place(self, gpus, tp, state, rng):
        """See the module table; None when no TP-respecting placement exists now."""
        if gpus > state.total_free:
            return None
        h = state.hierarchy
        if gpus <= h.domain_size:
            fits = (state.domain_free >= gpus).nonzero()[0]
            if len(fits):
                d = fits[np.argmin(state.domain_free[fits])]
                return state.compact_pick(state.domain_start[d], state.domain_end[d], gpus)
        first = segment_size(gpus, tp, h.domain_size, h.domains) if gpus > h.domain_size else tp
        for seg in dict.fromkeys((first, tp)):
            chosen = place_segments(state, gpus, seg)
            if chosen is not None:
                return chosen
        return None


def place_segments(state: Occupancy, gpus: int, seg: int) -> np.ndarray | None:
    """``gpus / seg`` segments of ``seg`` GPUs, each inside one domain: first in a run of
    cells inside one port group, else in a run of whole domains (:func:`best_window`)."""
    needed = gpus // seg
    cap = state.cell_free // seg
    window = best_window(cap, state.cell_free, state.cell_group, state.cell_group,
                         state.cell_domain, needed, one_group=True)
    if window is not None:
        return _take_segments(state, window, cap, state.cell_free, state.cell_start,
                              state.cell_end, seg, needed)
    cap = state.domain_free // seg
    lo, hi = state.domain_start, state.domain_end
    window = best_window(cap, state.domain_free, state.gpu_group[lo], state.gpu_group[hi - 1],
                         np.arange(len(cap)), needed, one_group=False)
    if window is None:
        return None
    return _take_segments(state, window, cap, state.domain_free, lo, hi, seg, needed)


def _take_segments(state, window, cap, free, starts, ends, seg, needed) -> np.ndarray:
    a, b = window
    picks, left = [], needed
    for offset in fill_order(cap[a:b], free[a:b]):
        if left == 0:
            break
        u = a + int(offset)
        k = min(int(cap[u]), left)
        if k:
            picks.append(state.compact_pick(int(starts[u]), int(ends[u]), k * seg))
            left -= k
    return np.sort(np.concatenate(picks))


@POLICIES.register
class SlurmBlockPolicy:
    """Slurm topology/block-like: segments in blocks, the job in the smallest aggregate."""

    name: ClassVar[str] = "slurm-block"
    description: ClassVar[str] = ("Slurm topology/block-like: segments inside supernodes, job "
                                  "inside the smallest aligned 2^k-block aggregate, first-fit")
    preempts: ClassVar[bool] = False

    def place(self, gpus, tp, state, rng):
        """First-fit segments inside the smallest aligned block aggregate that holds them."""
        if gpus > state.total_free:
            return None
        h = state.hierarchy
        if gpus <= h.domain_size:          # one segment: the first domain that holds it
            fits = state.domain_free >= gpus
            d = int(np.argmax(fits))
            if not fits[d]:
                return None
            return state.free_in(int(state.domain_start[d]), int(state.domain_end[d]))[:gpus]
        seg = segment_size(gpus, tp, h.domain_size, h.domains)
        needed = gpus // seg
        cap = state.domain_free // seg
        if int(cap.sum()) < needed:
            return None
        block = state.domain_block
        level = 0
        while True:
            aggregate = block >> level
            totals = np.bincount(aggregate, weights=cap)
            fits = (totals >= needed).nonzero()[0]
            if len(fits):
                return _first_fit_segments(state, (aggregate == fits[0]).nonzero()[0], cap,
                                           seg, needed)
            if (1 << level) >= h.blocks:
                return None
            level += 1


def _first_fit_segments(state, domains, cap, seg, needed) -> np.ndarray:
    picks, left = [], needed
    for d in domains:
        k = min(int(cap[d]), left)
        if k:
            picks.append(state.free_in(int(state.domain_start[d]),
                                       int(state.domain_end[d]))[: k * seg])
            left -= k
        if left == 0:
            break
    return np.sort(np.concatenate(picks))

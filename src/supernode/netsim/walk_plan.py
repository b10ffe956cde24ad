"""Adaptive walks over a remembered table of states: the fast path of load-aware routing.

:func:`supernode.netsim.subgraph.walk` groups the flows at every hop by ``(node, target)``,
asks the shape for each group's candidate arcs and the policy for each flow's choice. Under
the ``adaptive`` policy the same pair list is routed again at every transfer (the choices
follow the link load), but what its walk can meet does not change: a :class:`WalkPlan`
lists, hop by hop, every state ``(node, target)`` a flow of the list can reach, its
candidate arcs as the rows of a padded matrix, the state each candidate leads to and the
latency of that step. Routing the list again (:func:`adaptive_walk`) is then, per hop, one
least-loaded choice over those rows (:func:`supernode.netsim.policies.least_loaded`), with
no grouping, candidate enumeration or search.

The answer is the walk's under :class:`~supernode.netsim.policies.Adaptive`, bit for bit:
the same flows in the same order, the same arcs and latencies (the states are numbered in
the walk's group order, ties break by the same hash order, levels are summed in the same
order); ``tests/test_netsim_walk_plan.py`` holds the two to it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from supernode.errors import InputError
from supernode.netsim.policies import least_loaded, rank_rounds, unit_draw
from supernode.netsim.subgraph import LocalShape, Walk

#: The walk's messages, word for word (the fast path fails exactly where it does).
NO_ROUTE = ("no route left between two accelerators (failed links or switches disconnect "
            "them)")
NO_CONVERGENCE = "a route did not converge (loop in the topology?)"


@dataclass(frozen=True)
class HopStates:
    """The states flows can be in at one hop (``S`` states, at most ``D`` candidates).

    ``node``: local node of each state (the policy's salt); ``arcs``: candidate local arcs
    (``S x D``, -1 pads the row); ``width``: real candidates per state; ``after``: state at
    the next hop once a candidate is taken (-1: the flow has arrived, or a pad);
    ``step_s``: latency of that step in seconds (the arc, plus the node it enters unless
    it is the target); ``padded``: some row has pads; ``gaps``: some state has no
    candidate (a flow that reaches it has no route); ``arrives``: some candidate ends a
    flow's walk.
    """

    node: np.ndarray
    arcs: np.ndarray
    width: np.ndarray
    after: np.ndarray
    step_s: np.ndarray
    padded: bool
    gaps: bool
    arrives: bool


@dataclass(frozen=True)
class Rounds:
    """How the flows of one hop share their states' rows: ``row`` of each flow among the
    ``present`` states, the placing order (:func:`~supernode.netsim.policies.rank_rounds`)
    and ``unit``: 1 / bytes/s of each candidate of those rows (1 on pads)."""

    present: np.ndarray
    row: np.ndarray
    by_rank: np.ndarray
    cuts: np.ndarray
    unit: np.ndarray


@dataclass(frozen=True)
class WalkPlan:
    """Every state one pair list can meet, hop by hop.

    ``start``: each flow's state at the first hop (-1: source is the target, no hop);
    ``keys``: the flows' keys; ``hops``: the :class:`HopStates` of each hop;
    ``unfinished``: states remained after ``n + 1`` hops (a flow that gets that far has
    looped: the walk's error); ``first``: the :class:`Rounds` of the first hop, where
    every flow's state is known (None where one flow per state leaves no order to keep).
    """

    start: np.ndarray
    keys: np.ndarray
    hops: list[HopStates]
    unfinished: bool
    first: Rounds | None


def build_plan(shape: LocalShape, src: np.ndarray, dst: np.ndarray,
               keys: np.ndarray) -> WalkPlan:
    """The :class:`WalkPlan` of flows ``src[i] -> dst[i]`` (local ids) with flow keys
    ``keys`` on ``shape`` (a :class:`LocalShape` or anything with its arrays and
    ``candidate_table``)."""
    n = shape.n
    src, dst = np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64)
    moving = src != dst
    states = np.unique(src[moving] * n + dst[moving])
    start = np.full(src.size, -1, dtype=np.int64)
    start[moving] = np.searchsorted(states, src[moving] * n + dst[moving])
    hops: list[HopStates] = []
    for _hop in range(n + 1):
        if states.size == 0:
            break
        hop, states = _hop_states(shape, states)
        hops.append(hop)
    first = None
    if hops:
        first = _rounds(hops[0], start[moving], keys[moving], shape.arc_cap)
    return WalkPlan(start, keys, hops, states.size > 0, first)


def _hop_states(shape: LocalShape, keys: np.ndarray) -> tuple[HopStates, np.ndarray]:
    """The states of sorted ``u * n + t`` keys and the sorted keys of the next hop."""
    n = shape.n
    ptr, arcs = shape.candidate_table(keys)
    width = np.diff(ptr)
    rows = np.repeat(np.arange(keys.size), width)
    cols = np.arange(arcs.size) - ptr[rows]
    target = keys[rows] % n
    head = shape.arc_head[arcs]
    arrived = head == target
    step_s = shape.arc_latency_s[arcs] + np.where(arrived, 0.0, shape.node_latency_s[head])
    ahead = head * n + target
    following = np.unique(ahead[~arrived])
    after = np.where(arrived, -1, np.searchsorted(following, ahead))
    shape2d = (keys.size, max(int(width.max(initial=0)), 1))
    table = [np.full(shape2d, fill, dtype=kind)
             for fill, kind in ((-1, np.int64), (-1, np.int64), (0.0, np.float64))]
    for out, values in zip(table, (arcs, after, step_s), strict=True):
        out[rows, cols] = values
    padded = bool(np.any(width < shape2d[1]))
    return (HopStates(keys // n, table[0], width, table[1], table[2], padded,
                      bool(np.any(width == 0)), bool(arrived.any())), following)


def adaptive_walk(plan: WalkPlan, arc_capacity: np.ndarray,
                  arc_load: Callable[[np.ndarray], np.ndarray]) -> Walk:
    """Route the plan's flows least-loaded first, as
    :func:`~supernode.netsim.subgraph.walk` does under ``adaptive``.

    ``arc_capacity``: bytes/s of every local arc; ``arc_load(arcs)``: flows per byte/s now
    on the given local arcs (asked only for the candidates of states some flow is in).
    Raises :class:`InputError` where the walk does.
    """
    moving = np.flatnonzero(plan.start >= 0)
    state, elapsed_s = plan.start[moving], np.zeros(moving.size)
    latency_s = np.zeros(plan.start.size)
    flows, arcs = [], []
    rounds = plan.first
    for hop in plan.hops:
        if moving.size == 0:
            break
        if hop.gaps and np.any(hop.width[state] == 0):
            raise InputError("routing", NO_ROUTE)
        at = state * hop.arcs.shape[1]
        if hop.arcs.shape[1] > 1:
            at += _choose(hop, state, plan.keys[moving], arc_capacity, arc_load, rounds)
        flows.append(moving)
        arcs.append(hop.arcs.ravel()[at])
        elapsed_s = elapsed_s + hop.step_s.ravel()[at]
        state = hop.after.ravel()[at]
        rounds = None
        done = state < 0
        if hop.arrives and done.any():
            latency_s[moving[done]] = np.maximum(latency_s[moving[done]], elapsed_s[done])
            going = ~done
            moving, state, elapsed_s = moving[going], state[going], elapsed_s[going]
    if moving.size:
        raise InputError("routing", NO_CONVERGENCE)
    if not flows:
        empty = np.zeros(0, dtype=np.int64)
        return Walk(empty, empty, np.zeros(0), latency_s)
    flow = np.concatenate(flows)
    return Walk(flow, np.concatenate(arcs), np.ones(flow.size), latency_s)


def _levels(hop: HopStates, rows: np.ndarray,
            arc_load: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """Flows per byte/s of the candidates of states ``rows`` (``inf`` on pads)."""
    arcs = hop.arcs[rows]
    if not hop.padded:
        return arc_load(arcs)
    real = arcs >= 0
    level = np.full(arcs.shape, np.inf)
    level[real] = arc_load(arcs[real])
    return level


def _rounds(hop: HopStates, state: np.ndarray, keys: np.ndarray,
            arc_capacity: np.ndarray) -> Rounds | None:
    """The :class:`Rounds` of flows in states ``state`` (None: one flow per state)."""
    present, row = np.unique(state, return_inverse=True)
    if present.size == state.size:
        return None
    arcs = hop.arcs[present]
    unit = np.ones(arcs.shape)
    real = arcs >= 0
    unit[real] = 1.0 / arc_capacity[arcs[real]]
    by_rank, cuts = rank_rounds(row, unit_draw(keys, hop.node[state]), present.size)
    return Rounds(present, row, by_rank, cuts, unit)


def _choose(hop: HopStates, state: np.ndarray, keys: np.ndarray, arc_capacity: np.ndarray,
            arc_load: Callable[[np.ndarray], np.ndarray], known: Rounds | None
            ) -> np.ndarray:
    """Column of the candidate each flow takes (flows in state ``state``; ``known``: their
    :class:`Rounds` when the plan has them)."""
    if known is None:
        if np.bincount(state).max() == 1:  # one flow per state: the first least loaded
            return np.argmin(_levels(hop, state, arc_load), axis=1)
        known = _rounds(hop, state, keys, arc_capacity)
        assert known is not None  # some state holds two flows
    level = _levels(hop, known.present, arc_load)
    return least_loaded(level, known.unit, known.row, known.by_rank, known.cuts)

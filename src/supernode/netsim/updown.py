"""Closed-form up/down routing on fat trees: equal-cost next hops enumerated per tier.

On a fat tree the shortest paths between two leaves are the up/down paths, so the
candidates at each hop follow from the structure alone, with no shortest-path search
(the search costs ``targets x links``, which grows as the square of the cluster). Tiers:
leaves (0), tier-1 switches (``spine``: the spines of two tiers, the aggregation switches
of a pod in three), cores (2). A *pod* is a connected set of leaves and tier-1 switches.
A tier-1 switch *reaches* pod ``P`` when one of its uplinks goes to a core with a link
down into ``P``.

:func:`fat_tree_shape` accepts a fabric whose usable links have the structure below and
otherwise answers None (the router then searches shortest paths, as for any irregular
topology; a failed link inside a pod is one):

1. every link joins adjacent tiers, every node is a switch;
2. in each pod, every leaf has a link up to and down from every tier-1 switch;
3. for every two pods with leaves, some tier-1 switch of the first reaches the second.

A failed switch leaves these intact in a regular tree (it just leaves the subgraph).
Toward a target leaf ``t`` of pod ``P`` (hops to ``t`` in brackets):

* a leaf in ``P`` [2]: every uplink; in another pod [4]: the uplinks to tier-1 switches
  that reach ``P``;
* a tier-1 switch of ``P`` [1]: the link down to ``t``;
* a tier-1 switch of another pod that reaches ``P`` [3]: its uplinks to cores reaching ``P``;
* a core reaching ``P`` [2]: its links down into ``P``.

These are exactly the arcs to a neighbour one hop closer to ``t`` (what the search
finds): by (2) every tier-1 switch of ``P`` is 1 hop from ``t``, so a core reaching ``P``
is 2 and a tier-1 switch reaching it 3; by (3) every leaf elsewhere is 4; distances from a
leaf to a leaf are even and from a tier-1 switch odd, so a tier-1 switch not reaching ``P``
is at least 5 and a detour down through a leaf costs 2 more hops. Candidates come in the
search's order (ascending local arc), so every policy picks exactly as before. Pairs the
closed form does not cover (a target that is not a leaf, a node no shortest path from a
leaf visits) go to the search.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from supernode.netsim.subgraph import LocalShape, expand_ranges, merge_tables
from supernode.topology.graph import SWITCH_TIERS

#: Fat-tree level of each switch tier (scale-up switches have none).
LEVELS = {"leaf": 0, "spine": 1, "core": 2}


@dataclass
class UpDownShape:
    """A fabric :class:`LocalShape` whose candidates come from the closed form.

    Per local node: ``level``, ``pod`` (-1 for cores) and ``reached[v, p]``: how many
    arcs of ``v`` lead toward pod ``p`` through a core (a tier-1 switch's uplinks to cores
    reaching ``p``; a core's links down into ``p``). ``runs`` (:class:`Runs`) gives
    candidate sets as one run of arcs where the layout allows.
    """

    base: LocalShape
    level: np.ndarray
    pod: np.ndarray
    reached: np.ndarray
    runs: Runs | None = None

    def __getattr__(self, name: str):
        """Arc and node arrays (``n``, ``indptr``, ``arc_head`` ...) are the base shape's."""
        if name == "base":
            raise AttributeError(name)
        return getattr(self.base, name)

    def covered(self, u: np.ndarray, t: np.ndarray) -> np.ndarray:
        """Pairs the closed form answers: a leaf target, and ``u`` a leaf, a tier-1
        switch of ``t``'s pod, or a switch reaching it."""
        pod_t = self.pod[t]
        ok = (self.level[t] == 0) & (u != t)
        far = ok & (self.level[u] > 0) & (self.pod[u] != pod_t)
        ok[far] = self.reached[u[far], pod_t[far]] > 0
        return ok

    def candidate_table(self, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Candidates of ``u * n + t`` keys as CSR ``(ptr, arcs)`` (local arc ids): runs
        of arcs where :class:`Runs` applies, the per-arc rule of the module docstring
        elsewhere, the search for pairs the closed form does not cover."""
        n = self.base.n
        u, t = keys // n, keys % n
        covered = self.covered(u, t)
        closed = np.flatnonzero(covered)
        lo, hi = (self.runs.bounds(self, u[closed], t[closed]) if self.runs is not None
                  else (np.full(closed.size, -1), np.full(closed.size, -1)))
        run = lo >= 0
        parts = [(closed[run], hi[run] - lo[run], expand_ranges(lo[run], hi[run] - lo[run]))]
        masked = closed[~run]
        if masked.size:
            sizes, arcs = self.masked_table(u[masked], t[masked])
            parts.append((masked, sizes, arcs))
        rest = np.flatnonzero(~covered)
        if rest.size:
            ptr_rest, arcs_rest = self.base.candidate_table(keys[rest])
            parts.append((rest, np.diff(ptr_rest), arcs_rest))
        return merge_tables(keys.size, *parts)

    def masked_table(self, u: np.ndarray, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Candidates of covered pairs by testing every arc of ``u`` (sizes, flat arcs)."""
        base = self.base
        lo = base.indptr[u]
        deg = base.indptr[u + 1] - lo
        arcs = expand_ranges(lo, deg)
        owner = np.repeat(np.arange(u.size), deg)
        ok = self._keep(u[owner], t[owner], base.arc_head[arcs])
        return np.bincount(owner[ok], minlength=u.size), arcs[ok]

    def _keep(self, u: np.ndarray, t: np.ndarray, head: np.ndarray) -> np.ndarray:
        """Which arcs ``u -> head`` are candidates toward leaf ``t`` (see the module doc)."""
        lu, lh, pod_t = self.level[u], self.level[head], self.pod[t]
        home = self.pod[u] == pod_t
        toward = self.reached[head, pod_t] > 0  # a tier-1 switch (or a core) reaching P
        at_leaf = home | toward
        at_tier1 = np.where(home, head == t, (lh == 2) & toward)
        at_core = (lh == 1) & (self.pod[head] == pod_t)
        return np.where(lu == 0, at_leaf, np.where(lu == 1, at_tier1, at_core))


@dataclass
class Runs:
    """Candidate sets as runs ``[lo, hi)`` of arcs (arcs sorted by tail, then head).

    At a leaf toward its own pod, or a pod every tier-1 switch of its own reaches
    (``pod_full``): all its arcs. At a tier-1 switch of the target's pod: the one arc to the
    target (binary search on ``arc_key = tail * n + head``). At another tier-1 switch all
    of whose core arcs reach the target's pod: its core arcs, the last of its row (from
    ``core_start``). At a core: its arcs into the target's pod, one run when each core's
    arcs go to pods in order (``run_lo``/``run_hi`` by node and pod, else None).
    """

    arc_key: np.ndarray
    core_start: np.ndarray
    ups: np.ndarray
    pod_full: np.ndarray
    run_lo: np.ndarray | None
    run_hi: np.ndarray | None

    def bounds(self, shape: UpDownShape, u: np.ndarray, t: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray]:
        """``(lo, hi)`` per covered pair; -1 where no single run applies."""
        indptr, level, pod = shape.base.indptr, shape.level[u], shape.pod
        pod_t = pod[t]
        lo, hi = np.full(u.size, -1), np.full(u.size, -1)
        home = pod[u] == pod_t
        leaf = (level == 0) & (home | self.pod_full[np.maximum(pod[u], 0), pod_t])
        lo[leaf], hi[leaf] = indptr[u[leaf]], indptr[u[leaf] + 1]
        down = (level == 1) & home
        at = np.searchsorted(self.arc_key, u[down] * shape.base.n + t[down])
        lo[down], hi[down] = at, at + 1
        up = (level == 1) & ~home
        up[up] = shape.reached[u[up], pod_t[up]] == self.ups[u[up]]
        lo[up], hi[up] = self.core_start[u[up]], indptr[u[up] + 1]
        if self.run_lo is not None and self.run_hi is not None:
            core = level == 2
            lo[core], hi[core] = self.run_lo[u[core], pod_t[core]], self.run_hi[u[core],
                                                                                pod_t[core]]
        return lo, hi


def _runs(shape: LocalShape, level: np.ndarray, pod: np.ndarray, reached: np.ndarray,
          tail: np.ndarray) -> Runs | None:
    """:class:`Runs` of a checked fat tree; None when each row's arcs are not in tier
    order (then every candidate set is found arc by arc)."""
    n, indptr, head = shape.n, shape.indptr, shape.arc_head
    same_row = tail[1:] == tail[:-1]
    if np.any(same_row & (level[head[1:]] < level[head[:-1]])):
        return None
    core_start = indptr[:-1] + np.bincount(tail[level[head] < 2], minlength=n)
    ups = np.bincount(tail[(level[tail] == 1) & (level[head] == 2)], minlength=n)
    pods = reached.shape[1]
    tier1 = level == 1
    pod_full = np.ones((pods, pods), dtype=bool)
    np.logical_and.at(pod_full, pod[tier1], reached[tier1] > 0)
    run_lo = run_hi = None
    arcs = np.flatnonzero(level[tail] == 2)
    keys = tail[arcs] * pods + pod[head[arcs]]
    if arcs.size and np.all(np.diff(keys) >= 0):
        wanted = np.arange(n * pods)
        a, b = np.searchsorted(keys, wanted), np.searchsorted(keys, wanted, side="right")
        start = np.append(arcs, 0)
        run_lo = np.where(b > a, start[a], 0).reshape(n, pods)
        run_hi = np.where(b > a, start[np.maximum(b - 1, 0)] + 1, 0).reshape(n, pods)
    return Runs(tail * n + head, core_start, ups, pod_full, run_lo, run_hi)


def fat_tree_shape(shape: LocalShape, node_tier: np.ndarray) -> UpDownShape | None:
    """The closed-form view of a fabric shape (``node_tier``: switch tier code of each
    local node), or None when the usable links are not a regular fat tree (module doc)."""
    names = {i: LEVELS.get(name, -1) for i, name in enumerate(SWITCH_TIERS)}
    level = np.array([names.get(int(c), -1) for c in node_tier.tolist()], dtype=np.int64)
    if shape.n == 0 or np.any(level < 0) or not np.all(shape.transit):
        return None
    tail = np.repeat(np.arange(shape.n), np.diff(shape.indptr))
    head = shape.arc_head
    if np.any(np.abs(level[tail] - level[head]) != 1):
        return None
    low = (level[tail] < 2) & (level[head] < 2)
    graph = coo_matrix((np.ones(int(low.sum())), (tail[low], head[low])),
                       shape=(shape.n, shape.n))
    _, pod = connected_components(graph, directed=False)
    pod = np.where(level == 2, -1, pod)
    if not _complete_pods(level, pod, tail, head):
        return None
    reached = _reached(level, pod, tail, head)
    if not _pods_joined(level, pod, reached):
        return None
    return UpDownShape(shape, level, pod, reached, _runs(shape, level, pod, reached, tail))


def _complete_pods(level, pod, tail, head) -> bool:
    """Condition 2: in each pod, leaf x tier-1 arcs both ways (each arc is unique)."""
    pods = int(pod.max()) + 1
    leaves = np.bincount(pod[level == 0], minlength=pods)
    tier1 = np.bincount(pod[level == 1], minlength=pods)
    up = np.bincount(pod[tail[(level[tail] == 0) & (level[head] == 1)]], minlength=pods)
    down = np.bincount(pod[tail[(level[tail] == 1) & (level[head] == 0)]], minlength=pods)
    return bool(np.all(up == leaves * tier1) and np.all(down == leaves * tier1))


def _reached(level, pod, tail, head) -> np.ndarray:
    """``reached[v, p]`` (nodes x pods, counts): a core's links down into pod ``p``, a
    tier-1 switch's uplinks to cores with a link down into ``p``; 0 for leaves."""
    pods = int(pod.max()) + 1
    reached = np.zeros((level.size, pods), dtype=np.int64)
    down = (level[tail] == 2) & (level[head] == 1)
    np.add.at(reached, (tail[down], pod[head[down]]), 1)
    up = (level[tail] == 1) & (level[head] == 2)
    np.add.at(reached, tail[up], reached[head[up]] > 0)
    return reached


def _pods_joined(level, pod, reached) -> bool:
    """Condition 3: every pod with leaves has, for every other, a tier-1 switch reaching it."""
    pods = reached.shape[1]
    with_leaves = np.flatnonzero(np.bincount(pod[level == 0], minlength=pods))
    tier1 = level == 1
    joined = np.zeros((pods, pods), dtype=bool)
    np.logical_or.at(joined, pod[tier1], reached[tier1] > 0)
    joined[np.arange(pods), np.arange(pods)] = True
    return bool(np.all(joined[np.ix_(with_leaves, with_leaves)]))

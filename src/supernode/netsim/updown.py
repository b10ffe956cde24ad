"""Closed-form up/down routing on fat trees: equal-cost next hops enumerated per tier.

On a fat tree the shortest paths between two leaves are the up/down paths, so the
candidates at each hop follow from the structure alone, with no shortest-path search
(the search cost ``targets x links``, which grows as the square of the cluster). Tiers:
leaves (0), tier-1 switches (``spine``: the spines of two tiers, the aggregation switches
of a pod in three), cores (2). A *pod* is a connected set of leaves and tier-1 switches.

:func:`fat_tree_shape` accepts a fabric whose usable links have the structure below and
otherwise answers None (the router then searches shortest paths, as for any irregular
topology, degraded fabrics included):

1. every link joins adjacent tiers, every node is a switch;
2. in each pod, every leaf has a link up to and down from every tier-1 switch;
3. with several pods, every tier-1 switch has, for every other pod with leaves, a link up
   to a core that has a link down into that pod.

Then, toward a target leaf ``t`` of pod ``P`` (hops to ``t`` in brackets):

* a leaf in ``P`` [2] or in another pod [4]: every uplink;
* a tier-1 switch of ``P`` [1]: the link down to ``t``;
* a tier-1 switch of another pod [3]: the uplinks to cores reaching ``P``;
* a core reaching ``P`` [2]: the links down into ``P``.

These are exactly the arcs to a neighbour one hop closer to ``t`` (what the search
finds): by (2) every tier-1 switch of ``P`` is 1 hop from ``t``; by (3) every tier-1 switch
elsewhere is 3 hops and every leaf elsewhere 4; paths between leaves have even length,
and a detour through a leaf costs 2 more hops than going up. Candidates come in the
search's order (ascending local arc), so every policy picks exactly as before. Pairs the
closed form does not cover (a target that is not a leaf) go to the search.
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

    ``level`` and ``pod`` per local node (pod -1 for cores); ``reach[core_row[c], p]``:
    core ``c`` has a link down into pod ``p``.
    """

    base: LocalShape
    level: np.ndarray
    pod: np.ndarray
    core_row: np.ndarray
    reach: np.ndarray

    def __getattr__(self, name: str):
        """Arc and node arrays (``n``, ``indptr``, ``arc_head`` ...) are the base shape's."""
        if name == "base":
            raise AttributeError(name)
        return getattr(self.base, name)

    def candidate_table(self, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Candidates of ``u * n + t`` keys as CSR ``(ptr, arcs)`` (local arc ids)."""
        n, base = self.base.n, self.base
        u, t = keys // n, keys % n
        covered = (self.level[t] == 0) & (u != t)
        core = covered & (self.level[u] == 2)
        covered[core] = self.reach[self.core_row[u[core]], self.pod[t[core]]]
        closed = np.flatnonzero(covered)
        lo = base.indptr[u[closed]]
        deg = base.indptr[u[closed] + 1] - lo
        arcs = expand_ranges(lo, deg)
        owner = np.repeat(np.arange(closed.size), deg)
        ok = self._keep(u[closed][owner], t[closed][owner], base.arc_head[arcs])
        sizes = np.bincount(owner[ok], minlength=closed.size)
        rest = np.flatnonzero(~covered)
        if rest.size == 0:
            return np.concatenate([[0], np.cumsum(sizes)]), arcs[ok]
        ptr_rest, arcs_rest = base.candidate_table(keys[rest])
        return merge_tables(keys.size, (closed, sizes, arcs[ok]),
                            (rest, np.diff(ptr_rest), arcs_rest))

    def _keep(self, u: np.ndarray, t: np.ndarray, head: np.ndarray) -> np.ndarray:
        """Which arcs ``u -> head`` are candidates toward leaf ``t`` (see the module doc)."""
        lu, lh, pod_t = self.level[u], self.level[head], self.pod[t]
        to_reaching_core = (lh == 2) & self.reach[np.maximum(self.core_row[head], 0), pod_t]
        at_tier1 = np.where(self.pod[u] == pod_t, head == t, to_reaching_core)
        at_core = (lh == 1) & (self.pod[head] == pod_t)
        return np.where(lu == 0, True, np.where(lu == 1, at_tier1, at_core))


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
    cores = np.flatnonzero(level == 2)
    core_row = np.full(shape.n, -1, dtype=np.int64)
    core_row[cores] = np.arange(cores.size)
    pods = int(pod.max()) + 1
    reach = np.zeros((max(cores.size, 1), pods), dtype=bool)
    down = (level[tail] == 2) & (level[head] == 1)
    reach[core_row[tail[down]], pod[head[down]]] = True
    if not _every_pod_reached(level, pod, tail, head, core_row, reach):
        return None
    return UpDownShape(shape, level, pod, core_row, reach)


def _complete_pods(level, pod, tail, head) -> bool:
    """Condition 2: in each pod, leaf x tier-1 arcs both ways (each arc is unique)."""
    pods = int(pod.max()) + 1
    leaves = np.bincount(pod[level == 0], minlength=pods)
    tier1 = np.bincount(pod[level == 1], minlength=pods)
    up = np.bincount(pod[tail[(level[tail] == 0) & (level[head] == 1)]], minlength=pods)
    down = np.bincount(pod[tail[(level[tail] == 1) & (level[head] == 0)]], minlength=pods)
    return bool(np.all(up == leaves * tier1) and np.all(down == leaves * tier1))


def _every_pod_reached(level, pod, tail, head, core_row, reach) -> bool:
    """Condition 3: every tier-1 switch reaches every other pod with leaves via a core."""
    with_leaves = np.flatnonzero(np.bincount(pod[level == 0], minlength=reach.shape[1]))
    if with_leaves.size <= 1:
        return True
    up = np.flatnonzero((level[tail] == 1) & (level[head] == 2))
    tier1 = np.flatnonzero(level == 1)
    row = np.full(level.size, -1, dtype=np.int64)
    row[tier1] = np.arange(tier1.size)
    reached = np.zeros((tier1.size, reach.shape[1]), dtype=bool)
    np.logical_or.at(reached, row[tail[up]], reach[core_row[head[up]]])
    own = np.zeros_like(reached)
    own[np.arange(tier1.size), pod[tier1]] = True
    return bool(np.all((reached | own)[:, with_leaves]))

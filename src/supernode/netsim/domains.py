"""Every scale-up domain's subgraph at once, identical domains sharing one shape.

A cluster of 131,072 GPUs in 8-GPU domains has 16,384 domains; building their subgraphs
one by one costs seconds. :func:`domain_table` numbers every domain's nodes locally (sorted
global ids, as :func:`~supernode.netsim.subgraph.build_subgraph` does), sorts its arcs by
local (tail, head), and groups domains whose local structure is equal bit for bit (arcs,
capacities, latencies, transit flags, node latencies): each group shares one
:class:`~supernode.netsim.subgraph.LocalShape` and stacks its members' global node and link
ids in two tables. A degraded domain (a failed link or plane) has its own structure and so
its own shape.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from supernode.netsim.grouping import group_rows
from supernode.netsim.subgraph import LocalShape, SubGraph, build_subgraph


@dataclass(frozen=True)
class DomainTable:
    """Shapes of the domains and, per shape, the global ids of its members.

    ``shape_of[d]`` / ``row_of[d]``: shape index and table row of domain ``d`` (-1 without
    a usable scale-up link); ``nodes[k]`` (rows x local nodes) and ``arc_link[k]`` (rows x
    local arcs) for shape ``k``; ``local_of[v]`` / ``domain_of[v]``: local index and domain
    of global node ``v`` (-1 outside every domain subgraph).
    """

    shapes: list[LocalShape]
    shape_of: np.ndarray
    row_of: np.ndarray
    nodes: list[np.ndarray]
    arc_link: list[np.ndarray]
    local_of: np.ndarray
    domain_of: np.ndarray

    def subgraph(self, domain: int) -> SubGraph | None:
        """The :class:`SubGraph` of ``domain`` (None when it has no usable link)."""
        if not 0 <= domain < self.shape_of.size or self.shape_of[domain] < 0:
            return None
        k, r = int(self.shape_of[domain]), int(self.row_of[domain])
        return SubGraph(self.nodes[k][r], self.arc_link[k][r], self.shapes[k])

    def local(self, nodes: np.ndarray, domains: np.ndarray) -> np.ndarray:
        """Local index of global ``nodes[i]`` in domain ``domains[i]`` (-1 if absent)."""
        ok = self.domain_of[nodes] == domains
        return np.where(ok, self.local_of[nodes], -1)


def domain_table(tail: np.ndarray, head: np.ndarray, capacity: np.ndarray,
                 latency_s: np.ndarray, node_latency_s: np.ndarray, transit: np.ndarray,
                 links: np.ndarray, link_domain: np.ndarray) -> DomainTable:
    """The :class:`DomainTable` of the directed scale-up ``links`` (global ids) with their
    domains ``link_domain`` (capacities in bytes/s, latencies in s)."""
    n_nodes = node_latency_s.size
    width = n_nodes + 1
    domains = int(link_domain.max()) + 1 if links.size else 0
    ends = np.unique(np.concatenate([link_domain * width + tail[links],
                                     link_domain * width + head[links]]))
    node_dom, node_id = ends // width, ends % width
    start = np.searchsorted(node_dom, np.arange(domains + 1))
    lt = np.searchsorted(ends, link_domain * width + tail[links]) - start[link_domain]
    lh = np.searchsorted(ends, link_domain * width + head[links]) - start[link_domain]
    order = np.lexsort((lh, lt, link_domain))
    links, lt, lh, ldom = links[order], lt[order], lh[order], link_domain[order]
    arc_start = np.searchsorted(ldom, np.arange(domains + 1))
    local_of = np.full(n_nodes, -1, dtype=np.int64)
    domain_of = np.full(n_nodes, -1, dtype=np.int64)
    local_of[node_id] = np.arange(ends.size) - start[node_dom]
    domain_of[node_id] = node_dom
    n_of, a_of = np.diff(start), np.diff(arc_start)
    shape_of = np.full(domains, -1, dtype=np.int64)
    row_of = np.full(domains, -1, dtype=np.int64)
    out = DomainTable([], shape_of, row_of, [], [], local_of, domain_of)
    present = np.flatnonzero(a_of > 0)
    sizes = np.stack([n_of[present], a_of[present]], axis=1)
    for n, a in np.unique(sizes, axis=0).tolist():
        members = present[(n_of[present] == n) & (a_of[present] == a)]
        node_rows = node_id[start[members][:, None] + np.arange(n)[None, :]]
        arc_rows = arc_start[members][:, None] + np.arange(a)[None, :]
        signature = np.concatenate([
            lt[arc_rows], lh[arc_rows], capacity[links[arc_rows]].view(np.int64),
            latency_s[links[arc_rows]].view(np.int64), transit[node_rows].astype(np.int64),
            node_latency_s[node_rows].view(np.int64)], axis=1)
        first, group = group_rows(signature)
        order = np.argsort(group, kind="stable")
        cuts = np.searchsorted(group[order], np.arange(first.size + 1))
        for g in range(first.size):
            mine = members[order[cuts[g]:cuts[g + 1]]]
            links_of = links[arc_start[mine[0]]:arc_start[mine[0] + 1]]
            sub = build_subgraph(tail, head, capacity, latency_s, node_latency_s, links_of,
                                 transit)
            shape_of[mine] = len(out.shapes)
            row_of[mine] = np.arange(mine.size)
            out.shapes.append(sub.shape)
            out.nodes.append(node_id[start[mine][:, None] + np.arange(n)[None, :]])
            out.arc_link.append(links[arc_start[mine][:, None] + np.arange(a)[None, :]])
    return out

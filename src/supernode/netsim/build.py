"""The simulator's network built straight into arrays from a resolved cluster.

Same nodes, links, names and indices as converting the whole networkx graph
(:func:`~supernode.netsim.network.network_from_graph` of
:func:`~supernode.topology.cluster_graph.build_cluster_graph`), without the graph: at
131,072 GPUs the graph takes ~15 s and ~2 GB, the arrays well under a second.

One description of the wiring serves both builds:

* a scale-up domain is built once by the topology kind's own builder
  (:func:`~supernode.topology.cluster_graph.add_domain`) as a small *template* graph and
  repeated over every domain by offsetting node numbers (checked: domain 1's builder output
  must be domain 0's moved by one domain, else :func:`network_arrays` returns None and
  the caller converts the graph);
* NIC ownership (:func:`~supernode.topology.cluster_graph.nic_owners`) and the fat tree's
  links (:mod:`supernode.topology.fat_tree`: ``nic_leaf_links``, ``leaf_spine_links``,
  ``agg_core_links``) are arrays used by the graph builders too.

Order is the graph's: nodes in insertion order without CPU sockets; each undirected edge
as networkx yields it, under its endpoint inserted first, in the order that endpoint's
edges were added (:func:`~supernode.netsim.build_blocks.edge_order`). The blocks are
gathered and assembled by :mod:`supernode.netsim.build_blocks`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from supernode.netsim.build_blocks import Parts, add_fabric, assemble_parts, with_accelerators
from supernode.netsim.network import (
    ACC,
    NIC,
    SWITCH_TIER_CODES,
    TIER_CODES,
    Network,
    kind_code,
    network_from_graph,
    reducing_tiers,
)
from supernode.topology.cluster_graph import (
    add_domain,
    build_cluster_graph,
    nic_owners,
    pcie_bandwidth_bytes_per_s,
)
from supernode.topology.graph import FABRIC_TIERS, new_graph

if TYPE_CHECKING:
    import networkx as nx


@dataclass(frozen=True)
class Template:
    """One scale-up domain in local numbering (accelerators first, then the rest in
    insertion order): node facts, name parts, and edges in networkx's yield order."""

    size: int
    kind: np.ndarray
    rail: np.ndarray
    switch_tier: np.ndarray
    has_domain: np.ndarray
    latency_s: np.ndarray
    prefix: tuple[str, ...]
    second: np.ndarray
    u: np.ndarray
    v: np.ndarray
    capacity: np.ndarray
    latency_edge_s: np.ndarray
    tier: np.ndarray

    @property
    def nodes(self) -> int:
        """Nodes per domain."""
        return int(self.kind.size)


def _template_graph(cluster: Any, domain: int) -> nx.Graph:
    g = new_graph()
    add_domain(g, cluster, domain)
    return g


def _describe(g: nx.Graph, size: int, domain: int) -> tuple | None:
    """Node and edge records of a domain graph relative to ``domain`` (None if the nodes
    are not ``size`` accelerators then ``(prefix, domain, i)`` ids)."""
    first = domain * size
    nodes = list(g.nodes)
    if nodes[:size] != [("acc", first + i) for i in range(size)]:
        return None
    local = {v: i for i, v in enumerate(nodes)}
    rows = []
    for v in nodes[size:]:
        if not (isinstance(v, tuple) and len(v) == 3 and isinstance(v[0], str)
                and v[1] == domain and isinstance(v[2], int) and v[2] >= 0):
            return None
        d = g.nodes[v]
        rows.append((v[0], v[2], d.get("kind"), d.get("rail"), d.get("domain") is not None,
                     float(d.get("latency_s") or 0.0), d.get("tier")))
    edges = [(local[u], local[w], float(d.get("count", 1)) * float(d["bandwidth_bytes_per_s"]),
              float(d.get("latency_s", 0.0)), d["tier"]) for u, w, d in g.edges(data=True)]
    return rows, edges


def domain_template(cluster: Any) -> Template | None:
    """The cluster's scale-up domain as a :class:`Template`; None when domain 1 is not
    domain 0 moved by one domain (then only the graph describes the cluster)."""
    size = cluster.scale_up.size
    base = _describe(_template_graph(cluster, 0), size, 0)
    if base is None:
        return None
    if cluster.supernodes > 1 and _describe(_template_graph(cluster, 1), size, 1) != base:
        return None
    rows, edges = base
    if any(row[2] not in ("switch", "accelerator") for row in rows):
        return None
    kind = np.array([ACC] * size + [kind_code(row[2]) for row in rows], np.int8)
    rail = np.array([-1] * size + [-1 if row[3] is None else int(row[3]) for row in rows],
                    np.int64)
    tier = np.array([-1] * size + [SWITCH_TIER_CODES.get(row[6], -1) if row[2] == "switch"
                                   else -1 for row in rows], np.int8)
    has_domain = np.array([True] * size + [row[4] for row in rows], bool)
    lat = np.array([0.0] * size + [row[5] if row[2] == "switch" else 0.0 for row in rows])
    e = np.array([(u, w) for u, w, *_ in edges], np.int64).reshape(-1, 2)
    return Template(
        size, kind, rail, tier, has_domain, lat, tuple(["acc"] * size + [p for p, *_ in rows]),
        np.array([-1] * size + [s for _, s, *_ in rows], np.int64), e[:, 0], e[:, 1],
        np.array([c for _, _, c, _, _ in edges]), np.array([lt for *_, lt, _ in edges]),
        np.array([TIER_CODES[t] for *_, t in edges], np.int8))


def _domains(parts: Parts, t: Template, domains: int, prefixes: dict[str, int]) -> None:
    """Every domain's nodes and links: the template offset by ``domain * t.nodes``."""
    m, d = t.nodes, np.arange(domains, dtype=np.int64)[:, None]
    local = np.arange(m)[None, :]
    is_acc = local < t.size
    code = np.array([prefixes[p] for p in t.prefix], np.int8)
    parts.nodes(np.tile(t.kind, domains), np.tile(t.switch_tier, domains),
                np.where(t.has_domain[None, :], d, -1).ravel(),
                np.tile(t.rail, domains), np.tile(t.latency_s, domains),
                np.tile(code, domains), np.where(is_acc, d * t.size + local, d).ravel(),
                np.tile(np.where(is_acc[0], -1, t.second), domains))
    e = np.arange(t.u.size)
    parts.link((d * m + t.u).ravel(), (d * m + t.v).ravel(), np.tile(t.capacity, domains),
               np.tile(t.latency_edge_s, domains), np.tile(t.tier, domains),
               np.tile(e, domains))


def network_arrays(cluster: Any) -> Network | None:
    """The :class:`Network` of a resolved cluster built as arrays (see the module
    docstring); None when its domains cannot be described by one template."""
    t = domain_template(cluster)
    if t is None:
        return None
    names = sorted(set(t.prefix) | {"nic", *FABRIC_TIERS})
    prefixes = {p: i for i, p in enumerate(names)}
    parts = Parts([], [], [], [], [], [], [], [], [])
    _domains(parts, t, cluster.supernodes, prefixes)
    size, m = t.size, t.nodes
    owners = nic_owners(cluster)
    hosts, rails = owners.shape
    nic_base = cluster.supernodes * m
    nic_node = nic_base + np.arange(hosts * rails, dtype=np.int64)
    parts.nodes(NIC, -1, -1, np.tile(np.arange(rails), hosts), 0.0, prefixes["nic"],
                np.repeat(np.arange(hosts), rails), np.tile(np.arange(rails), hosts))
    owner = owners.ravel()
    owner_node = (owner // size) * m + owner % size
    parts.link(owner_node, nic_node, pcie_bandwidth_bytes_per_s(cluster),
               cluster.host.nic_latency_s, "host", t.u.size + np.arange(owner.size))
    add_fabric(parts, cluster, nic_base + hosts * rails, prefixes)
    return with_accelerators(assemble_parts(parts, cluster, names), cluster, size, m, owner,
                             nic_node)


def network_from_cluster(cluster: Any, via_graph: bool = False) -> Network:
    """The network of a resolved :class:`~supernode.spec.resolved.Cluster`.

    Built straight into arrays (:func:`network_arrays`); ``via_graph`` (or a
    cluster whose domains one template cannot describe) converts the whole networkx
    graph instead. Both give the same nodes, links, names and indices.
    """
    net = None if via_graph else network_arrays(cluster)
    if net is not None:
        return net
    out = cluster.scale_out
    return network_from_graph(build_cluster_graph(cluster),
                              rail_optimized=bool(out and out.rail_optimized),
                              reducing_tiers=reducing_tiers(cluster))

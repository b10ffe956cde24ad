"""The blocks of the simulator's array-built network and their assembly into a Network.

:func:`~supernode.netsim.build.network_arrays` gathers nodes and undirected links block by
block in a :class:`Parts` (the scale-up domains from their template, the NICs, the fabric
switches and links, :func:`add_fabric`), then concatenates them with the links in the
networkx graph's order (:func:`assemble_parts`, :func:`edge_order`) and adds the
accelerators, their hosts and NICs (:func:`with_accelerators`), so both builds give the
same nodes, links, names and indices.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from supernode.netsim.network import (
    SWITCH,
    SWITCH_TIER_CODES,
    TIER_CODES,
    Network,
    assemble,
    link_arrays,
    reducing_tiers,
)
from supernode.netsim.node_names import NodeTable
from supernode.topology.cluster_graph import fabric_layout, fabric_parts
from supernode.topology.fat_tree import agg_core_links, leaf_spine_links, nic_leaf_links
from supernode.topology.graph import FABRIC_TIERS


@dataclass
class Parts:
    """Nodes and undirected edges gathered block by block (edges with their sort keys)."""

    kind: list[np.ndarray]
    tier: list[np.ndarray]
    domain: list[np.ndarray]
    rail: list[np.ndarray]
    latency_s: list[np.ndarray]
    code: list[np.ndarray]
    first: list[np.ndarray]
    second: list[np.ndarray]
    edges: list[tuple[np.ndarray, ...]]

    def nodes(self, kind, tier, domain, rail, latency_s, code, first, second) -> None:
        """Append a block of nodes (arrays of one length, scalars broadcast)."""
        n = np.broadcast(kind, first).size
        for store, value, dtype in ((self.kind, kind, np.int8), (self.tier, tier, np.int8),
                                    (self.domain, domain, np.int64),
                                    (self.rail, rail, np.int64),
                                    (self.latency_s, latency_s, float),
                                    (self.code, code, np.int8), (self.first, first, np.int64),
                                    (self.second, second, np.int64)):
            store.append(np.broadcast_to(np.asarray(value, dtype=dtype), (n,)))

    def link(self, u, v, capacity, latency_s, tier: str | np.ndarray, subkey) -> None:
        """Append undirected edges ``u - v`` (node indices, ``u`` inserted first)."""
        n = np.size(u)
        tiers = tier if isinstance(tier, np.ndarray) else TIER_CODES[tier]
        self.edges.append(tuple(np.broadcast_to(np.asarray(x, dtype=t), (n,)) for x, t in (
            (u, np.int64), (v, np.int64), (capacity, float), (latency_s, float),
            (tiers, np.int8), (subkey, np.int64))))


def add_fabric(parts: Parts, cluster: Any, base: int, prefixes: dict[str, int]) -> None:
    """Fabric switches (leaves, spines, cores) and the NIC, spine and core links."""
    layout, fabric = fabric_layout(cluster), fabric_parts(cluster)
    if layout is None or fabric is None:
        return
    switch, link, nic_link = fabric
    counts = layout.sizing.switches
    starts = base + np.concatenate([[0], np.cumsum(counts)])
    for tier, count in zip(FABRIC_TIERS, counts, strict=False):
        parts.nodes(SWITCH, SWITCH_TIER_CODES[tier], -1, -1, switch.latency_s, prefixes[tier],
                    np.arange(count), -1)
    host, rail, leaf = nic_leaf_links(layout)
    parts.link(base - host.size + host * layout.nics_per_host + rail, starts[0] + leaf,
               nic_link.bandwidth_bytes_per_s, nic_link.latency_s, "leaf", 0)
    for (lo, hi), tier, links in (((0, 1), "spine", leaf_spine_links),
                                  ((1, 2), "core", agg_core_links)):
        if hi >= len(counts):  # a one- or two-tier fabric has no links above its top tier
            break
        a, b, bundle = links(layout)
        parts.link(starts[lo] + a, starts[hi] + b, bundle * link.bandwidth_bytes_per_s,
                   link.latency_s, tier, np.arange(a.size))


def assemble_parts(parts: Parts, cluster: Any, prefixes: list[str]) -> dict[str, Any]:
    """Concatenated node facts and the links in the graph's order (see :func:`edge_order`)."""
    cat: dict[str, Any] = {name: np.concatenate(getattr(parts, name)) for name in
           ("kind", "tier", "domain", "rail", "latency_s", "code", "first", "second")}
    u, v, cap, lat, tier, sub = (np.concatenate(col) for col in zip(*parts.edges, strict=True))
    order = edge_order(u, sub)
    n = cat["kind"].size
    cat["links"] = link_arrays(n, u[order], v[order], cap[order], lat[order], tier[order])
    cat["table"] = NodeTable(prefixes, cat["code"], cat["first"], cat["second"])
    return cat


def edge_order(u: np.ndarray, subkey: np.ndarray) -> np.ndarray:
    """networkx's edge order: by the node the edge is yielded under (``u``, the endpoint
    inserted first), then by when that node's edges were added (``subkey``)."""
    return np.lexsort((subkey, u))


def with_accelerators(cat: dict[str, Any], cluster: Any, size: int, m: int, owner: np.ndarray,
                      nic_node: np.ndarray) -> Network:
    """The :class:`Network`: accelerators (``size`` per scale-up domain of ``m`` nodes),
    their hosts and NICs, each NIC's PCIe link."""
    links, n = cat["links"], cat["kind"].size
    acc = np.arange(cluster.accelerators, dtype=np.int64)
    acc_node = (acc // size) * m + acc % size
    per_host = cluster.host.accelerators_per_host
    host = acc // per_host  # Place.host: (first + local) // per_host
    owner_node = acc_node[owner]
    pcie = links.find(owner_node, nic_node, n)
    nic_link = dict(zip(nic_node.tolist(), pcie.tolist(), strict=True))
    out = cluster.scale_out
    return assemble(cluster.name, cat["table"], cat["table"].index, cat["kind"],
                    cat["domain"], cat["rail"], cat["latency_s"], cat["tier"], links, acc_node,
                    host,
                    nic_link, accelerator_nics(cluster, owner, nic_node, host),
                    bool(out and out.rail_optimized), reducing_tiers(cluster))


def accelerator_nics(cluster: Any, owner: np.ndarray, nic_node: np.ndarray, host: np.ndarray
              ) -> np.ndarray:
    """The NIC node each accelerator sends through: its own lowest rail; one without a NIC
    uses NIC ``local * nics // accelerators in its host`` of its host (the graph path's
    rule, :func:`~supernode.netsim.network.network_from_graph`)."""
    accs = cluster.accelerators
    hosts, rails = cluster.hosts, cluster.host.nic_count
    out = np.full(accs, -1, dtype=np.int64)
    if rails == 0:
        return out
    rail = np.tile(np.arange(rails, dtype=np.int64), hosts)
    lowest = np.full(accs, rails, dtype=np.int64)
    np.minimum.at(lowest, owner, rail)
    owned = lowest < rails
    out[owned] = nic_node[host[owned] * rails + lowest[owned]]
    per_host = cluster.host.accelerators_per_host
    rest = np.flatnonzero(~owned)
    local = rest - host[rest] * per_host
    peers = np.minimum(per_host, accs - host[rest] * per_host)
    out[rest] = nic_node[host[rest] * rails + local * rails // peers]
    return out

"""Assemble the whole cluster graph: hosts, accelerators, NICs, scale-up domains, fat tree.

The graph is for verification, exports and the flow simulator; the report's metrics come
from closed forms (:mod:`supernode.topology.metrics`) and never need it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from supernode.spec.resolved import Cluster
from supernode.topology.fat_tree import FabricLayout, add_fabric, fat_tree_layout
from supernode.topology.graph import (
    LinkType,
    Place,
    SwitchType,
    acc,
    add_accelerators,
    new_graph,
)
from supernode.topology.kinds import SCALE_UP_KINDS, switch_type

if TYPE_CHECKING:
    import networkx as nx

#: PCIe payload rate per lane and direction in Gb/s, by generation (after line coding:
#: 8b/10b for gen 1-2, 128b/130b for gen 3-5, FLIT for gen 6-7 taken at 242/256).
PCIE_GBIT_PER_LANE = {1: 2.0, 2: 4.0, 3: 7.877, 4: 15.754, 5: 31.508, 6: 60.5, 7: 121.0}
#: PCIe assumed when the host does not say: gen 5 x16.
DEFAULT_PCIE = (5, 16)


def pcie_bandwidth_bytes_per_s(cluster: Cluster) -> float:
    """Bandwidth of one accelerator's PCIe link per direction (bytes/s)."""
    pcie = cluster.spec.host.pcie
    generation, lanes = (pcie.generation, pcie.lanes) if pcie else DEFAULT_PCIE
    return PCIE_GBIT_PER_LANE[generation] * lanes * 1e9 / 8


def cpu_sockets(cluster: Cluster) -> int:
    """CPU sockets per host (1 when the host lists none)."""
    return sum(c.count for c in cluster.spec.host.cpus) or 1


def nic_accelerator(cluster: Cluster, rail: int) -> int:
    """Index inside its host of the accelerator that NIC ``rail`` hangs off (PCIe)."""
    return rail * cluster.host.accelerators_per_host // max(1, cluster.host.nic_count)


def fabric_layout(cluster: Cluster) -> FabricLayout | None:
    """The sized scale-out fat tree of ``cluster`` (None without one)."""
    out = cluster.scale_out
    if out is None:
        return None
    return fat_tree_layout(cluster.hosts, cluster.host.nic_count, out.switch.radix, out.tiers,
                           out.oversubscription, out.rail_optimized)


def fabric_parts(cluster: Cluster) -> tuple[SwitchType, LinkType, LinkType] | None:
    """The fabric's switch, switch-to-switch link and NIC-to-leaf link (None without a
    fabric). A NIC link runs at the slower of the NIC and the switch port (bytes/s)."""
    out = cluster.scale_out
    if out is None:
        return None
    switch = switch_type(out.switch)
    assert switch is not None
    port = out.switch.port_bandwidth_bytes_per_s
    nic = min(cluster.host.nic_bandwidth_bytes_per_s, port)
    return (switch, LinkType(port, out.link_latency_s, out.medium),
            LinkType(nic, out.link_latency_s, out.medium))


def add_domain(g: nx.Graph, cluster: Cluster, domain: int) -> None:
    """Add scale-up domain ``domain`` of ``cluster`` (its accelerators, switches, links)."""
    kind = SCALE_UP_KINDS.get(cluster.scale_up.kind, "scale_up.kind")
    size = cluster.scale_up.size
    place = Place(domain, domain * size, cluster.host.accelerators_per_host)
    add_accelerators(g, place, size)
    kind.add(g, cluster.scale_up, place)


def build_cluster_graph(cluster: Cluster) -> nx.Graph:
    """The full graph of ``cluster``: every accelerator, CPU socket, NIC, switch and link.

    Node and edge attributes follow :mod:`supernode.topology.graph`; host PCIe links are
    tier ``host``. Memory is about 1.5 kB per edge: a 100,000-accelerator cluster is
    ~0.8 M edges. (The flow simulator builds the same wiring straight into arrays:
    :mod:`supernode.netsim.build`.)
    """
    g = new_graph(cluster.name)
    for domain in range(cluster.supernodes):
        add_domain(g, cluster, domain)
    _add_hosts(g, cluster)
    layout, parts = fabric_layout(cluster), fabric_parts(cluster)
    if layout is not None and parts is not None:
        switch, link, nic_link = parts
        add_fabric(g, layout, link, nic_link, switch)
    return g


def nic_owners(cluster: Cluster) -> np.ndarray:
    """``hosts x nics`` array: the accelerator (global index) each NIC hangs off (PCIe);
    a partial last host's missing GPUs hand their NICs to the cluster's last GPU."""
    hosts, nics = cluster.hosts, cluster.host.nic_count
    local = np.array([nic_accelerator(cluster, r) for r in range(nics)], dtype=np.int64)
    first = np.arange(hosts, dtype=np.int64)[:, None] * cluster.host.accelerators_per_host
    owners: np.ndarray = np.minimum(first + local[None, :], cluster.accelerators - 1)
    return owners


def _add_hosts(g: nx.Graph, cluster: Cluster) -> None:
    per_host = cluster.host.accelerators_per_host
    sockets = cpu_sockets(cluster)
    pcie = pcie_bandwidth_bytes_per_s(cluster)
    owners = nic_owners(cluster).tolist()
    for h in range(cluster.hosts):
        for s in range(sockets):
            g.add_node(("cpu", h, s), kind="cpu", host=h, socket=s)
        for i in range(per_host):
            a = h * per_host + i
            if a >= cluster.accelerators:
                break
            g.add_edge(acc(a), ("cpu", h, i * sockets // per_host), tier="host", count=1,
                       bandwidth_bytes_per_s=pcie, latency_s=0.0, medium="pcb")
        for r in range(cluster.host.nic_count):
            g.add_node(("nic", h, r), kind="nic", host=h, rail=r,
                       bandwidth_bytes_per_s=cluster.host.nic_bandwidth_bytes_per_s)
            g.add_edge(acc(owners[h][r]), ("nic", h, r), tier="host", count=1,
                       bandwidth_bytes_per_s=pcie, latency_s=cluster.host.nic_latency_s,
                       medium="pcb")


def host_link_count(cluster: Cluster) -> int:
    """PCIe links inside hosts: one per accelerator (to its CPU) and one per NIC."""
    return cluster.accelerators + cluster.hosts * cluster.host.nic_count

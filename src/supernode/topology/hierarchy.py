"""What a scheduler sees of a cluster: GPUs, hosts, supernodes, port groups, pods, blocks.

One place computes the placement hierarchy from the resolved cluster and its sized fat tree
(:func:`supernode.topology.cluster_graph.fabric_layout`); the placement simulator
(:mod:`supernode.scheduler`) and the exports to Slurm, Kubernetes and Volcano
(:mod:`supernode.exports`) both read it, so what is simulated is what is exported.

* GPU ``g`` (global index, domain-major as in the topology graph) sits in host
  ``g // accelerators_per_host`` and scale-up domain (supernode) ``g // scale_up.size``.
* A **port group** is the set of hosts whose NICs plug into the same leaves: on a
  rail-optimised fabric the ``rails`` leaves of one leaf group serve exactly the same hosts
  (seed 001 §4.2's "port group"; traffic between its hosts never leaves the leaves); on a
  plain fabric it is one leaf (a host whose NICs straddle two leaves belongs to the leaf of
  most of its NICs, the first on ties). One-tier fabrics have one port group; a cluster
  without a scale-out fabric has one per domain.
* A **pod** (three-tier trees) is the set of port groups under one aggregation layer.
* A **block** (Slurm ``topology/block``) is a scale-up domain that spans two or more
  hosts (an NVL72 rack: 18 trays); where a domain is one host (or smaller), the block is
  the port group instead.
* A **rack** groups ``racks.hosts_per_rack`` consecutive hosts (none when not given).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from supernode.spec.resolved import Cluster
from supernode.topology.cluster_graph import fabric_layout
from supernode.topology.fat_tree import FabricLayout


@dataclass(frozen=True)
class Hierarchy:
    """The placement hierarchy of one cluster (arrays indexed by host unless named)."""

    name: str
    gpus: int
    gpus_per_host: int
    domain_size: int
    host_domain: np.ndarray
    host_group: np.ndarray
    group_pod: np.ndarray
    group_leaves: tuple[tuple[int, ...], ...]
    host_block: np.ndarray
    block_kind: str
    host_rack: np.ndarray | None
    fabric_tiers: int
    oversubscription: tuple[float, ...]

    @property
    def hosts(self) -> int:
        """Hosts (servers or trays)."""
        return len(self.host_domain)

    @property
    def domains(self) -> int:
        """Scale-up domains (supernodes)."""
        return -(-self.gpus // self.domain_size)

    @property
    def groups(self) -> int:
        """Port groups."""
        return len(self.group_pod)

    @property
    def pods(self) -> int:
        """Pods (1 below three tiers)."""
        return int(self.group_pod.max()) + 1 if len(self.group_pod) else 0

    @property
    def blocks(self) -> int:
        """Slurm blocks."""
        return int(self.host_block.max()) + 1 if len(self.host_block) else 0

    def gpu_host(self) -> np.ndarray:
        """Host of every GPU."""
        return np.arange(self.gpus, dtype=np.int64) // self.gpus_per_host

    def gpu_domain(self) -> np.ndarray:
        """Scale-up domain of every GPU."""
        return np.arange(self.gpus, dtype=np.int64) // self.domain_size

    def crossing_oversubscription(self, pods: int) -> float:
        """Down:up ratio met by traffic between port groups (worst tier on the way up):
        the leaf tier's within a pod, the worse of leaf and aggregation across pods."""
        ratios = self.oversubscription or (1.0,)
        return float(max(ratios[: 2 if pods > 1 else 1]))


def build_hierarchy(cluster: Cluster) -> Hierarchy:
    """The placement hierarchy of ``cluster`` (see the module doc for the rules)."""
    per_host = cluster.host.accelerators_per_host
    size = cluster.scale_up.size
    hosts = cluster.hosts
    host_domain = (np.arange(hosts, dtype=np.int64) * per_host) // size
    host_group, leaves, group_pod, tiers, ratios = _port_groups(cluster, host_domain)
    multi_host = size >= 2 * per_host
    host_block = host_domain.copy() if multi_host else host_group.copy()
    racks = cluster.spec.racks
    host_rack = (np.arange(hosts, dtype=np.int64) // racks.hosts_per_rack) if racks else None
    return Hierarchy(cluster.name, cluster.accelerators, per_host, size, host_domain,
                     host_group, group_pod, leaves, host_block,
                     "domain" if multi_host else "port_group", host_rack, tiers, ratios)


def _port_groups(cluster: Cluster, host_domain: np.ndarray
                 ) -> tuple[np.ndarray, tuple[tuple[int, ...], ...], np.ndarray, int,
                            tuple[float, ...]]:
    """(host -> port group, leaves of each group, group -> pod, tiers, oversubscription)."""
    layout = fabric_layout(cluster)
    hosts = len(host_domain)
    if layout is None or cluster.scale_out is None:
        groups = int(host_domain.max()) + 1
        return (host_domain.copy(), tuple(() for _ in range(groups)),
                np.zeros(groups, dtype=np.int64), 0, ())
    tiers = layout.sizing.tiers
    nics = cluster.host.nic_count
    leaf_of_host = np.array([_home_leaf(layout, h, nics) for h in range(hosts)], dtype=np.int64)
    if tiers == 1:
        host_group = np.zeros(hosts, dtype=np.int64)
    elif layout.rail_optimized:
        host_group = leaf_of_host // layout.rails
    else:
        host_group = leaf_of_host
    host_group = _renumber(host_group)
    groups = int(host_group.max()) + 1
    leaves: list[set[int]] = [set() for _ in range(groups)]
    for h in range(hosts):
        for r in range(nics):
            leaves[host_group[h]].add(layout.leaf_of(h, r))
    first_leaf = np.array([min(s) for s in leaves], dtype=np.int64)
    group_pod = first_leaf // layout.leaves_per_pod if tiers == 3 else \
        np.zeros(groups, dtype=np.int64)
    return (host_group, tuple(tuple(sorted(s)) for s in leaves), _renumber(group_pod), tiers,
            tuple(cluster.scale_out.oversubscription))


def _home_leaf(layout: FabricLayout, host: int, nics: int) -> int:
    """The leaf most of ``host``'s NICs plug into (the first on ties)."""
    counts = Counter(layout.leaf_of(host, r) for r in range(max(nics, 1)))
    best = max(counts.values())
    return min(leaf for leaf, c in counts.items() if c == best)


def _renumber(labels: np.ndarray) -> np.ndarray:
    """Labels renumbered 0, 1, 2, ... in order of first appearance (they are sorted)."""
    _, inverse = np.unique(labels, return_inverse=True)
    return inverse.astype(np.int64)

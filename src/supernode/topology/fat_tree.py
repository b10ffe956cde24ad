"""Scale-out fat tree (leaf-spine-core) built from :func:`~supernode.topology.sizing.size_fat_tree`.

Wiring, given the sizing (tier 0 = leaves):

* Endpoints are NIC ports ``("nic", host, rail)``. Rail-optimised: hosts form groups of
  ``d1`` (leaf down ports); NIC ``r`` of every host of group ``g`` goes to leaf
  ``g * rails + r``. Otherwise endpoint ``e = host * nics + r`` goes to leaf ``e // d1``.
* One tier: the switch of the NIC's rail (or the single switch).
* Two tiers: every leaf reaches every spine with ``u1 / S`` links (spread when uneven).
* Three tiers: pods of ``P = min(d2, leaves)`` consecutive leaves and ``A`` aggregation
  switches (tier ``spine``); each leaf reaches every aggregation switch of its pod. The
  ``u2`` uplinks of every aggregation switch are numbered ``(j, u, pod)`` (``j`` its index in
  the pod) and core ``c`` takes numbers ``c*k .. c*k + k - 1``: with ``k >= pods`` every
  full core reaches every pod; a k-ary fat tree gets Al-Fares et al.'s wiring.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, overload

import numpy as np

from supernode.topology.graph import (
    LinkType,
    SwitchType,
    add_link,
    add_switch,
    new_graph,
    spread_count,
)
from supernode.topology.sizing import FatTreeSizing, RadixError, size_fat_tree

if TYPE_CHECKING:
    import networkx as nx


@dataclass(frozen=True)
class FabricLayout:
    """Where every endpoint, leaf and pod of a sized fat tree sits (pure arithmetic)."""

    sizing: FatTreeSizing
    hosts: int
    nics_per_host: int
    rail_optimized: bool

    @property
    def rails(self) -> int:
        """Leaves per host group (NICs per host when rail-optimised, else 1)."""
        return self.nics_per_host if self.rail_optimized else 1

    @property
    def leaves(self) -> int:
        """Switches of the leaf tier."""
        return self.sizing.switches[0]

    @property
    def leaves_per_pod(self) -> int:
        """Leaves per pod (3 tiers); all leaves otherwise."""
        if self.sizing.tiers < 3:
            return self.leaves
        return min(self.sizing.down_ports[1], self.leaves)

    @property
    def aggs_per_pod(self) -> int:
        """Aggregation (tier-1) switches per pod in a three-tier tree."""
        return self.sizing.switches[1] // self.sizing.pods if self.sizing.tiers == 3 else 0

    @property
    def groups(self) -> int:
        """Leaf groups: sets of ``rails`` leaves serving the same hosts."""
        return self.leaves // self.rails if self.sizing.tiers > 1 else 1

    @overload
    def leaf_of(self, host: int, rail: int) -> int: ...
    @overload
    def leaf_of(self, host: np.ndarray, rail: np.ndarray) -> np.ndarray | int: ...

    def leaf_of(self, host: Any, rail: Any) -> Any:
        """Leaf index that NIC ``rail`` of ``host`` plugs into (ints, or arrays broadcast)."""
        if self.sizing.tiers == 1:
            return rail if self.rail_optimized else 0
        d1 = self.sizing.down_ports[0]
        if self.rail_optimized:
            return (host // d1) * self.rails + rail
        return (host * self.nics_per_host + rail) // d1

    def leaf_endpoints(self, leaf: int) -> int:
        """Endpoints (NIC ports) attached to ``leaf``."""
        if self.sizing.tiers == 1:
            return self.hosts if self.rail_optimized else self.sizing.endpoints
        d1 = self.sizing.down_ports[0]
        if self.rail_optimized:
            return max(0, min(d1, self.hosts - (leaf // self.rails) * d1))
        return max(0, min(d1, self.sizing.endpoints - leaf * d1))

    def host_span(self, host: int) -> tuple[int, int]:
        """First and last leaf index a host's NICs plug into."""
        return self.leaf_of(host, 0), self.leaf_of(host, self.nics_per_host - 1)

    def host_spans(self) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`host_span` of every host at once (two non-decreasing arrays)."""
        h = np.arange(self.hosts, dtype=np.int64)
        if self.sizing.tiers == 1:
            last = self.nics_per_host - 1 if self.rail_optimized else 0
            return np.zeros_like(h), np.full_like(h, last)
        d1 = self.sizing.down_ports[0]
        if self.rail_optimized:
            first = (h // d1) * self.rails
            return first, first + self.rails - 1
        nics = self.nics_per_host
        return (h * nics) // d1, (h * nics + nics - 1) // d1


def fat_tree_layout(
    hosts: int, nics_per_host: int, radix: int, tiers: int,
    oversubscription: tuple[float, ...] = (), rail_optimized: bool = True,
) -> FabricLayout:
    """Size (with :func:`size_fat_tree`) and lay out a fat tree.

    Raises :class:`RadixError` when the endpoints do not fit, or when a three-tier tree has
    more pods than a core has ports (rounding leaves up per rail can do that): a core must
    reach every pod for the 6-hop diameter.
    """
    sizing = size_fat_tree(hosts, nics_per_host, radix, tiers, oversubscription, rail_optimized)
    if sizing.tiers == 3 and sizing.pods > radix:
        raise RadixError(
            f"{sizing.pods} pods of leaves but {radix}-port core switches reach at most "
            f"{radix} pods: use switches of at least {sizing.pods} ports, or NIC rails "
            "that divide the leaf count", sizing.pods, radix)
    return FabricLayout(sizing, hosts, nics_per_host, rail_optimized)


def fat_tree(
    hosts: int, nics_per_host: int, radix: int, tiers: int,
    oversubscription: tuple[float, ...] = (), rail_optimized: bool = True,
    link: LinkType = LinkType(50e9, 0.0, "optical"), nic_link: LinkType | None = None,
    switch: SwitchType | None = None,
) -> nx.Graph:
    """A fat tree of ``tiers`` tiers of ``radix``-port switches over ``hosts`` hosts with
    ``nics_per_host`` NIC ports each (one ``("nic", host, rail)`` node per port).

    ``link`` is the switch-to-switch link, ``nic_link`` the NIC-to-leaf link (default
    ``link``); bandwidths in bytes/s per direction. Raises :class:`RadixError` (how many
    ports would be needed) when the endpoints do not fit.
    """
    layout = fat_tree_layout(hosts, nics_per_host, radix, tiers, oversubscription,
                             rail_optimized)
    g = new_graph(f"fat_tree({hosts}x{nics_per_host}, k={radix}, tiers={tiers})")
    for h in range(hosts):
        for r in range(nics_per_host):
            g.add_node(("nic", h, r), kind="nic", host=h, rail=r)
    switch = switch or SwitchType(radix, link.bandwidth_bytes_per_s)
    add_fabric(g, layout, link, nic_link or link, switch)
    return g


def nic_leaf_links(layout: FabricLayout) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every NIC-to-leaf link, host-major: ``(host, rail, leaf)`` arrays."""
    host = np.repeat(np.arange(layout.hosts, dtype=np.int64), layout.nics_per_host)
    rail = np.tile(np.arange(layout.nics_per_host, dtype=np.int64), layout.hosts)
    leaf = np.broadcast_to(layout.leaf_of(host, rail), host.shape).astype(np.int64)
    return host, rail, leaf


def leaf_spine_links(layout: FabricLayout) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Leaf-to-tier-1 links in wiring order (leaf by leaf, tier-1 switch ascending):
    ``(leaf, spine, count)`` arrays; empty below two tiers.

    Two tiers: every leaf spreads its ``u1`` uplinks over all spines; three tiers: over
    the aggregation switches of its pod (:func:`~supernode.topology.graph.spread`, the
    offset rotating by ``u1 mod targets`` from leaf to leaf).
    """
    s = layout.sizing
    if s.tiers < 2:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty
    targets = s.switches[1] if s.tiers == 2 else layout.aggs_per_pod
    leaf = np.arange(layout.leaves, dtype=np.int64)[:, None]
    offset = leaf * (s.up_ports[0] % targets)
    count = np.asarray(spread_count(s.up_ports[0], targets, offset,
                                    np.arange(targets)[None, :]), dtype=np.int64)
    first = 0 if s.tiers == 2 else 1
    spine = np.arange(targets)[None, :] + (leaf // layout.leaves_per_pod) * targets * first
    keep = count > 0
    return np.broadcast_to(leaf, count.shape)[keep], spine[keep], count[keep]


def agg_core_links(layout: FabricLayout) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Aggregation-to-core links of a three-tier tree in wiring order: ``(agg, core,
    count)`` arrays (see the module docstring: uplink ``(j, u, pod)`` goes to core
    ``((j u2 + u) pods + pod) // k``); empty below three tiers."""
    s, aggs = layout.sizing, layout.aggs_per_pod
    if s.tiers < 3:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty
    k, pods, u2 = s.radix, s.pods, s.up_ports[1]
    j, u, pod = (a.ravel() for a in np.meshgrid(np.arange(aggs), np.arange(u2),
                                                 np.arange(pods), indexing="ij"))
    agg = pod * aggs + j
    core = ((j * u2 + u) * pods + pod) // k
    keys, first, count = np.unique(agg * s.switches[2] + core, return_index=True,
                                   return_counts=True)
    order = np.argsort(first, kind="stable")  # first appearance, as the uplinks are numbered
    keys, count = keys[order], count[order]
    return keys // s.switches[2], keys % s.switches[2], count.astype(np.int64)


def add_fabric(
    g: nx.Graph, layout: FabricLayout, link: LinkType, nic_link: LinkType, switch: SwitchType,
) -> None:
    """Add the switches and links of ``layout`` to ``g``; NIC nodes must already exist."""
    s = layout.sizing
    names = ("leaf", "spine", "core")[: s.tiers]
    for tier, count in zip(names, s.switches, strict=True):
        for i in range(count):
            add_switch(g, (tier, i), tier, switch)
    for h, r, leaf in zip(*(a.tolist() for a in nic_leaf_links(layout)), strict=True):
        add_link(g, ("nic", h, r), ("leaf", leaf), nic_link, "leaf")
    for leaf, spine, count in zip(*(a.tolist() for a in leaf_spine_links(layout)),
                                  strict=True):
        add_link(g, ("leaf", leaf), ("spine", spine), link, "spine", count)
    for agg, core, count in zip(*(a.tolist() for a in agg_core_links(layout)), strict=True):
        add_link(g, ("spine", agg), ("core", core), link, "core", count)

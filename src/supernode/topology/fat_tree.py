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

from collections import Counter
from dataclasses import dataclass

import networkx as nx
import numpy as np

from supernode.topology.graph import LinkType, SwitchType, add_link, add_switch, new_graph, spread
from supernode.topology.sizing import FatTreeSizing, RadixError, size_fat_tree


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

    def leaf_of(self, host: int, rail: int) -> int:
        """Leaf index that NIC ``rail`` of ``host`` plugs into."""
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


def add_fabric(
    g: nx.Graph, layout: FabricLayout, link: LinkType, nic_link: LinkType, switch: SwitchType,
) -> None:
    """Add the switches and links of ``layout`` to ``g``; NIC nodes must already exist."""
    s = layout.sizing
    names = ("leaf", "spine", "core")[: s.tiers]
    for tier, count in zip(names, s.switches, strict=True):
        for i in range(count):
            add_switch(g, (tier, i), tier, switch)
    for h in range(layout.hosts):
        for r in range(layout.nics_per_host):
            add_link(g, ("nic", h, r), ("leaf", layout.leaf_of(h, r)), nic_link, "leaf")
    if s.tiers == 2:
        for leaf in range(s.switches[0]):
            offset = leaf * (s.up_ports[0] % s.switches[1])
            for spine, count in spread(s.up_ports[0], s.switches[1], offset=offset):
                add_link(g, ("leaf", leaf), ("spine", spine), link, "spine", count)
    if s.tiers == 3:
        _add_pods(g, layout, link)
        _add_cores(g, layout, link)


def _add_pods(g: nx.Graph, layout: FabricLayout, link: LinkType) -> None:
    per_pod, aggs = layout.leaves_per_pod, layout.aggs_per_pod
    for leaf in range(layout.leaves):
        pod = leaf // per_pod
        offset = leaf * (layout.sizing.up_ports[0] % aggs)
        for j, count in spread(layout.sizing.up_ports[0], aggs, offset=offset):
            add_link(g, ("leaf", leaf), ("spine", pod * aggs + j), link, "spine", count)


def core_wiring(layout: FabricLayout) -> Counter[tuple[int, int]]:
    """Links between aggregation switch ``a`` and core ``c``: ``{(a, c): count}``."""
    s, aggs = layout.sizing, layout.aggs_per_pod
    k, pods, u2 = s.radix, s.pods, s.up_ports[1]
    wiring: Counter[tuple[int, int]] = Counter()
    for j in range(aggs):
        for u in range(u2):
            base = (j * u2 + u) * pods
            for pod in range(pods):
                wiring[(pod * aggs + j, (base + pod) // k)] += 1
    return wiring


def _add_cores(g: nx.Graph, layout: FabricLayout, link: LinkType) -> None:
    for (agg, core), count in core_wiring(layout).items():
        add_link(g, ("spine", agg), ("core", core), link, "core", count)

"""Routes between accelerators: inside a scale-up domain, or NIC to NIC over the fabric.

A flow between two accelerators of one domain takes the domain's shortest paths (NVSwitch
planes, torus links) under the scale-up policy (``spray`` by default: NVLink stripes a
transfer over every plane). Any other flow leaves through a NIC:

``src -> [scale-up hop to a proxy] -> NIC -> leaf -> ... -> leaf -> NIC -> [proxy hop] -> dst``

On a rail-optimised fabric with ``rail_aligned`` (NCCL's PXN), the source first hands the
data over the scale-up domain to the GPU of its host on the destination's rail, so the
fabric path stays on one rail. A NIC whose links are down is replaced by the next working
rail of the same host (through its GPU), so a failed NIC or leaf reroutes instead of
failing. Inside the fabric, the fabric policy (``ecmp`` by default) picks among equal-cost
next hops. ECMP hashes use local node numbers inside a domain, so identical domains route
identically (translation-invariant).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from supernode.errors import InputError
from supernode.netsim.network import (
    FABRIC_CODES,
    NIC,
    SCALE_UP_CODES,
    SWITCH,
    TIER_CODES,
    Network,
)
from supernode.netsim.policies import ROUTING_POLICIES, flow_keys
from supernode.netsim.subgraph import LocalShape, SubGraph, build_subgraph, walk

#: Tier code of direct accelerator-to-accelerator links (torus, mesh): their ends transit.
DIRECT = TIER_CODES["scale_up"]


@dataclass(frozen=True)
class RoutingConfig:
    """Routing choices: policy names (see :mod:`.policies`), rail alignment, hash seed."""

    fabric: str = "ecmp"
    scale_up: str = "spray"
    rail_aligned: bool = True
    seed: int = 0


@dataclass(frozen=True)
class Routes:
    """Routes of ``n`` flows: ``(flow, link, share)`` triples, latency per flow (s)."""

    flow: np.ndarray
    link: np.ndarray
    share: np.ndarray
    latency_s: np.ndarray

    def vector(self) -> tuple[np.ndarray, np.ndarray]:
        """Links used and flows per link (summed shares) over all flows."""
        links, inv = np.unique(self.link, return_inverse=True)
        return links, np.bincount(inv, weights=self.share, minlength=links.size)


@dataclass
class Segments:
    """Accumulates path segments of ``n`` flows; latencies of segments add up."""

    n: int
    flows: list[np.ndarray] = field(default_factory=list)
    links: list[np.ndarray] = field(default_factory=list)
    shares: list[np.ndarray] = field(default_factory=list)
    latency_s: np.ndarray | None = None

    def add(self, flows: np.ndarray, links: np.ndarray, shares: np.ndarray) -> None:
        """Add triples (global flow numbers)."""
        self.flows.append(flows)
        self.links.append(links)
        self.shares.append(shares)

    def delay(self, flows: np.ndarray, seconds: np.ndarray) -> None:
        """Add latency to flows."""
        if self.latency_s is None:
            self.latency_s = np.zeros(self.n)
        np.add.at(self.latency_s, flows, seconds)

    def routes(self) -> Routes:
        """The accumulated :class:`Routes`."""
        lat = self.latency_s if self.latency_s is not None else np.zeros(self.n)
        if not self.flows:
            empty = np.zeros(0, dtype=np.int64)
            return Routes(empty, empty, np.zeros(0), lat)
        return Routes(np.concatenate(self.flows), np.concatenate(self.links),
                      np.concatenate(self.shares), lat)


class Router:
    """Computes :class:`Routes` on one (possibly degraded) :class:`Network`."""

    def __init__(self, net: Network, config: RoutingConfig = RoutingConfig()) -> None:
        self.net, self.config = net, config
        self.fabric_policy = ROUTING_POLICIES.get(config.fabric, "routing.fabric")
        self.scale_up_policy = ROUTING_POLICIES.get(config.scale_up, "routing.scale_up")
        usable = net.up & (net.capacity_bytes_per_s > 0)
        self.usable = usable
        self.transit = net.kind == SWITCH
        self.transit[np.unique(net.tail[usable & (net.tier == DIRECT)])] = True
        su = np.flatnonzero(usable & np.isin(net.tier, list(SCALE_UP_CODES)))
        dom = net.domain[net.tail[su]]
        order = np.argsort(dom, kind="stable")
        su, dom = su[order], dom[order]
        names = np.unique(dom)
        parts = np.split(su, np.searchsorted(dom, names)[1:]) if su.size else []
        self._domain_links = {int(d): part for d, part in zip(names.tolist(), parts,
                                                              strict=True)}
        self._domains: dict[int, SubGraph | None] = {}
        self._shapes: dict[bytes, LocalShape] = {}
        fab = usable & np.isin(net.tier, list(FABRIC_CODES))
        fab &= (net.kind[net.tail] == SWITCH) & (net.kind[net.head] == SWITCH)
        links = np.flatnonzero(fab)
        self.fabric = (self._subgraph(links, None) if links.size else None)
        self._nics(usable)

    def _subgraph(self, links: np.ndarray, shapes: dict | None) -> SubGraph:
        net = self.net
        return build_subgraph(net.tail, net.head, net.capacity_bytes_per_s, net.latency_s,
                              net.node_latency_s, links, self.transit, shapes)

    def _nics(self, usable: np.ndarray) -> None:
        """NIC -> leaf links, whether each NIC works, and which GPU owns (host, rail)."""
        net = self.net
        up = np.flatnonzero((net.kind[net.tail] == NIC) & (net.kind[net.head] == SWITCH))
        self.nic_up_link = dict(zip(net.tail[up].tolist(), up.tolist(), strict=True))
        self.nic_ok = {n: bool(usable[pcie] and usable[pcie ^ 1]
                               and n in self.nic_up_link and usable[self.nic_up_link[n]]
                               and usable[self.nic_up_link[n] ^ 1])
                       for n, pcie in net.nic_link.items()}
        acc_of_node = {int(node): i for i, node in enumerate(net.acc_node.tolist())}
        self.host_rails: dict[int, dict[int, int]] = {}
        for nic, pcie in net.nic_link.items():
            acc = acc_of_node[int(net.tail[pcie])]
            self.host_rails.setdefault(int(net.acc_host[acc]), {})[int(net.rail[nic])] = acc
        hosts = int(net.acc_host.max()) + 1 if net.acc_host.size else 0
        rails = int(net.rail.max()) + 1 if net.rail.size else 0
        self.rail_table = np.full((max(hosts, 1), max(rails, 1)), -1, dtype=np.int64)
        for host, table in self.host_rails.items():
            for rail, acc in table.items():
                self.rail_table[host, rail] = acc
        self.nic_ok_node = np.zeros(len(net.nodes) + 1, dtype=bool)
        for nic, ok in self.nic_ok.items():
            self.nic_ok_node[nic] = ok

    def domain_graph(self, domain: int) -> SubGraph | None:
        """Scale-up subgraph of ``domain`` (None when it has no usable scale-up link)."""
        if domain not in self._domains:
            links = self._domain_links.get(domain)
            self._domains[domain] = (None if links is None
                                     else self._subgraph(links, self._shapes))
        return self._domains[domain]

    def route(self, src: np.ndarray, dst: np.ndarray, load: np.ndarray | None = None
              ) -> Routes:
        """Routes of flows from accelerators ``src[i]`` to ``dst[i]`` (indices).

        ``load``: flows per byte/s now on each link, for the ``adaptive`` policy.
        Raises :class:`InputError` when a pair is disconnected.
        """
        from supernode.netsim.fabric_path import fabric_routes

        src, dst = np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64)
        keys = flow_keys(self.config.seed, src, dst)
        seg = Segments(src.size)
        net = self.net
        ds, dd = net.acc_domain[src], net.acc_domain[dst]
        same = np.flatnonzero((ds == dd) & (ds >= 0) & (src != dst))
        inside = same[self.reachable(src[same], dst[same])]
        self.scale_up(src[inside], dst[inside], keys[inside], inside, seg)
        outside = np.ones(src.size, dtype=bool)
        outside[inside] = False
        rest = np.flatnonzero(outside & (src != dst))
        if rest.size:
            fabric_routes(self, src[rest], dst[rest], keys[rest], load, rest, seg)
        return seg.routes()

    def _by_shape(self, src: np.ndarray, dst: np.ndarray):
        """Same-domain pairs grouped by domain shape: (shape, positions, local src, local
        dst, domain row per flow, stacked arc -> link table); None shape: no domain graph."""
        net = self.net
        doms = net.acc_domain[src]
        groups: dict[int, tuple[LocalShape, list[int]]] = {}
        for d in np.unique(doms).tolist():
            sub = self.domain_graph(int(d))
            if sub is not None:
                groups.setdefault(id(sub.shape), (sub.shape, []))[1].append(int(d))
        for shape, members in groups.values():
            subs = [self.domain_graph(d) for d in members]
            row_of = np.full(int(doms.max()) + 1, -1, dtype=np.int64)
            row_of[members] = np.arange(len(members))
            pos = np.flatnonzero(row_of[doms] >= 0)
            rows = row_of[doms[pos]]
            nodes = np.stack([s.nodes for s in subs])
            s_loc = _local(nodes, rows, net.acc_node[src[pos]])
            t_loc = _local(nodes, rows, net.acc_node[dst[pos]])
            yield shape, pos, s_loc, t_loc, rows, np.stack([s.arc_link for s in subs])

    def reachable(self, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
        """Mask of same-domain pairs joined by a scale-up path inside their domain."""
        ok = np.zeros(src.size, dtype=bool)
        if src.size == 0:
            return ok
        for shape, pos, s, t, _, _ in self._by_shape(src, dst):
            good = (s >= 0) & (t >= 0)
            for target in np.unique(t[good]).tolist():
                sel = good & (t == target)
                good[sel] = np.isfinite(shape.dist(target)[s[sel]])
            ok[pos] = good
        return ok

    def scale_up(self, src: np.ndarray, dst: np.ndarray, keys: np.ndarray,
                 flows: np.ndarray, seg: Segments) -> None:
        """Add scale-up paths ``src -> dst`` (reachable same-domain pairs) to ``seg``;
        ``flows`` are the pairs' flow numbers in ``seg``."""
        if src.size == 0:
            return
        for shape, pos, s, t, rows, table in self._by_shape(src, dst):
            w = walk(shape, s, t, keys[pos], self.scale_up_policy)
            seg.add(flows[pos][w.flow], table[rows[w.flow], w.arc], w.share)
            seg.delay(flows[pos], w.latency_s)

    def fabric_walk(self, src_nodes: np.ndarray, dst_nodes: np.ndarray, keys: np.ndarray,
                    load: np.ndarray | None, flows: np.ndarray, seg: Segments) -> None:
        """Add fabric paths between switches (global node indices) to ``seg``."""
        sub = self.fabric
        if sub is None:
            raise InputError("routing", "the cluster has no scale-out fabric between its "
                                        "scale-up domains")
        arc_load = load[sub.arc_link] if load is not None else None
        w = walk(sub.shape, sub.local(src_nodes), sub.local(dst_nodes), keys,
                 self.fabric_policy, arc_load)
        seg.add(flows[w.flow], sub.arc_link[w.arc], w.share)
        seg.delay(flows, w.latency_s)


def _local(nodes: np.ndarray, rows: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """Local index of ``wanted[i]`` in ``nodes[rows[i]]`` (sorted rows); -1 if absent."""
    width = nodes.shape[1]
    offset = rows * width
    flat = nodes.ravel()
    # rows are sorted and disjoint ranges of global ids: search each row's slice
    pos = np.empty(wanted.size, dtype=np.int64)
    for r in np.unique(rows).tolist():
        sel = rows == r
        pos[sel] = np.searchsorted(nodes[r], wanted[sel])
    pos = np.minimum(pos, width - 1)
    found = flat[offset + pos] == wanted
    return np.where(found, pos, -1)

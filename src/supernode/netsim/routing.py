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

from collections.abc import Callable
from functools import cached_property

import numpy as np

from supernode.errors import InputError
from supernode.netsim.domains import domain_table
from supernode.netsim.fabric_path import fabric_routes
from supernode.netsim.network import (
    FABRIC_CODES,
    NIC,
    SCALE_UP_CODES,
    SWITCH,
    TIER_CODES,
    Network,
)
from supernode.netsim.policies import ROUTING_POLICIES, Adaptive, flow_keys
from supernode.netsim.routes import (
    MEMO_MAX_FLOWS,
    LinkLoad,
    Routes,
    RoutingConfig,
    Segments,
)
from supernode.netsim.subgraph import SubGraph, build_subgraph, walk
from supernode.netsim.updown import fat_tree_shape
from supernode.netsim.walk_plan import WalkPlan, adaptive_walk, build_plan

#: Pair lists (with their flow keys) whose scale-up routes one router remembers (the same
#: transfers recur every micro-batch; under adaptive fabric routing only the fabric part
#: is routed again).
MEMO_ENTRIES = 4096
#: Tier code of direct accelerator-to-accelerator links (torus, mesh): their ends transit.
DIRECT = TIER_CODES["scale_up"]
#: Flows per byte/s on every link, as an array or computed for the links read.
LinkLoads = np.ndarray | LinkLoad


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
        self.domains = domain_table(net.tail, net.head, net.capacity_bytes_per_s,
                                    net.latency_s, net.node_latency_s, self.transit, su,
                                    net.domain[net.tail[su]])
        fab = usable & np.isin(net.tier, list(FABRIC_CODES))
        fab &= (net.kind[net.tail] == SWITCH) & (net.kind[net.head] == SWITCH)
        links = np.flatnonzero(fab)
        self.fabric = self._fabric(links) if links.size else None
        self._nics(usable)
        self._reachable_memo: dict[bytes, np.ndarray] = {}
        self._scale_up_memo: dict[bytes, tuple[list, np.ndarray]] = {}
        self._plans: dict[bytes, WalkPlan] = {}
        self._segments_memo: dict[bytes, Segments] = {}
        #: the fabric policy is the registered least-loaded one: fabric walks under a load
        #: take the remembered plan of their pair list (:mod:`.walk_plan`, same routes)
        self.planned = type(self.fabric_policy) is Adaptive

    def _fabric(self, links: np.ndarray) -> SubGraph:
        """The fabric's subgraph, with closed-form up/down candidates on a regular fat tree
        (:mod:`.updown`) unless ``config.closed_form`` is off."""
        net = self.net
        sub = build_subgraph(net.tail, net.head, net.capacity_bytes_per_s, net.latency_s,
                             net.node_latency_s, links, self.transit)
        if self.config.closed_form and net.node_tier.size:
            shape = fat_tree_shape(sub.shape, net.node_tier[sub.nodes])
            if shape is not None:
                # an UpDownShape stands in for its base LocalShape (__getattr__ delegates)
                return SubGraph(sub.nodes, sub.arc_link, shape)  # type: ignore[arg-type]
        return sub

    def _nics(self, usable: np.ndarray) -> None:
        """NIC -> leaf links, whether each NIC works, and which GPU owns (host, rail)."""
        net = self.net
        up = np.flatnonzero((net.kind[net.tail] == NIC) & (net.kind[net.head] == SWITCH))
        self.nic_up_link = dict(zip(net.tail[up].tolist(), up.tolist(), strict=True))
        up_of = np.full(len(net.nodes) + 1, -1, dtype=np.int64)
        up_of[net.tail[up]] = up
        nics = np.fromiter(net.nic_link.keys(), dtype=np.int64, count=len(net.nic_link))
        pcie = np.fromiter(net.nic_link.values(), dtype=np.int64, count=len(net.nic_link))
        lift = up_of[nics]
        ok = usable[pcie] & usable[pcie ^ 1] & (lift >= 0)
        ok &= usable[np.maximum(lift, 0)] & usable[np.maximum(lift, 0) ^ 1]
        self.nic_ok = dict(zip(nics.tolist(), ok.tolist(), strict=True))
        acc_of_node = np.full(len(net.nodes), -1, dtype=np.int64)
        acc_of_node[net.acc_node] = np.arange(net.acc_node.size)
        owner = acc_of_node[net.tail[pcie]]
        hosts = int(net.acc_host.max()) + 1 if net.acc_host.size else 0
        rails = int(net.rail.max()) + 1 if net.rail.size else 0
        self.rail_table = np.full((max(hosts, 1), max(rails, 1)), -1, dtype=np.int64)
        self.rail_table[net.acc_host[owner], net.rail[nics]] = owner
        self._rail_hosts = np.unique(net.acc_host[owner])
        self.nic_ok_node = np.zeros(len(net.nodes) + 1, dtype=bool)
        self.nic_ok_node[nics] = ok

    @cached_property
    def load_links(self) -> np.ndarray:
        """Links whose load a route may read: the fabric's (scale-up walks see none)."""
        return self.fabric.arc_link if self.fabric is not None else np.zeros(0, np.int64)

    @cached_property
    def host_rails(self) -> dict[int, dict[int, int]]:
        """``{host: {rail: accelerator that owns the host's NIC on that rail}}``."""
        out: dict[int, dict[int, int]] = {}
        for host in self._rail_hosts.tolist():
            row = self.rail_table[host]
            rails = np.flatnonzero(row >= 0)
            out[host] = dict(zip(rails.tolist(), row[rails].tolist(), strict=True))
        return out

    def domain_graph(self, domain: int) -> SubGraph | None:
        """Scale-up subgraph of ``domain`` (None when it has no usable scale-up link)."""
        return self.domains.subgraph(domain)

    def route(self, src: np.ndarray, dst: np.ndarray,
              load: LinkLoads | Callable[[], LinkLoads] | None = None) -> Routes:
        """Routes of flows from accelerators ``src[i]`` to ``dst[i]`` (indices).

        ``load``: flows per byte/s now on each link (an array, or a :class:`LinkLoad`
        that divides only the links read), for the ``adaptive`` policy; or a function
        giving it, called only when some pair leaves its scale-up domain.
        Raises :class:`InputError` when a pair is disconnected.
        """
        src, dst = np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64)
        key = src.tobytes() + b"|" + dst.tobytes()
        seg = self._segments_memo.get(key)
        if seg is None:
            seg = self._segments(src, dst)
            if self.planned and src.size <= MEMO_MAX_FLOWS:  # routed again under each load
                self._remember(self._segments_memo, key, seg)
        if seg.open_fabric is None:
            return seg.routes()
        now = load() if callable(load) else load
        return seg.routes(lambda s, d, k: self.fabric_walk(s, d, k, now))

    def _segments(self, src: np.ndarray, dst: np.ndarray) -> Segments:
        """The segments of the pairs, the fabric part between leaves left open (they
        depend on the network and the pairs alone: a router under ``adaptive`` remembers
        them; a load-blind route is remembered whole by its caller)."""
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
            fabric_routes(self, src[rest], dst[rest], keys[rest], rest, seg)
        return seg

    def _by_shape(self, src: np.ndarray, dst: np.ndarray):
        """Same-domain pairs grouped by domain shape (in order of each shape's lowest
        domain): (shape, positions, local src, local dst, table row per flow, the shape's
        arc -> link table); pairs of domains without a usable link are left out."""
        table = self.domains
        if table.shape_of.size == 0:  # no domain has a usable scale-up link (all failed)
            return
        doms = self.net.acc_domain[src]
        known = (doms >= 0) & (doms < table.shape_of.size)
        shape = np.where(known, table.shape_of[np.where(known, doms, 0)], -1)
        present = np.flatnonzero(shape >= 0)
        if present.size == 0:
            return
        kinds, first = np.unique(shape[present], return_index=True)
        lowest = np.array([doms[present][shape[present] == k].min() for k in kinds.tolist()])
        for k in kinds[np.argsort(lowest, kind="stable")].tolist():
            pos = np.flatnonzero(shape == k)
            d = doms[pos]
            s_loc = table.local(self.net.acc_node[src[pos]], d)
            t_loc = table.local(self.net.acc_node[dst[pos]], d)
            yield (table.shapes[k], pos, s_loc, t_loc, table.row_of[d], table.arc_link[k])

    def reachable(self, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
        """Mask of same-domain pairs joined by a scale-up path inside their domain
        (remembered per pair list: it depends on the network alone)."""
        key = src.tobytes() + b"|" + dst.tobytes()
        hit = self._reachable_memo.get(key)
        if hit is None:
            hit = self._remember(self._reachable_memo, key, self._reachable(src, dst))
        return hit.copy()

    def _reachable(self, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
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
        key = src.tobytes() + b"|" + dst.tobytes() + b"|" + keys.tobytes()
        hit = self._scale_up_memo.get(key)
        if hit is None:
            hit = self._remember(self._scale_up_memo, key, self._scale_up(src, dst, keys))
        parts, latency_s = hit
        for local, links, shares in parts:
            seg.add(flows[local], links, shares)
        seg.delay(flows, latency_s)

    def _scale_up(self, src: np.ndarray, dst: np.ndarray, keys: np.ndarray
                  ) -> tuple[list[tuple[np.ndarray, np.ndarray, np.ndarray]], np.ndarray]:
        """The scale-up segments of the pairs, by position in ``src`` (one part per domain
        shape, in order), and each pair's scale-up latency in s. The walk's policy sees
        no link load, so the answer depends on the pairs and their flow keys alone (a
        hop to or from a NIC carries the key of the whole path, not of the hop)."""
        parts = []
        latency_s = np.zeros(src.size)
        for shape, pos, s, t, rows, table in self._by_shape(src, dst):
            w = walk(shape, s, t, keys[pos], self.scale_up_policy)
            parts.append((pos[w.flow], table[rows[w.flow], w.arc], w.share))
            latency_s[pos] += w.latency_s  # each pair is in one shape: added once
        return parts, latency_s

    @staticmethod
    def _remember(memo: dict, key: bytes, value):
        """Store ``value`` under ``key`` in ``memo`` (emptied once it holds
        :data:`MEMO_ENTRIES`), and return it."""
        if len(memo) >= MEMO_ENTRIES:
            memo.clear()
        memo[key] = value
        return value

    def fabric_walk(self, src_nodes: np.ndarray, dst_nodes: np.ndarray, keys: np.ndarray,
                    load: LinkLoads | None
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Fabric paths between switches (global node indices) under ``load``:
        ``(flow, link, share, latency_s)``, flows numbered by position in the arguments."""
        sub = self.fabric
        if sub is None:
            raise InputError("routing", "the cluster has no scale-out fabric between its "
                                        "scale-up domains")
        if self.planned and load is not None:
            key = src_nodes.tobytes() + b"|" + dst_nodes.tobytes() + b"|" + keys.tobytes()
            plan = self._plans.get(key)
            if plan is None:
                plan = build_plan(sub.shape, sub.local(src_nodes), sub.local(dst_nodes), keys)
                if keys.size <= MEMO_MAX_FLOWS:
                    self._remember(self._plans, key, plan)
            seen = load
            w = adaptive_walk(plan, sub.shape.arc_cap,
                              lambda arcs: seen[sub.arc_link[arcs]])
        else:
            arc_load = load[sub.arc_link] if load is not None else None
            w = walk(sub.shape, sub.local(src_nodes), sub.local(dst_nodes), keys,
                     self.fabric_policy, arc_load)
        return w.flow, sub.arc_link[w.arc], w.share, w.latency_s

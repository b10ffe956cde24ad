"""Flows that leave their scale-up domain: NIC choice, proxies, and the five path segments.

``src -> [scale-up to proxy] -> PCIe -> NIC -> leaf -> fabric -> leaf -> NIC -> PCIe ->
[scale-up to dst]``; see :mod:`supernode.netsim.routing` for the rules.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from supernode.errors import InputError
from supernode.netsim.network import Network
from supernode.netsim.routes import RoutingConfig, Segments


class RouterView(Protocol):
    """What this module reads of the :class:`supernode.netsim.routing.Router` that calls
    it (a protocol: the router imports this module, never the other way round)."""

    net: Network
    config: RoutingConfig
    nic_ok: dict[int, bool]
    nic_ok_node: np.ndarray
    nic_up_link: dict[int, int]
    rail_table: np.ndarray

    @property
    def host_rails(self) -> dict[int, dict[int, int]]:
        """``{host: {rail: accelerator that owns the host's NIC on that rail}}``."""
        ...

    def reachable(self, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
        """Mask of same-domain pairs joined by a scale-up path inside their domain."""
        ...

    def scale_up(self, src: np.ndarray, dst: np.ndarray, keys: np.ndarray,
                 flows: np.ndarray, seg: Segments) -> None:
        """Add scale-up paths ``src -> dst`` to ``seg``."""
        ...


def _endpoint(router: RouterView, acc: int, rail: int) -> tuple[int, int]:
    """(proxy accelerator, its NIC node) on ``rail`` of ``acc``'s host, failing over to the
    next working rail; the accelerator's own NIC when the host has no rail table."""
    net = router.net
    rails = router.host_rails.get(int(net.acc_host[acc]), {})
    if not rails:
        nic = int(net.acc_nic[acc])
        if nic < 0 or not router.nic_ok.get(nic, False):
            raise InputError("routing", f"no path: accelerator {acc} has no working NIC to "
                                        "leave its scale-up domain; the job cannot run "
                                        "with these failures")
        return acc, nic
    order = sorted(rails)
    start = order.index(rail) if rail in rails else 0
    for r in order[start:] + order[:start]:
        proxy = rails[r]
        nic = int(net.acc_nic[proxy])
        if router.nic_ok.get(nic, False) and _reachable(router, acc, proxy):
            return proxy, nic
    raise InputError("routing", f"no path: every NIC of accelerator {acc}'s host is "
                                "down or unreachable; the job cannot run with these "
                                "failures")


def _reachable(router: RouterView, a: int, b: int) -> bool:
    """True when ``a`` and ``b`` are one accelerator or joined inside their domain."""
    net = router.net
    if a == b:
        return True
    if net.acc_domain[a] != net.acc_domain[b] or net.acc_domain[a] < 0:
        return False
    return bool(router.reachable(np.array([a]), np.array([b]))[0])


def _proxies(router: RouterView, acc: np.ndarray, rail: np.ndarray) -> tuple[np.ndarray, ...]:
    """Proxy on ``rail`` of each accelerator's host and its NIC; -1 where that does not
    work (no such NIC, NIC down, proxy unreachable inside the domain)."""
    net = router.net
    table = router.rail_table
    host = net.acc_host[acc]
    valid = (host >= 0) & (rail >= 0) & (rail < table.shape[1])
    proxy = np.where(valid, table[np.maximum(host, 0), np.clip(rail, 0, table.shape[1] - 1)],
                     -1)
    nic = np.where(proxy >= 0, net.acc_nic[np.maximum(proxy, 0)], -1)
    ok = (proxy >= 0) & (nic >= 0) & router.nic_ok_node[nic]
    hop = np.flatnonzero(ok & (proxy != acc))
    ok[hop] = router.reachable(acc[hop], proxy[hop])
    return np.where(ok, proxy, -1), np.where(ok, nic, -1)


def choose_endpoints(router: RouterView, src: np.ndarray, dst: np.ndarray
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Proxies and NICs of each flow: ``(a_s, nic_s, a_d, nic_d)`` arrays."""
    net = router.net
    aligned = router.config.rail_aligned and net.rail_optimized
    own_s, own_d = net.acc_nic[src], net.acc_nic[dst]
    rail_d = np.where(own_d >= 0, net.rail[np.maximum(own_d, 0)], 0)
    rail_s = rail_d if aligned else np.where(own_s >= 0, net.rail[np.maximum(own_s, 0)], 0)
    a_s, nic_s = _proxies(router, src, rail_s)
    a_d, nic_d = _proxies(router, dst, rail_d)
    cache: dict[tuple[int, int], tuple[int, int]] = {}
    for i in np.flatnonzero((a_s < 0) | (a_d < 0)).tolist():
        for acc, rail, proxy, nic in ((src, rail_s, a_s, nic_s), (dst, rail_d, a_d, nic_d)):
            key = (int(acc[i]), int(rail[i]))
            if key not in cache:
                cache[key] = _endpoint(router, *key)
            proxy[i], nic[i] = cache[key]
    return a_s, nic_s, a_d, nic_d


def fabric_routes(router: RouterView, src: np.ndarray, dst: np.ndarray, keys: np.ndarray,
                  flows: np.ndarray, seg: Segments) -> None:
    """Add the segments of flows ``src -> dst`` (crossing the fabric) to ``seg``, the
    part between different leaves left open (:meth:`Segments.fabric`: it may follow the
    load); ``flows`` are their flow numbers in ``seg``."""
    net = router.net
    a_s, nic_s, a_d, nic_d = choose_endpoints(router, src, dst)
    hop = np.flatnonzero(a_s != src)
    router.scale_up(src[hop], a_s[hop], keys[hop], flows[hop], seg)
    pcie_s = np.array([net.nic_link[n] for n in nic_s.tolist()], dtype=np.int64)
    up_s = np.array([router.nic_up_link[n] for n in nic_s.tolist()], dtype=np.int64)
    up_d = np.array([router.nic_up_link[n] for n in nic_d.tolist()], dtype=np.int64)
    pcie_d = np.array([net.nic_link[n] for n in nic_d.tolist()], dtype=np.int64) ^ 1
    leaf_s, leaf_d = net.head[up_s], net.head[up_d]
    down_d = up_d ^ 1
    fixed = np.concatenate([pcie_s, up_s, down_d, pcie_d])
    seg.add(np.tile(flows, 4), fixed, np.ones(fixed.size))
    seg.delay(flows, net.latency_s[pcie_s] + net.latency_s[up_s] + net.latency_s[down_d]
              + net.latency_s[pcie_d] + net.node_latency_s[leaf_s]
              + np.where(leaf_s != leaf_d, net.node_latency_s[leaf_d], 0.0))
    cross = np.flatnonzero(leaf_s != leaf_d)
    if cross.size:
        seg.fabric(leaf_s[cross], leaf_d[cross], keys[cross], flows[cross])
    hop = np.flatnonzero(a_d != dst)
    router.scale_up(a_d[hop], dst[hop], keys[hop], flows[hop], seg)

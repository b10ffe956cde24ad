"""From the flows of a transfer to path vectors: routed, deduplicated and remembered.

A coupled transfer (flows in lockstep) is one class on one path vector, the totals per
link of its distinct ``(src, dst)`` pairs (:mod:`.path_vectors`); an uncoupled one is a
class per flow, each on its own vector. Routes that never read the link load are a
function of the pairs alone and are remembered, and so are the vectors built on them (by
content, and by the identity of the arrays a cached phase passes again); routes that read
the load (adaptive routing) are routed anew each time.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from supernode.netsim.network import Network
from supernode.netsim.path_vectors import FixedTotals, inflate
from supernode.netsim.routes import MEMO_MAX_FLOWS, LinkLoad, Routes
from supernode.netsim.routing import Router
from supernode.netsim.vector_registry import Vectors


class FlowVectors:
    """The path vectors of the transfers of one run, registered in ``vectors``; ``load``
    is the live link load adaptive routing weighs (read only when ``adaptive``)."""

    def __init__(self, net: Network, router: Router, vectors: Vectors, load: LinkLoad,
                 adaptive: bool) -> None:
        self.net, self.router, self.vectors = net, router, vectors
        self._routes: dict[bytes, Routes] = {}
        self._vectors: dict[tuple, tuple[int, float]] = {}
        self._pairs: dict[bytes, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        self._fixed_totals = FixedTotals(net.tier)
        self._load = load
        self._by_identity: dict[tuple, tuple[np.ndarray, np.ndarray, Any]] = {}
        self._adaptive = adaptive

    def routes_for(self, src: np.ndarray, dst: np.ndarray) -> tuple[Routes, bool]:
        """Routes of the pairs and whether they are fixed: a route that never read the
        link load (every pair inside its scale-up domain, or a load-blind policy) is a
        function of the pairs alone and is remembered; one that read it is routed anew."""
        key = src.tobytes() + b"|" + dst.tobytes()
        hit = self._routes.get(key)
        if hit is not None:
            return hit, True
        read: list[bool] = []

        def load() -> LinkLoad:
            read.append(True)
            return self._link_load()

        r = self.router.route(src, dst, load if self._adaptive else None)
        if not read:
            self._routes[key] = r
        return r, not read

    def _link_load(self) -> LinkLoad:
        """Flows per byte/s now on each link (what adaptive routing weighs), divided for
        the links the router reads (a view of the live counts: read it at once)."""
        return self._load

    def per_flow(self, src: np.ndarray, dst: np.ndarray, efficiency: tuple[float, ...]
                 ) -> Iterator[tuple[int, float]]:
        """``(vector id, path latency in s)`` of each flow ``src[i] -> dst[i]`` of an
        uncoupled transfer, in flow order (each vector registered as it is yielded)."""
        r, _ = self.routes_for(src, dst)
        flow, link, latency_s = r.flow, r.link, r.latency_s
        share = inflate(self.net.tier, link, r.share, efficiency)
        order = np.argsort(flow, kind="stable")
        cuts = np.searchsorted(flow[order], np.arange(src.size + 1))
        for i in range(src.size):
            sel = order[cuts[i]:cuts[i + 1]]
            links, inv = np.unique(link[sel], return_inverse=True)
            mult = np.bincount(inv, weights=share[sel], minlength=links.size)
            yield self.vectors.add(links, mult), float(latency_s[i])

    def coupled(self, src: np.ndarray, dst: np.ndarray, reduce: bool,
                efficiency: tuple[float, ...] = ()) -> tuple[int, float]:
        """Path vector id and slowest path latency (s) of flows moving as one class."""
        same = (id(src), id(dst), reduce, efficiency)  # the same arrays again (cached phases)
        seen = self._by_identity.get(same)
        if seen is not None and seen[0] is src and seen[1] is dst:
            return seen[2]
        key = (src.tobytes(), dst.tobytes(), reduce, efficiency)
        hit = self._vectors.get(key)
        if hit is not None:
            self._by_identity[same] = (src, dst, hit)
            return hit
        usrc, udst, counts = self._distinct_pairs(key[0], key[1], src, dst)
        routes, fixed = self.routes_for(usrc, udst)  # shared by every efficiency
        links, mult = self._fixed_totals.totals(key, routes, counts, reduce, efficiency,
                                                again=not fixed
                                                and usrc.size <= MEMO_MAX_FLOWS)
        lat = routes.latency_s
        out = (self.vectors.add(links, mult), float(lat.max()))
        if fixed:
            self._vectors[key] = out
            self._by_identity[same] = (src, dst, out)
        return out

    def _distinct_pairs(self, src_bytes: bytes, dst_bytes: bytes, src: np.ndarray,
                        dst: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Distinct ``(src, dst)`` pairs and how often each occurs: identical pairs (ring
        channels sharing hops) are routed once (remembered per pair list)."""
        key = src_bytes + b"|" + dst_bytes
        hit = self._pairs.get(key)
        if hit is None:
            pair = src * (int(max(src.max(), dst.max())) + 1) + dst
            _, first, counts = np.unique(pair, return_index=True, return_counts=True)
            hit = (src[first], dst[first], counts)
            if src.size <= MEMO_MAX_FLOWS:
                self._pairs[key] = hit
        return hit

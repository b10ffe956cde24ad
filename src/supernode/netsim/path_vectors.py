"""From routes to a path vector: the links a class of flows crosses and its flows on each.

A coupled class routes its distinct ``(src, dst)`` pairs once; each pair's triples count
as often as the pair occurs (``counts``), divided by the protocol efficiency of the link's
tier, and summed per link (the largest share instead under in-network reduction). A route
whose fabric part follows the load (:attr:`Routes.open_part`) keeps its other triples
from one transfer to the next: their totals are computed once (:class:`FixedTotals`) and
only the open part's are summed again; the two touch disjoint links (the open part is the
fabric between leaves, the fixed part NICs, PCIe and scale-up links), so the totals per
link are the same numbers, summed in the same order, as over the whole route.
"""

from __future__ import annotations

import numpy as np

from supernode.netsim.routes import Routes


def inflate(tier: np.ndarray, link: np.ndarray, share: np.ndarray,
            efficiency: tuple[float, ...]) -> np.ndarray:
    """Shares divided by the protocol efficiency of each link's tier (``tier``: tier code
    of every link; no efficiency: line rate)."""
    if not efficiency:
        return share
    eff = np.asarray(efficiency, dtype=float)
    return share / eff[tier[link]]


def link_totals(flow: np.ndarray, link: np.ndarray, share: np.ndarray, counts: np.ndarray,
                reduce: bool) -> tuple[np.ndarray, np.ndarray]:
    """Distinct links (ascending) and flows on each: shares times the pair's count,
    summed per link in order, or their largest when switches reduce (``reduce``)."""
    if not reduce:
        share = share * counts[flow]
    links, inv = np.unique(link, return_inverse=True)
    mult: np.ndarray
    if reduce:
        mult = np.zeros(links.size)
        np.maximum.at(mult, inv, share)
    else:
        mult = np.bincount(inv, weights=share, minlength=links.size)
    return links, mult


class FixedTotals:
    """Totals of the fixed part of routes whose fabric part is open, per pair list."""

    def __init__(self, tier: np.ndarray) -> None:
        self.tier = tier
        self._memo: dict[tuple, tuple[np.ndarray, np.ndarray]] = {}

    def totals(self, key: tuple, routes: Routes, counts: np.ndarray, reduce: bool,
               efficiency: tuple[float, ...], again: bool = True
               ) -> tuple[np.ndarray, np.ndarray]:
        """Links and flows on each of ``routes`` (``key`` names the pair list, the
        reduction and the efficiency); unsorted where the open part is appended.
        ``again``: the pair list will be routed again (else nothing is kept)."""
        if routes.open_part is None or not again:
            share = inflate(self.tier, routes.link, routes.share, efficiency)
            return link_totals(routes.flow, routes.link, share, counts, reduce)
        a, b = routes.open_part
        fixed = self._memo.get(key)
        if fixed is None:
            keep = np.r_[0:a, b:routes.link.size]
            link = routes.link[keep]
            share = inflate(self.tier, link, routes.share[keep], efficiency)
            fixed = self._memo[key] = link_totals(routes.flow[keep], link, share, counts,
                                                  reduce)
        link = routes.link[a:b]
        share = inflate(self.tier, link, routes.share[a:b], efficiency)
        links, mult = link_totals(routes.flow[a:b], link, share, counts, reduce)
        return np.concatenate([fixed[0], links]), np.concatenate([fixed[1], mult])

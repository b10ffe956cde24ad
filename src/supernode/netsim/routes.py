"""The router's value types: its configuration, the routes it returns, and the path
segments it accumulates while routing (:mod:`supernode.netsim.routing` and the fabric
part of a path, :mod:`supernode.netsim.fabric_path`, both build on them).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class RoutingConfig:
    """Routing choices: policy names (see :mod:`.policies`), rail alignment, hash seed;
    ``closed_form``: up/down candidates on regular fat trees (:mod:`.updown`) instead of
    a shortest-path search (the same routes, found without searching)."""

    fabric: str = "ecmp"
    scale_up: str = "spray"
    rail_aligned: bool = True
    seed: int = 0
    closed_form: bool = True


@dataclass(frozen=True)
class LinkLoad:
    """Flows per byte/s on links (``flows / capacity_bytes_per_s``), divided only for the
    links indexed: adaptive routing reads a few candidates of a fabric's links."""

    flows: np.ndarray
    capacity_bytes_per_s: np.ndarray

    def __getitem__(self, links: np.ndarray) -> np.ndarray:
        """Flows per byte/s on ``links`` (the same numbers as dividing every link)."""
        return self.flows[links] / self.capacity_bytes_per_s[links]


@dataclass(frozen=True)
class Routes:
    """Routes of ``n`` flows: ``(flow, link, share)`` triples, latency per flow (s).

    ``open_part``: ``(start, stop)`` of the triples that followed the link load (the
    fabric between leaves, on links no other triple uses); None when none did."""

    flow: np.ndarray
    link: np.ndarray
    share: np.ndarray
    latency_s: np.ndarray
    open_part: tuple[int, int] | None = None

    def vector(self) -> tuple[np.ndarray, np.ndarray]:
        """Links used and flows per link (summed shares) over all flows."""
        links, inv = np.unique(self.link, return_inverse=True)
        return links, np.bincount(inv, weights=self.share, minlength=links.size)


#: Largest pair list whose load-independent parts are remembered between transfers under
#: adaptive routing (segments, walk plan, fixed link totals): a bigger one (a direct
#: all-to-all of 1,024 ranks is 1,047,552 pairs) is routed afresh, its memo would cost
#: more memory than it saves time.
MEMO_MAX_FLOWS = 65_536

#: Routes a pair list's fabric part: ``(switch sources, switch targets, flow keys) ->
#: (flow, link, share, latency_s)``, flows numbered by position in the arguments.
FabricWalk = Callable[[np.ndarray, np.ndarray, np.ndarray],
                      tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]


@dataclass
class Segments:
    """Accumulates path segments of ``n`` flows; latencies of segments add up.

    The fabric part (between the leaves) may be left open (:meth:`fabric`): the segments
    then depend on the pairs alone, are remembered, and :meth:`routes` walks the fabric
    each time under the load of that moment, at the place the part was left.
    """

    n: int
    flows: list[np.ndarray] = field(default_factory=list)
    links: list[np.ndarray] = field(default_factory=list)
    shares: list[np.ndarray] = field(default_factory=list)
    latency_s: np.ndarray | None = None
    #: ``(switch sources, switch targets, flow keys, flow numbers)`` of the open part
    open_fabric: tuple[np.ndarray, ...] | None = None
    _at: int = 0
    _cut: int = 0
    _later: list[tuple[np.ndarray, np.ndarray]] = field(default_factory=list)
    _joined: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None

    def add(self, flows: np.ndarray, links: np.ndarray, shares: np.ndarray) -> None:
        """Add triples (global flow numbers)."""
        self.flows.append(flows)
        self.links.append(links)
        self.shares.append(shares)

    def delay(self, flows: np.ndarray, seconds: np.ndarray) -> None:
        """Add latency to flows (after the open fabric part's, once one is left open)."""
        if self.open_fabric is not None:
            self._later.append((flows, seconds))
            return
        if self.latency_s is None:
            self.latency_s = np.zeros(self.n)
        np.add.at(self.latency_s, flows, seconds)

    def fabric(self, src: np.ndarray, dst: np.ndarray, keys: np.ndarray,
               flows: np.ndarray) -> None:
        """Leave the fabric part of flows ``flows`` open here: switch ``src[i] ->
        dst[i]`` with flow keys ``keys`` (one open part per route)."""
        self._at, self.open_fabric = len(self.flows), (src, dst, keys, flows)

    def routes(self, walk: FabricWalk | None = None) -> Routes:
        """The accumulated :class:`Routes`, an open fabric part routed by ``walk`` (given
        whenever a part is open); latencies add in the order they came, the fabric's in
        its place. Routes without an open part share the remembered arrays."""
        if self._joined is None:
            self._joined = self._join()
        flows, links, shares = self._joined
        lat = self.latency_s.copy() if self.latency_s is not None else np.zeros(self.n)
        if self.open_fabric is None:
            return Routes(flows, links, shares, lat)
        if walk is None:
            raise ValueError("the fabric part of these routes is open: give its walk")
        src, dst, keys, numbers = self.open_fabric
        f, link, share, walk_s = walk(src, dst, keys)
        np.add.at(lat, numbers, walk_s)
        for who, seconds in self._later:
            np.add.at(lat, who, seconds)
        cut = self._cut
        return Routes(np.concatenate([flows[:cut], numbers[f], flows[cut:]]),
                      np.concatenate([links[:cut], link, links[cut:]]),
                      np.concatenate([shares[:cut], share, shares[cut:]]), lat,
                      (cut, cut + link.size))

    def _join(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The fixed segments as three arrays (the open part goes at ``_cut``); the
        pieces are let go (a remembered route holds one copy)."""
        self._cut = sum(a.size for a in self.flows[:self._at])
        if not self.flows:
            empty = np.zeros(0, dtype=np.int64)
            return empty, empty, np.zeros(0)
        joined = (np.concatenate(self.flows), np.concatenate(self.links),
                  np.concatenate(self.shares))
        self.flows, self.links, self.shares = [], [], []
        return joined

"""The router's value types: its configuration, the routes it returns, and the path
segments it accumulates while routing (:mod:`supernode.netsim.routing` and the fabric
part of a path, :mod:`supernode.netsim.fabric_path`, both build on them).
"""

from __future__ import annotations

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

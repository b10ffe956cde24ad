"""The fluid state of the network: active flow classes, their rates, and link statistics.

Classes that share a *path vector* (the same links with the same multiplicities) are
identical to max-min fairness and always get the same rate, so rates are solved per
vector (registered by :mod:`.vector_registry`), with the vector's active classes as a
multiplicity. Only the connected component (vectors linked by shared links) around a
change is re-solved, and solutions are memoised by the component's ``(vector, active
classes)`` multiset: a pipeline repeats the same overlaps every micro-batch. Both
shortcuts are exact.

Link statistics kept on the fly: load (bytes/s), peak utilisation, time spent at or above
the hot threshold, and a log of each vector's total rate for time-binned utilisation.
"""

from __future__ import annotations

import numpy as np

from supernode.netsim.maxmin import check_max_min, max_min_rates
from supernode.netsim.vector_registry import Vectors

#: A link at or above this utilisation is hot (seed 003 §3.2).
HOT_UTILIZATION = 0.8


class FluidState:
    """Active classes by vector, per-vector rates, link load and utilisation statistics."""

    def __init__(self, capacity: np.ndarray, threshold: float = HOT_UTILIZATION,
                 check: bool = False, count_flows: bool | np.ndarray = False,
                 track_all: bool = False) -> None:
        """``check``: verify every max-min solution; ``count_flows``: keep active flows
        per link (adaptive routing): True on every link, or on the links of a mask (the
        ones routing reads; the others stay 0); ``track_all``: statistics of every link
        event by event instead of private links from their vector's history (for
        tests)."""
        self.capacity = capacity
        self.check = check
        self.count_flows = bool(np.any(count_flows))
        self._counted = (np.ones(capacity.size, dtype=bool) if count_flows is True
                         else np.asarray(count_flows, dtype=bool))
        self._counted_of: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self.vectors = Vectors(capacity)
        self.vectors.track_all = track_all
        self.threshold = threshold
        self.active: dict[int, set[int]] = {}
        self.rate: dict[int, float] = {}
        self.applied: dict[int, float] = {}
        self.memo: dict[tuple, dict[int, float]] = {}
        self.load = np.zeros(capacity.size)
        self.flows = np.zeros(capacity.size)  # active flows per link (adaptive routing)
        self.peak = np.zeros(capacity.size)
        self.hot_s = np.zeros(capacity.size)
        self.since = np.zeros(capacity.size)
        self.history: dict[int, list[tuple[float, float]]] = {}
        self._hot_load = threshold * (1 - 1e-9) * capacity
        self.solves = 0
        self.now = 0.0
        self.vectors.on_track = self._entering

    def add(self, vid: int, cid: int) -> None:
        """Class ``cid`` of vector ``vid`` becomes active."""
        self.active.setdefault(vid, set()).add(cid)
        if self.count_flows:
            links, mult = self._counted_links(vid)
            self.flows[links] += mult

    def remove(self, vid: int, cid: int) -> None:
        """Class ``cid`` of vector ``vid`` stops."""
        self.active[vid].discard(cid)
        if self.count_flows:
            links, mult = self._counted_links(vid)
            self.flows[links] -= mult

    def _counted_links(self, vid: int) -> tuple[np.ndarray, np.ndarray]:
        """The links of vector ``vid`` whose flows are counted, and its flows on each."""
        hit = self._counted_of.get(vid)
        if hit is None:
            v = self.vectors.items[vid]
            keep = self._counted[v.links]
            hit = self._counted_of[vid] = (v.links[keep], v.mult[keep])
        return hit

    def components(self, dirty: set[int]) -> list[list[int]]:
        """Connected components of active vectors reached from ``dirty`` vectors."""
        live = {v for v, c in self.active.items() if c}
        seeds = {v for v in dirty if v in live}
        for v in dirty:
            seeds |= self.vectors.items[v].overlaps & live
        seen: set[int] = set()
        out = []
        for s in sorted(seeds):
            if s in seen:
                continue
            comp, stack = [], [s]
            seen.add(s)
            while stack:
                v = stack.pop()
                comp.append(v)
                for w in self.vectors.items[v].overlaps & live:
                    if w not in seen:
                        seen.add(w)
                        stack.append(w)
            out.append(sorted(comp))
        return out

    def solve(self, comp: list[int]) -> dict[int, float]:
        """Per-flow rate (bytes/s) of each vector of a component (memoised).

        With ``check`` every answer is verified feasible and max-min fair (for tests).
        """
        out = self._solve(comp)
        if self.check:
            self._verify(comp, out)
        return out

    def _verify(self, comp: list[int], rates: dict[int, float]) -> None:
        items = [self.vectors.items[v] for v in comp]
        counts = [len(self.active[v]) for v in comp]
        ptr = np.cumsum([0] + [it.links.size for it in items])
        links = np.concatenate([it.links for it in items])
        mult = np.concatenate([it.mult * c for it, c in zip(items, counts, strict=True)])
        rate = np.array([rates[v] for v in comp])
        problems = check_max_min(ptr, links, mult, self.capacity, rate)
        if problems:
            raise AssertionError(f"max-min violated: {problems[:3]}")

    def _solve(self, comp: list[int]) -> dict[int, float]:
        counts = tuple((v, len(self.active[v])) for v in comp)
        if len(comp) == 1:
            return {comp[0]: self.vectors.items[comp[0]].solo_rate / counts[0][1]}
        hit = self.memo.get(counts)
        if hit is not None:
            return hit
        self.solves += 1
        items = [self.vectors.constraints(v) for v in comp]
        ptr = np.cumsum([0] + [links.size for links, _ in items])
        links = np.concatenate([links for links, _ in items])
        mult = np.concatenate([m * c for (_, m), (_, c) in zip(items, counts, strict=True)])
        rates, _ = max_min_rates(ptr, links, mult, self.capacity)
        out = dict(zip(comp, rates.tolist(), strict=True))
        self.memo[counts] = out
        return out

    def apply(self, now: float, rates: list[tuple[int, float]]) -> None:
        """Set per-flow rates ``[(vid, rate), ...]`` from ``now`` on; update link load and
        statistics. Decreases go first, so the peak utilisation recorded after each
        increase never exceeds the instant's final load (no transient overshoot)."""
        changes = []
        for vid, rate in rates:
            count = len(self.active.get(vid, ()))
            total = rate * count if count else 0.0
            old = self.applied.get(vid, 0.0)
            self.rate[vid] = rate
            if total != old:
                changes.append((total - old, vid, total))
        changes.sort(key=lambda c: (c[0] > 0, c[1]))
        classes = self.vectors.classes
        for delta, vid, total in changes:
            cls, mult = classes.of_vector(vid)
            if cls.size:
                load, since, hot_s = (classes.stat(n) for n in ("load", "since", "hot_s"))
                before = load[cls]
                hot = cls[before >= classes.stat("hot_load")[cls]]
                hot_s[hot] += now - since[hot]
                since[cls] = now
                after = np.maximum(before + mult * delta, 0.0)
                load[cls] = after
                if delta > 0:
                    peak = classes.stat("peak")
                    peak[cls] = np.maximum(peak[cls], after / classes.stat("capacity")[cls])
            self.applied[vid] = total
            self.history.setdefault(vid, []).append((now, total))

    def _private(self, vid: int, links: np.ndarray, until: float
                 ) -> tuple[np.ndarray, np.ndarray]:
        """Peak utilisation and seconds hot of ``vid``'s private ``links`` up to ``until``,
        from its rate history (nobody else loads them)."""
        v = self.vectors.items[vid]
        m = v.mult[np.searchsorted(v.links, links)]
        hist = self.history.get(vid)
        if not hist:
            return np.zeros(links.size), np.zeros(links.size)
        times = np.array([t for t, _ in hist] + [until])
        totals = np.array([r for _, r in hist])
        order = np.argsort(totals)
        tail = np.cumsum(np.diff(times)[order][::-1])[::-1]  # time at >= each total
        first = np.searchsorted(totals[order], self._hot_load[links] / m, side="left")
        hot = np.where(first < totals.size, tail[np.minimum(first, totals.size - 1)], 0.0)
        return m * totals.max() / self.capacity[links], hot

    def _entering(self, links: np.ndarray, first: np.ndarray, first_mult: np.ndarray
                  ) -> dict[str, np.ndarray]:
        """Statistics of links entering tracking: private links that become shared now
        get load, peak and seconds hot from their vector's rate history (nobody else
        loaded them); links nobody crossed yet (``track_all``) start empty."""
        out = {"hot_load": self._hot_load[links],
               "since": np.where(first >= 0, self.now, 0.0),
               "load": np.zeros(links.size), "peak": np.zeros(links.size),
               "hot_s": np.zeros(links.size)}
        for vid in np.unique(first[first >= 0]).tolist():
            sel = first == vid
            peak, hot = self._private(vid, links[sel], self.now)
            out["load"][sel] = first_mult[sel] * self.applied.get(vid, 0.0)
            out["peak"][sel] = np.maximum(0.0, peak)
            out["hot_s"][sel] = 0.0 + hot
        return out

    def _account(self, now: float, links: np.ndarray) -> None:
        """Add time spent hot since the last change to the links about to change."""
        hot = links[self.load[links] >= self._hot_load[links]]
        self.hot_s[hot] += now - self.since[hot]
        self.since[links] = now

    def finish(self, now: float) -> None:
        """Close the statistics at the end of the run (time ``now``): shared links from
        their tracked load, private ones from their vector's history."""
        classes = self.vectors.classes
        for name, out in (("load", self.load), ("peak", self.peak), ("hot_s", self.hot_s),
                          ("since", self.since)):
            classes.expand(name, out)
        self._account(now, np.arange(self.capacity.size))
        for vid in self.history:
            v = self.vectors.items[vid]
            links = v.links[~v.shared]
            if links.size:
                self.peak[links], self.hot_s[links] = self._private(vid, links, now)

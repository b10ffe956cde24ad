"""Shared links grouped into classes that always carry the same load.

A link's load is the sum over the path vectors crossing it of ``mult x rate``. Links
crossed by the same vectors with the same multiplicities, and of the same capacity, have
the same load, utilisation and hot time at every instant, so their statistics are kept
once per class: a rate change of a vector costs one update per class it touches instead
of one per link (a data-parallel ring of a 131,072-GPU cluster crosses ~10^5 links but a
few hundred classes). The partition is refined as vectors arrive (a class a new vector
covers only in part, or with several multiplicities, splits; the parts inherit its
history), so every update a link would get, its class gets, in the same order: the
statistics are bit for bit those of tracking every link.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from supernode.netsim.grouping import group_rows

#: Per-class statistics kept in growable arrays.
STATS = ("capacity", "hot_load", "load", "peak", "hot_s", "since")


@dataclass
class LinkClasses:
    """The partition of tracked links (``cls_of[link]``, -1: untracked) and, per class,
    capacity, hot load threshold, load, peak utilisation, seconds hot, last update time;
    ``members[c]``: ``{vid: mult}`` of the vectors crossing class ``c``."""

    links: int
    cls_of: np.ndarray = field(init=False)
    size: list[int] = field(default_factory=list)
    members: list[dict[int, float]] = field(default_factory=list)
    _stats: dict[str, np.ndarray] = field(default_factory=dict)
    _of_vector: dict[int, list[tuple[int, float]]] = field(default_factory=dict)
    _arrays: dict[int, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.cls_of = np.full(self.links, -1, dtype=np.int64)
        self._stats = {name: np.zeros(16) for name in STATS}

    @property
    def count(self) -> int:
        """Number of classes."""
        return len(self.size)

    def stat(self, name: str) -> np.ndarray:
        """A statistic over classes ``0 .. count-1`` (a view: writes go through)."""
        return self._stats[name][: self.count]

    def of_vector(self, vid: int) -> tuple[np.ndarray, np.ndarray]:
        """Classes a vector crosses and its flows on each link of them."""
        cached = self._arrays.get(vid)
        if cached is None:
            pairs = self._of_vector.get(vid, [])
            cached = (np.array([c for c, _ in pairs], dtype=np.int64),
                      np.array([m for _, m in pairs], dtype=float))
            self._arrays[vid] = cached
        return cached

    def vectors_on(self, links: np.ndarray) -> set[int]:
        """Vectors crossing any of the tracked ``links``."""
        out: set[int] = set()
        for c in np.unique(self.cls_of[links]).tolist():
            if c >= 0:
                out.update(self.members[c])
        return out

    def join(self, vid: int, links: np.ndarray, mult: np.ndarray, first: np.ndarray,
             first_mult: np.ndarray, init: dict[str, np.ndarray]) -> None:
        """Vector ``vid`` crosses tracked ``links`` with ``mult`` flows each.

        Links not tracked yet enter with statistics ``init`` (per link: ``capacity``,
        ``hot_load``, ``load``, ``peak``, ``hot_s``, ``since``), crossed before only by
        vector ``first[i]`` (-1: none) with ``first_mult[i]`` flows.
        """
        old = self.cls_of[links]
        key = np.stack([old, np.where(old < 0, first, -1), first_mult.view(np.int64),
                        init["capacity"].view(np.int64), mult.view(np.int64)], axis=1)
        start, group = group_rows(key)
        order = np.argsort(group, kind="stable")
        cuts = np.searchsorted(group[order], np.arange(start.size + 1))
        for g in range(start.size):
            mine = links[order[cuts[g]:cuts[g + 1]]]
            i = int(start[g])
            if old[i] >= 0:
                self._split(int(old[i]), mine, vid, float(mult[i]))
            else:
                values = {name: init[name][i] for name in STATS}
                pairs = {int(first[i]): float(first_mult[i])} if first[i] >= 0 else {}
                self._new(mine, values, pairs | {vid: float(mult[i])})

    def _split(self, c: int, links: np.ndarray, vid: int, mult: float) -> None:
        """``links`` (all in class ``c``) are crossed by ``vid`` too."""
        if links.size == self.size[c]:
            self.members[c][vid] = mult
            self._link(vid, c, mult)
            return
        values = {name: self._stats[name][c] for name in STATS}
        self.size[c] -= links.size
        self._new(links, values, dict(self.members[c]) | {vid: mult})

    def _new(self, links: np.ndarray, values: dict[str, float],
             members: dict[int, float]) -> None:
        c = self.count
        if c == self._stats["load"].size:
            for name in STATS:
                self._stats[name] = np.concatenate([self._stats[name],
                                                    np.zeros(self._stats[name].size)])

        for name in STATS:
            self._stats[name][c] = values[name]
        self.size.append(int(links.size))
        self.members.append(members)
        self.cls_of[links] = c
        for v, m in members.items():
            self._link(v, c, m)

    def _link(self, vid: int, c: int, mult: float) -> None:
        self._of_vector.setdefault(vid, []).append((c, mult))
        self._arrays.pop(vid, None)

    def expand(self, name: str, out: np.ndarray) -> None:
        """Write a class statistic onto every tracked link of ``out`` (per-link array)."""
        tracked = np.flatnonzero(self.cls_of >= 0)
        out[tracked] = self.stat(name)[self.cls_of[tracked]]

"""The registry of distinct path vectors and the classes of the links they share.

A *path vector* is the links a class of flows crosses with its flows on each
(:mod:`.path_vectors`); classes with the same vector get the same max-min rate, so
:mod:`.fluid` solves rates per vector. A vector is registered once (deduplicated by
content); each knows the vectors it overlaps (the components :mod:`.fluid` re-solves),
which of its links other vectors use too (their statistics are tracked event by event, per
class of links, :mod:`.link_classes`) and the constraints that matter to a max-min solve.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from supernode.netsim.grouping import group_rows
from supernode.netsim.link_classes import STATS, LinkClasses


@dataclass
class Vector:
    """A path vector: links (ids), flows per link, overlapping vectors, solo rate, and
    which of its links other vectors use too (``shared``: their statistics are tracked
    event by event, per class of links (:mod:`.link_classes`); a private link's follow
    from this vector's rate history)."""

    links: np.ndarray
    mult: np.ndarray
    solo_rate: float
    overlaps: set[int] = field(default_factory=set)
    shared: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))


#: ``on_track(links, first, first_mult)``: per-link statistics of links entering tracking,
#: each crossed so far only by vector ``first[i]`` (-1: none) with ``first_mult[i]`` flows.
TrackHook = Callable[[np.ndarray, np.ndarray, np.ndarray], dict[str, np.ndarray]]


class Vectors:
    """Registry of distinct path vectors (deduplicated by content) and the classes of the
    links they share."""

    def __init__(self, capacity: np.ndarray) -> None:
        self.capacity = capacity
        self.items: list[Vector] = []
        self._ids: dict[bytes, int] = {}
        self._owner = np.full(capacity.size, -1, dtype=np.int64)  # -1 none, -2 several
        self.classes = LinkClasses(capacity.size)
        self._private: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self._shared: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        #: statistics of links entering tracking (see :data:`TrackHook`)
        self.on_track: TrackHook | None = None
        #: track every link event by event (the reference the shortcut is tested against)
        self.track_all = False

    def add(self, links: np.ndarray, mult: np.ndarray) -> int:
        """Id of the vector ``(links, mult)``, registering it if new."""
        order = np.argsort(links, kind="stable")
        links = np.asarray(links, dtype=np.int64)[order]
        mult = np.asarray(mult, dtype=float)[order]
        key = links.tobytes() + mult.tobytes()
        vid = self._ids.get(key)
        if vid is not None:
            return vid
        vid = len(self.items)
        solo = float(np.min(self.capacity[links] / mult)) if links.size else np.inf
        owner = self._owner[links]
        tracked = (owner != -1) | self.track_all
        vec = Vector(links, mult, solo, shared=tracked.copy())
        single = owner >= 0
        firsts = np.unique(owner[single])
        vec.overlaps = set(firsts.tolist()) | self.classes.vectors_on(links[owner == -2])
        first_mult = np.zeros(links.size)
        for first in firsts.tolist():
            old = self.items[first]
            at = np.searchsorted(old.links, links[owner == first])
            old.shared[at] = True
            self._private.pop(first, None)
            first_mult[owner == first] = old.mult[at]
        self._owner[links[owner == -1]] = vid
        self._owner[links[single]] = -2
        for other in vec.overlaps:
            self.items[other].overlaps.add(vid)
        self.items.append(vec)
        self._ids[key] = vid
        self._track(vid, links[tracked], mult[tracked], np.where(single, owner, -1)[tracked],
                    first_mult[tracked])
        return vid

    def constraints(self, vid: int) -> tuple[np.ndarray, np.ndarray]:
        """The links of vector ``vid`` that matter to a max-min solve, and its flows on
        each: one link per class of its shared links, one per (flows, capacity) group of
        its private links; the other links repeat these constraints exactly."""
        cls, mult = self.classes.of_vector(vid)
        v = self.items[vid]
        shared = self._shared.get(vid)
        if shared is None or shared[0] is not cls:  # the class list changed: new members
            tracked = v.links[v.shared]
            where = np.zeros(self.classes.count, dtype=np.int64)
            where[self.classes.cls_of[tracked]] = np.arange(tracked.size)  # any one each
            shared = (cls, tracked[where[cls]])
            self._shared[vid] = shared
        private = self._private.get(vid)
        if private is None:
            links, m = v.links[~v.shared], v.mult[~v.shared]
            first, _ = group_rows(np.stack([m.view(np.int64),
                                            self.capacity[links].view(np.int64)], axis=1))
            private = (links[first], m[first])
            self._private[vid] = private
        return (np.concatenate([shared[1], private[0]]), np.concatenate([mult, private[1]]))

    def _track(self, vid: int, links: np.ndarray, mult: np.ndarray, first: np.ndarray,
               first_mult: np.ndarray) -> None:
        """Add ``vid``'s tracked links to the classes (entering ones with their history)."""
        if links.size == 0:
            return
        entering = self.classes.cls_of[links] < 0
        first = np.where(entering, first, -1)
        first_mult = np.where(entering, first_mult, 0.0)
        init = {name: np.zeros(links.size) for name in STATS}
        init["capacity"] = self.capacity[links].astype(float)
        if self.on_track is not None and entering.any():
            got = self.on_track(links[entering], first[entering], first_mult[entering])
            for name, values in got.items():
                init[name][entering] = values
        self.classes.join(vid, links, mult, first, first_mult, init)

"""The event-driven simulator: one :class:`Environment` owns every piece of state.

Work is a DAG of :class:`Task` s: a *delay* (compute, seconds), a *transfer* (flows
between accelerators, see :class:`FlowSpec`) or a *join*. A task starts when its
predecessors are done. Events sit in one heap ordered ``(time, priority, eid)`` with a
monotone event counter, so ties always break the same way (SimPy's rule) and a run is
reproducible bit for bit. At each instant, after every event of that instant, the rates
of the classes whose component changed are re-solved (max-min, :mod:`.fluid`) and their
finish times rescheduled; a class's data arrives one path latency after its last byte
leaves (``hops`` latencies for a fused sequence of steps).
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from supernode.netsim.fluid import HOT_UTILIZATION, FluidState
from supernode.netsim.network import Network
from supernode.netsim.path_vectors import FixedTotals, inflate
from supernode.netsim.routes import MEMO_MAX_FLOWS, LinkLoad, Routes
from supernode.netsim.routing import Router

_FINISH, _DELIVER, _DONE, _START = 0, 1, 2, 3


@dataclass(frozen=True)
class FlowSpec:
    """Flows ``src[i] -> dst[i]`` (accelerator indices) of ``bytes`` each.

    ``coupled``: the flows move in lockstep as one class (a pipelined ring, one step of
    a collective, identical replicas); else each flow is its own class. ``hops``: path
    latencies paid in sequence (the steps a fused class stands for). ``reduce``: switches
    merge the flows (in-network reduction or multicast), so a link carries the largest
    share of any one flow instead of their sum. ``efficiency``: per link tier (indexed as
    :data:`~supernode.topology.graph.LINK_TIERS`), the fraction of a link's capacity the
    protocol turns into data (a collective's schedule gives it); a flow moving ``b`` bytes
    takes ``b / efficiency`` of the link. Empty: line rate.
    """

    src: np.ndarray
    dst: np.ndarray
    bytes: float
    hops: float = 1.0
    coupled: bool = True
    label: str = ""
    reduce: bool = False
    efficiency: tuple[float, ...] = ()


@dataclass(eq=False)
class Task:
    """A node of the work DAG (times in seconds; ``label`` groups tasks in reports)."""

    name: str
    kind: str
    duration_s: float = 0.0
    flows: tuple[FlowSpec, ...] = ()
    label: str = ""
    lane: str = ""
    job: str = ""
    succ: list[Task] = field(default_factory=list)
    waiting: int = 0
    pending: int = 0
    start_s: float = float("nan")
    end_s: float = float("nan")


@dataclass(eq=False)
class FlowClass:
    """Active state of one flow class (rate and remaining bytes are per flow)."""

    vid: int
    flows: int
    bytes: float
    latency_s: float
    task: Task
    label: str
    remaining: float
    rate: float = 0.0
    t_update: float = 0.0
    version: int = 0
    sent: float = 0.0
    start_s: float = 0.0
    end_s: float = float("nan")


class Environment:
    """Owns the network, router, DAG, event heap, classes and fluid state of one run."""

    def __init__(self, net: Network, router: Router, threshold: float = HOT_UTILIZATION,
                 progress: Callable[[float, int, int], None] | None = None,
                 check: bool = False, track_all_links: bool = False) -> None:
        """``threshold``: hot utilisation; ``progress(now_s, tasks_done, tasks)`` is called
        every 2,000 events; ``check`` verifies every max-min solution and
        ``track_all_links`` tracks every link's statistics event by event (slow, tests)."""
        self.net, self.router = net, router
        capacity = np.where(net.up, net.capacity_bytes_per_s, 1e-300)
        adaptive = "adaptive" in (router.config.fabric, router.config.scale_up)
        counted = np.zeros(net.links, dtype=bool)
        counted[router.load_links] = adaptive
        self.fluid = FluidState(capacity, threshold, check, count_flows=counted,
                                track_all=track_all_links)
        self.now = 0.0
        self.events = 0
        self.tasks: list[Task] = []
        self.records: list[Any] = []
        self.notes: list[str] = []
        self.classes: list[FlowClass] = []
        self._vid_bytes: dict[int, float] = {}
        self._queue: list[tuple[float, int, int, int, Any]] = []
        self._eid = itertools.count()
        self._dirty: set[int] = set()
        self._routes: dict[bytes, Routes] = {}
        self._vectors: dict[tuple, tuple[int, float]] = {}
        self._pairs: dict[bytes, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        self._fixed_totals = FixedTotals(net.tier)
        self._load = LinkLoad(self.fluid.flows, self.fluid.capacity)
        self._by_identity: dict[tuple, tuple[np.ndarray, np.ndarray, Any]] = {}
        self._adaptive = adaptive
        self._progress = progress
        self._done = 0

    @property
    def link_bytes(self) -> np.ndarray:
        """Bytes each link has carried so far (per direction)."""
        out = np.zeros(self.net.links)
        for vid, nbytes in self._vid_bytes.items():
            v = self.fluid.vectors.items[vid]
            out[v.links] += v.mult * nbytes
        return out

    # -- building the DAG -------------------------------------------------------------
    def task(self, name: str, kind: str, **kw: Any) -> Task:
        """Create and register a task (``delay``, ``transfer`` or ``join``)."""
        t = Task(name, kind, **kw)
        self.tasks.append(t)
        return t

    @staticmethod
    def after(first: Task, then: Task) -> None:
        """``then`` waits for ``first``."""
        first.succ.append(then)
        then.waiting += 1

    # -- the event loop ---------------------------------------------------------------
    def _push(self, time: float, kind: int, payload: Any) -> None:
        heapq.heappush(self._queue, (time, kind, next(self._eid), kind, payload))

    def run(self) -> float:
        """Run to completion; return the time of the last event (seconds)."""
        for t in self.tasks:
            if t.waiting == 0:
                self._push(0.0, _START, t)
        while self._queue:
            time, _, _, kind, payload = heapq.heappop(self._queue)
            self.now = self.fluid.now = time
            self.events += 1
            self._handle(kind, payload)
            if not self._queue or self._queue[0][0] > time:
                self._resolve()
            if self._progress is not None and self.events % 2000 == 0:
                self._progress(self.now, self._done, len(self.tasks))
        self.fluid.finish(self.now)
        return self.now

    def _handle(self, kind: int, payload: Any) -> None:
        if kind == _START:
            self._start(payload)
        elif kind == _DONE:
            self._complete(payload)
        elif kind == _DELIVER:
            payload.task.pending -= 1
            if payload.task.pending == 0:
                self._complete(payload.task)
        else:
            cid, version = payload
            c = self.classes[cid]
            if c.version == version:
                self._transmitted(cid, c)

    def _start(self, task: Task) -> None:
        task.start_s = self.now
        if task.kind == "delay":
            self._push(self.now + task.duration_s, _DONE, task)
        elif task.kind == "transfer":
            for spec in task.flows:
                self._open(task, spec)
            if task.pending == 0:
                self._complete(task)
        else:
            self._complete(task)

    def _complete(self, task: Task) -> None:
        task.end_s = self.now
        self._done += 1
        for s in task.succ:
            s.waiting -= 1
            if s.waiting == 0:
                self._push(self.now, _START, s)

    def _transmitted(self, cid: int, c: FlowClass) -> None:
        c.sent += c.rate * (self.now - c.t_update)
        c.remaining, c.t_update, c.end_s = 0.0, self.now, self.now
        c.version += 1
        self.fluid.remove(c.vid, cid)
        self._dirty.add(c.vid)
        self._vid_bytes[c.vid] = self._vid_bytes.get(c.vid, 0.0) + c.bytes
        self._push(self.now + c.latency_s, _DELIVER, c)

    # -- flows ------------------------------------------------------------------------
    def _routes_for(self, src: np.ndarray, dst: np.ndarray) -> tuple[Routes, bool]:
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

    def _open(self, task: Task, spec: FlowSpec) -> None:
        src = np.asarray(spec.src, dtype=np.int64)
        dst = np.asarray(spec.dst, dtype=np.int64)
        if src.size == 0:
            return
        if spec.coupled:
            vid, lat = self._coupled_vector(src, dst, spec.reduce, spec.efficiency)
            self._add_class(task, spec, vid, src.size, lat * spec.hops)
            return
        r, _ = self._routes_for(src, dst)
        flow, link, latency_s = r.flow, r.link, r.latency_s
        share = inflate(self.net.tier, link, r.share, spec.efficiency)
        order = np.argsort(flow, kind="stable")
        cuts = np.searchsorted(flow[order], np.arange(src.size + 1))
        for i in range(src.size):
            sel = order[cuts[i]:cuts[i + 1]]
            links, inv = np.unique(link[sel], return_inverse=True)
            mult = np.bincount(inv, weights=share[sel], minlength=links.size)
            self._add_class(task, spec, self.fluid.vectors.add(links, mult), 1,
                            float(latency_s[i]) * spec.hops)

    def _coupled_vector(self, src: np.ndarray, dst: np.ndarray, reduce: bool,
                        efficiency: tuple[float, ...] = ()) -> tuple[int, float]:
        """Path vector id and slowest path latency of flows moving as one class."""
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
        routes, fixed = self._routes_for(usrc, udst)  # shared by every efficiency
        links, mult = self._fixed_totals.totals(key, routes, counts, reduce, efficiency,
                                                again=not fixed
                                                and usrc.size <= MEMO_MAX_FLOWS)
        lat = routes.latency_s
        out = (self.fluid.vectors.add(links, mult), float(lat.max()))
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

    def _add_class(self, task: Task, spec: FlowSpec, vid: int, flows: int,
                   latency_s: float) -> None:
        cid = len(self.classes)
        c = FlowClass(vid, flows, spec.bytes, latency_s, task, spec.label or task.label,
                      spec.bytes, t_update=self.now, start_s=self.now)
        self.classes.append(c)
        task.pending += 1
        if spec.bytes <= 0 or self.fluid.vectors.items[vid].links.size == 0:
            c.remaining, c.end_s, c.sent = 0.0, self.now, spec.bytes  # nothing to cross
            self._push(self.now + latency_s, _DELIVER, c)
            return
        self.fluid.add(vid, cid)
        self._dirty.add(vid)

    def _resolve(self) -> None:
        """Re-solve rates of the components touched at this instant; reschedule finishes."""
        if not self._dirty:
            return
        fluid, now = self.fluid, self.now
        updates: list[tuple[int, float]] = []
        touched: set[int] = set()
        for comp in fluid.components(self._dirty):
            rates = fluid.solve(comp)
            for vid in comp:
                touched.add(vid)
                new = rates[vid]
                updates.append((vid, new))
                for cid in sorted(fluid.active[vid]):
                    c = self.classes[cid]
                    if c.rate == new and c.version > 0:
                        continue
                    c.sent += c.rate * (now - c.t_update)
                    c.remaining = max(c.remaining - c.rate * (now - c.t_update), 0.0)
                    c.t_update, c.rate = now, new
                    c.version += 1
                    self._push(now + c.remaining / new, _FINISH, (cid, c.version))
        updates += [(vid, 0.0) for vid in sorted(self._dirty - touched)]
        fluid.apply(now, updates)
        self._dirty.clear()

"""The event-driven simulator: one :class:`Environment` owns every piece of state.

Work is a DAG of :class:`~.tasks.Task` s: a *delay* (compute, seconds), a *transfer*
(flows between accelerators, see :class:`~.tasks.FlowSpec`) or a *join*; a transfer's
flows are put on path vectors by :mod:`.flow_vectors`. A task starts when its
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
from typing import Any

import numpy as np

from supernode.netsim.flow_vectors import FlowVectors
from supernode.netsim.fluid import HOT_UTILIZATION, FluidState
from supernode.netsim.network import Network
from supernode.netsim.routes import LinkLoad
from supernode.netsim.routing import Router
from supernode.netsim.tasks import FlowClass, FlowSpec, Task

_FINISH, _DELIVER, _DONE, _START = 0, 1, 2, 3


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
        #: the path vectors of the transfers (routes and vectors remembered)
        self.paths = FlowVectors(net, router, self.fluid.vectors,
                                 LinkLoad(self.fluid.flows, self.fluid.capacity), adaptive)
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
    def _open(self, task: Task, spec: FlowSpec) -> None:
        src = np.asarray(spec.src, dtype=np.int64)
        dst = np.asarray(spec.dst, dtype=np.int64)
        if src.size == 0:
            return
        if spec.coupled:
            vid, lat = self.paths.coupled(src, dst, spec.reduce, spec.efficiency)
            self._add_class(task, spec, vid, src.size, lat * spec.hops)
            return
        for vid, latency_s in self.paths.per_flow(src, dst, spec.efficiency):
            self._add_class(task, spec, vid, 1, latency_s * spec.hops)

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

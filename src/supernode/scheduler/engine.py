"""The event-driven placement simulation of one policy over one trace.

One :class:`Simulation` owns all state (determinism, docs/architecture.md): the occupancy,
the queue, the running jobs and one order of ``(time, kind, sequence, job)`` events (a heap
and the arrivals sorted beside it), so ties break the same way every run. At each instant,
finishes and checkpoint stops are handled first, then arrivals, then one scheduling pass:

* the queue is in submit order (by priority first for a pre-empting policy); the first
  ``backfill_depth`` waiting jobs are tried in order and every one that the policy can
  place starts (greedy backfill, no reservations); a job that failed is not retried
  until GPUs are released, nor is another job of the same shape in the same pass;
* a started job runs ``duration × slowdown`` seconds (``stretch``; the trace's run time is
  taken as the run time at the ideal placement), its slowdown from
  :class:`~supernode.scheduler.slowdown.SlowdownModel` for its placement;
* a pre-empting policy may stop lower-priority jobs for a high-priority job that has
  waited ``preempt_after_s``: victims stop at their next checkpoint (every
  ``checkpoint_interval_s`` of their run), lose no work beyond ``restart_s`` of restart,
  and go back to the queue; the job starts when the last victim has stopped
  (:mod:`supernode.scheduler.preempt`). A job that found no victims while every
  candidate was tried (at most ``max_victim_trials``) finds none again until its *room*
  (free GPUs plus those of running, unpromised lower-priority jobs) grows past what it
  had, since placement only gets easier as GPUs are freed: it is *parked* instead of
  re-checked every ``preempt_after_s``, and re-checked at its next recheck instant once
  its room could hold it. The records are the same as re-checking always; a replay costs
  events in proportion to the jobs, not to the waits divided by ``preempt_after_s`` (the
  500-job fractional-GPU pod trace whose jobs wait 10^7 s on a 72-GPU cluster: seconds,
  not hours).

What the run produced is a :class:`RunRecord`; metrics come from it
(:mod:`supernode.scheduler.metrics`).
"""

from __future__ import annotations

import bisect
import heapq
import math
import time
from collections.abc import Callable

import numpy as np

from supernode.scheduler.policies import PlacementPolicy
from supernode.scheduler.preempt import hand_over, try_preempt, unpark
from supernode.scheduler.records import (
    ARRIVE,
    DRAIN,
    FINISH,
    RECHECK,
    EngineOptions,
    JobTable,
    RunRecord,
)
from supernode.scheduler.slowdown import SlowdownModel, classify, contention
from supernode.scheduler.state import Occupancy


class _Running:
    __slots__ = ("gpus", "start", "slowdown", "end", "seq", "crossing", "promised", "tp_cross",
                 "domains", "groups")

    def __init__(self, gpus, start, slowdown, end, seq, crossing, tp_cross, domains, groups):
        self.gpus, self.start, self.slowdown, self.end, self.seq = gpus, start, slowdown, end, seq
        self.crossing, self.tp_cross, self.domains, self.groups = crossing, tp_cross, domains, \
            groups
        self.promised: int | None = None


class Simulation:
    """One policy over one job table on one cluster (see the module doc)."""

    def __init__(self, jobs: JobTable, state: Occupancy, policy: PlacementPolicy,
                 slowdowns: SlowdownModel, options: EngineOptions, seed: int) -> None:
        self.jobs, self.state, self.policy = jobs, state, policy
        self.slowdowns, self.options = slowdowns, options
        self.rng = np.random.default_rng(seed)
        n = len(jobs)
        self.n = n
        # the jobs' sizes, TP, models and priorities as Python ints for the per-event reads
        # (a list element, not a numpy scalar converted each time: the same values)
        self.gpus_of, self.tp_of = jobs.gpus.tolist(), jobs.tp.tolist()
        self.model_of, self.priority_of = jobs.model.tolist(), jobs.priority.tolist()
        self.remaining = jobs.duration_s.astype(float).copy()
        self.first_start = np.full(n, np.nan)
        self.end = np.full(n, np.nan)
        self.preemptions = np.zeros(n, dtype=np.int64)
        self.fail_version = np.full(n, -1, dtype=np.int64)
        self.waiting = np.zeros(n, dtype=bool)
        self.is_running = np.zeros(n, dtype=bool)
        self.promised = np.zeros(n, dtype=bool)
        self.run_start = np.zeros(n)
        self.rechecks: list[int] = []
        self.changes = 0  # jobs started, stopped or promised so far
        self.seen = 0  # self.changes when the parked jobs were last looked at
        self.held: dict[int, int] = {}  # priority -> GPUs of running, unpromised jobs
        # parked jobs by (priority, GPUs): job -> its last recheck instant
        self.parked: dict[tuple[int, int], dict[int, float]] = {}
        self.parked_key: dict[int, tuple[int, int]] = {}
        self.queue: list[int] = []
        self.running: dict[int, _Running] = {}
        self.pending: dict[int, dict] = {}
        self.heap: list[tuple[float, int, int, int]] = []
        self.seq = 0
        self.busy = 0
        self.frag = 0
        self.reserved = 0
        self.now = 0.0
        self.busy_area = self.frag_area = self.reserved_area = 0.0
        self.lost = {"restart": 0.0, "immediate": 0.0}
        self.segments: list[tuple] = []
        self.timeline: list[tuple[float, int, int, int]] = []
        top = int(jobs.priority.max()) if n else 0
        self._key_scale = n if policy.preempts else 0
        self._top = top

    # -- queue ---------------------------------------------------------------------------
    def _key(self, j: int) -> int:
        if not self._key_scale:
            return j
        return (self._top - self.priority_of[j]) * self._key_scale + j

    def _enqueue(self, j: int) -> None:
        bisect.insort(self.queue, self._key(j))
        self.waiting[j] = True
        if self.policy.preempts and self.priority_of[j] > 0:
            self._push(self.now + self.options.preempt_after_s, RECHECK, j)

    def _push(self, when: float, kind: int, j: int) -> int:
        self.seq += 1
        heapq.heappush(self.heap, (when, kind, self.seq, j))
        return self.seq

    # -- main loop -----------------------------------------------------------------------
    def run(self, progress: Callable[[int], None] | None = None) -> RunRecord:
        """Simulate until every job has finished; ``progress(events)`` every 4,096 events
        and once at the end."""
        started, cpu = time.perf_counter(), time.process_time()
        # the arrivals, known up front, sorted beside the heap (which holds only the running
        # jobs' events, each pop cheaper) and merged in its order: the order of one heap
        arrivals = sorted((float(t), ARRIVE, j, j) for j, t in enumerate(self.jobs.submit_s))
        heap, a, total = self.heap, 0, len(arrivals)
        self.seq = self.n
        events = 0
        while heap or a < total:
            t = min(heap[0][0] if heap else math.inf, arrivals[a][0] if a < total else math.inf)
            self._advance(t)
            while True:
                if heap and heap[0][0] == t and (a == total or heap[0] < arrivals[a]):
                    _, kind, seq, j = heapq.heappop(heap)
                elif a < total and arrivals[a][0] == t:
                    _, kind, seq, j = arrivals[a]
                    a += 1
                else:
                    break
                self._handle(kind, seq, j)
                events += 1
                if progress and events % 4096 == 0:
                    progress(events)
            if self.queue or self.rechecks or self.parked_key:
                self._pass()
            else:  # nothing waits: what the pass would find
                self.frag = 0
            self.timeline.append((t, self.busy, len(self.queue), self.frag))
        if progress:
            progress(events)
        return self._record(time.perf_counter() - started, time.process_time() - cpu)

    def _advance(self, t: float) -> None:
        dt = t - self.now
        if dt > 0:
            self.busy_area += self.busy * dt
            if self.frag:
                self.frag_area += self.frag * dt
            if self.reserved:
                self.reserved_area += self.reserved * dt
        self.now = t

    def _handle(self, kind: int, seq: int, j: int) -> None:
        if kind == ARRIVE:
            self._enqueue(j)
        elif kind == FINISH:
            run = self.running.get(j)
            if run is not None and run.seq == seq:
                self._stop(j, finished=True)
        elif kind == DRAIN:
            run = self.running.get(j)
            if run is not None and run.seq == seq:
                self._stop(j, finished=False)
        elif kind == RECHECK:
            self.rechecks.append(j)

    # -- starting and stopping -----------------------------------------------------------
    def _start(self, j: int, gpus: np.ndarray, taken: bool = False) -> None:
        st = self.state
        g, tp = self.gpus_of[j], self.tp_of[j]
        cls = classify(gpus, st, tp=tp)
        if cls.groups > 1 and st.hierarchy.crossing_oversubscription(cls.pods) > 1:
            cls = classify(gpus, st, contention(st, gpus, cls.pods), tp)
        s = self.slowdowns.slowdown(self.model_of[j], g, tp, cls)
        if not taken:
            st.take(gpus)
        else:
            self.reserved -= g
        crossing = cls.groups > 1
        if crossing:
            np.add.at(st.group_crossing, st.gpu_group[gpus], 1)
        runtime = self.remaining[j] * (s if self.options.stretch else 1.0)
        end = self.now + runtime
        seq = self._push(end, FINISH, j)
        self.running[j] = _Running(gpus, self.now, s, end, seq, crossing, cls.tp_crosses(tp),
                                   cls.domains, cls.groups)
        self.run_start[j] = self.now
        self.is_running[j] = True
        self.changes += 1
        prio = self.priority_of[j]
        self.held[prio] = self.held.get(prio, 0) + g
        if j in self.parked_key:
            del self.parked[self.parked_key.pop(j)][j]
        if math.isnan(self.first_start[j]):
            self.first_start[j] = self.now
        self.busy += g

    def _stop(self, j: int, finished: bool) -> None:
        run = self.running.pop(j)
        if run.promised is None:
            self.held[self.priority_of[j]] -= len(run.gpus)
        self.is_running[j] = self.promised[j] = False
        self.changes += 1
        st = self.state
        g = len(run.gpus)
        self.busy -= g
        if run.crossing:
            np.add.at(st.group_crossing, st.gpu_group[run.gpus], -1)
        self.segments.append((j, run.start, self.now, run.slowdown, g, run.tp_cross,
                              run.domains, run.groups, finished))
        st.release(run.gpus)
        if finished:
            self.end[j] = self.now
        else:
            factor = run.slowdown if self.options.stretch else 1.0
            done = (self.now - run.start) / factor
            self.remaining[j] = max(self.remaining[j] - done, 0.0) + self.options.restart_s
            self.lost["restart"] += self.options.restart_s * g
            self.preemptions[j] += 1
            self.fail_version[j] = -1
            self._enqueue(j)
        if run.promised is not None:
            hand_over(self, run.promised, run.gpus)

    # -- scheduling ----------------------------------------------------------------------
    def _pass(self) -> None:
        st, jobs = self.state, self.jobs
        if self.queue and st.total_free > 0:
            tried: set[tuple[int, int]] = set()
            started: list[int] = []
            depth = min(len(self.queue), self.options.backfill_depth)
            keys = np.array(self.queue[:depth], dtype=np.int64)
            ids = keys % self._key_scale if self._key_scale else keys
            open_ = (jobs.gpus[ids] <= st.total_free) & (self.fail_version[ids] != st.version)
            ids_of = ids.tolist()
            for k in open_.nonzero()[0].tolist():
                j = ids_of[k]
                g = self.gpus_of[j]
                if g > st.total_free:
                    continue
                shape = (g, self.tp_of[j])
                if shape in tried:
                    continue
                target = self.policy.place(g, shape[1], st, self.rng)
                if target is None:
                    self.fail_version[j] = st.version
                    tried.add(shape)
                    continue
                self._start(j, target)
                self.waiting[j] = False
                started.append(k)
            for k in reversed(started):
                del self.queue[k]
        if self.rechecks:
            try_preempt(self)
        if self.parked_key and self.changes != self.seen:
            unpark(self)
        self.frag = st.total_free if self.queue else 0

    def _record(self, wall: float, cpu: float) -> RunRecord:
        cols = ("job", "start_s", "end_s", "slowdown", "gpus", "tp_crosses", "domains",
                "groups", "finished")
        seg = np.array(self.segments, dtype=float).reshape(-1, len(cols))
        segments = {c: seg[:, i] for i, c in enumerate(cols)}
        for c in ("job", "gpus", "domains", "groups"):
            segments[c] = segments[c].astype(np.int64)
        for c in ("tp_crosses", "finished"):
            segments[c] = segments[c].astype(bool)
        tl = np.array(self.timeline, dtype=float).reshape(-1, 4)
        timeline = {"t_s": tl[:, 0], "busy_gpus": tl[:, 1], "queued_jobs": tl[:, 2],
                    "fragmented_gpus": tl[:, 3]}
        return RunRecord(self.policy.name, self.first_start, self.end, self.preemptions,
                         segments, timeline, self.busy_area, self.frag_area,
                         self.reserved_area, self.lost["restart"], self.lost["immediate"],
                         wall, cpu, self.options.stretch)

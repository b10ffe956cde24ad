"""Pre-emption only at checkpoint boundaries (seed 001 §6: HPC-style pre-emption, killing a
job at once, can corrupt training state and loses the work since its last checkpoint).

The ``preempt`` policy places like ``best-fit``. A high-priority job that has waited
``preempt_after_s`` (and again every ``preempt_after_s`` while it waits) may take GPUs from
lower-priority jobs: candidates are ordered by their next checkpoint (soonest first), then
fewest GPUs; the fewest leading candidates whose GPUs, freed on a copy of the occupancy,
let best-fit place the job are found by bisection (placement only gets easier as GPUs are
freed); only those whose GPUs the placement uses are pre-empted. Each victim runs on to
its next checkpoint, every ``checkpoint_interval_s`` of wall time since it (re)started,
then stops; its work up to the checkpoint is kept and it re-queues with ``restart_s`` more
to run. The GPU-seconds an immediate kill would have lost (since the last checkpoint) are
reported beside it.

The engine's pre-emption steps live here too, as functions of its
:class:`~supernode.scheduler.engine.Simulation` (``sim``): the recheck of waiting jobs
(:func:`try_preempt`), the reservation of a placement and its victims' drains, the hand
over of a drained victim's GPUs (:func:`hand_over`) and the un-parking of jobs whose room
grew (:func:`unpark`).
"""

from __future__ import annotations

import bisect
import math
from typing import Any, ClassVar

import numpy as np

from supernode.scheduler.policies import POLICIES, BestFitPolicy
from supernode.scheduler.records import DRAIN, RECHECK


def next_checkpoint(start_s: float, now_s: float, interval_s: float) -> float:
    """First checkpoint at or after ``now_s`` of a job (re)started at ``start_s`` (s)."""
    return start_s + math.ceil((now_s - start_s) / interval_s - 1e-12) * interval_s


def last_checkpoint(start_s: float, now_s: float, interval_s: float) -> float:
    """Latest checkpoint (or the start) at or before ``now_s`` (s)."""
    return start_s + math.floor((now_s - start_s) / interval_s + 1e-12) * interval_s


@POLICIES.register
class CheckpointPreemptionPolicy(BestFitPolicy):
    """Best-fit placement; blocked high-priority jobs pre-empt at checkpoint boundaries."""

    name: ClassVar[str] = "preempt"
    description: ClassVar[str] = ("best-fit; a blocked high-priority job pre-empts lower "
                                  "priority jobs at their next checkpoint")
    preempts: ClassVar[bool] = True


def choose_victims(job: int, sim, options, rng: np.random.Generator
                   ) -> tuple[np.ndarray, list[int]] | None:
    """(placement, victims) for waiting job ``job`` of simulation ``sim``, or None when
    freeing lower-priority jobs (at most ``options.max_victim_trials``) makes no room."""
    jobs, state, running = sim.jobs, sim.state, sim.running
    gpus, tp = int(jobs.gpus[job]), int(jobs.tp[job])
    interval = options.checkpoint_interval_s
    pool = (sim.is_running & ~sim.promised & (jobs.priority < jobs.priority[job])
            ).nonzero()[0]
    if len(pool) == 0:
        return None
    start = sim.run_start[pool]
    boundary = start + np.ceil((sim.now - start) / interval - 1e-12) * interval
    order = np.lexsort((pool, jobs.gpus[pool], boundary))[: options.max_victim_trials]
    candidates = pool[order].tolist()

    def attempt(k: int) -> np.ndarray | None:
        """Best-fit placement with the first ``k`` candidates' GPUs freed."""
        trial = state.copy()
        for v in candidates[:k]:
            trial.release(running[v].gpus)
        return sim.policy.place(gpus, tp, trial, rng) if trial.total_free >= gpus else None

    # placement only gets easier as more GPUs are freed: bisect on the victim count
    best = attempt(len(candidates))
    if best is None:
        return None
    lo, hi = 0, len(candidates)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        found = attempt(mid)
        if found is None:
            lo = mid
        else:
            hi, best = mid, found
    used = [u for u in candidates[:hi] if np.isin(running[u].gpus, best).any()]
    return best, used


# -- the engine's pre-emption steps (supernode.scheduler.engine.Simulation is ``sim``) ----

def hand_over(sim: Any, owner: int, freed: np.ndarray) -> None:
    """Give the part of ``freed`` that a pending pre-empting job reserved to it."""
    pend = sim.pending[owner]
    mine = freed[np.isin(freed, pend["target"])]
    sim.state.take(mine)
    sim.reserved += len(mine)
    pend["waiting"] -= 1
    if pend["waiting"] == 0:
        del sim.pending[owner]
        sim._start(owner, pend["target"], taken=True)


def try_preempt(sim: Any) -> None:
    """Jobs whose recheck fell now and still wait try to pre-empt (each again every
    ``preempt_after_s`` while it waits)."""
    jobs, opts = sim.jobs, sim.options
    rechecks, sim.rechecks = sim.rechecks, []
    for j in dict.fromkeys(rechecks):
        if not sim.waiting[j] or sim.now - jobs.submit_s[j] < opts.preempt_after_s - 1e-9:
            continue
        found = choose_victims(j, sim, opts, sim.rng)
        if found is None:
            if _candidates(sim, j) <= opts.max_victim_trials:
                key = (int(jobs.priority[j]), int(jobs.gpus[j]))
                sim.parked.setdefault(key, {})[j] = sim.now  # none until room
                sim.parked_key[j] = key
            else:
                sim._push(sim.now + opts.preempt_after_s, RECHECK, j)
            continue
        _reserve(sim, bisect.bisect_left(sim.queue, sim._key(j)), j, *found)


def _candidates(sim: Any, j: int) -> int:
    """Running jobs that waiting job ``j`` could pre-empt now."""
    lower = sim.jobs.priority < sim.jobs.priority[j]
    return int(np.count_nonzero(sim.is_running & ~sim.promised & lower))


def _room(sim: Any, priority: int) -> int:
    """GPUs a job of ``priority`` could have by pre-empting: the free ones and those of
    running, unpromised jobs of lower priority."""
    lower = sum(g for p, g in sim.held.items() if p < priority)
    return int(sim.state.total_free) + lower


def unpark(sim: Any) -> None:
    """Parked jobs whose room could now hold them get their next recheck instant (a
    whole number of ``preempt_after_s`` after their last recheck, at least one)."""
    sim.seen = sim.changes
    every = sim.options.preempt_after_s
    for key in [k for k, jobs in sim.parked.items() if jobs]:
        priority, gpus = key
        if gpus > _room(sim, priority):
            continue  # all victims freed would still not make room: stay parked
        for j, last in sim.parked.pop(key).items():
            del sim.parked_key[j]
            steps = max(1, math.ceil((sim.now - last) / every - 1e-12)) if every > 0 \
                else 1
            sim._push(last + steps * every, RECHECK, j)


def _reserve(sim: Any, k: int, j: int, target: np.ndarray, victims: list[int]) -> None:
    """Waiting job ``j`` (at queue index ``k``) takes the free part of ``target`` now and
    the rest as each of ``victims`` drains at its next checkpoint."""
    st, opts = sim.state, sim.options
    del sim.queue[k]
    sim.waiting[j] = False
    sim.changes += 1
    free_part = target[st.free[target]]
    st.take(free_part)
    sim.reserved += len(free_part)
    sim.pending[j] = {"target": target, "waiting": len(victims)}
    for v in victims:
        run = sim.running[v]
        run.promised = j
        sim.promised[v] = True
        sim.held[int(sim.jobs.priority[v])] -= len(run.gpus)
        boundary = next_checkpoint(run.start, sim.now, opts.checkpoint_interval_s)
        g = len(run.gpus)
        sim.lost["immediate"] += g * (sim.now - last_checkpoint(
            run.start, sim.now, opts.checkpoint_interval_s))
        if boundary < run.end:
            run.seq = sim._push(boundary, DRAIN, v)
    if not victims:
        del sim.pending[j]
        sim._start(j, target, taken=True)

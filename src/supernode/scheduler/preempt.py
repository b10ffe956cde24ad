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
"""

from __future__ import annotations

import math
from typing import ClassVar

import numpy as np

from supernode.scheduler.policies import POLICIES, BestFitPolicy


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
    pool = np.flatnonzero(sim.is_running & ~sim.promised & (jobs.priority < jobs.priority[job]))
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

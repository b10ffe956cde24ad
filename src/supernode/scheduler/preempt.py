"""Pre-emption only at checkpoint boundaries (seed 001 §6: HPC-style pre-emption, killing a
job at once, can corrupt training state and loses the work since its last checkpoint).

The ``preempt`` policy places like ``best-fit``. A high-priority job that has waited
``preempt_after_s`` may take GPUs from lower-priority jobs: victims are tried in order of
their next checkpoint (soonest first), then fewest GPUs, freeing their GPUs on a copy of
the occupancy until best-fit can place the job; only victims whose GPUs the placement uses
are pre-empted. Each victim runs on to its next checkpoint, every
``checkpoint_interval_s`` of wall time since it (re)started, then stops; its work up to
the checkpoint is kept and it re-queues with ``restart_s`` more to run. The GPU-seconds an
immediate kill would have lost (since the last checkpoint) are reported beside it.
"""

from __future__ import annotations

import math
from typing import ClassVar

import numpy as np

from supernode.scheduler.policies import POLICIES, BestFitPolicy
from supernode.scheduler.state import Occupancy


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


def choose_victims(gpus: int, tp: int, priority: int, state: Occupancy, running: dict,
                   priorities: np.ndarray, now_s: float, options, policy,
                   rng: np.random.Generator) -> tuple[np.ndarray, list[int]] | None:
    """(placement, victims) for a job of ``gpus`` GPUs, or None when freeing lower-priority
    jobs (at most ``options.max_victim_trials``) does not make room."""
    interval = options.checkpoint_interval_s
    candidates = [v for v, run in running.items()
                  if priorities[v] < priority and run.promised is None]
    candidates.sort(key=lambda v: (next_checkpoint(running[v].start, now_s, interval),
                                   len(running[v].gpus), v))
    trial = state.copy()
    chosen: list[int] = []
    for v in candidates[: options.max_victim_trials]:
        trial.release(running[v].gpus)
        chosen.append(v)
        if trial.total_free < gpus:
            continue
        target = policy.place(gpus, tp, trial, rng)
        if target is not None:
            used = [u for u in chosen if np.isin(running[u].gpus, target).any()]
            return target, used
    return None

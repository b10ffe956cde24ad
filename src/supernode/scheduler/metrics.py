"""Metrics of one run: utilisation, queueing, fragmentation, TP crossings, slowdowns.

Definitions (``docs/scheduler.md``), over the arrival window ``W`` (first to last submit;
the drain after the last arrival is left out, as it says nothing of steady operation) of a
cluster of ``N`` GPUs:

* ``utilisation``: GPU-seconds held by running jobs in ``W`` / (N W);
  ``goodput_utilisation``: the same counting each job's progress at its ideal speed (held
  GPU-seconds divided by the slowdown; equal to ``utilisation`` without ``stretch``) — what
  slow placements waste is the gap.
* ``mean_queue_s`` (and p50, p95, max; and over high-priority jobs): first start minus
  submit.
* ``fragmentation``: time-average share of the GPUs that are free while jobs wait and that
  no waiting job can use (every job tried in the pass was refused), over ``W``.
* ``tp_crossing_share``: among jobs with TP > 1, the share that ran with a TP group split
  across two supernodes.
* per-job ``slowdown``: run time over run time at the ideal placement (wall time over
  ideal time of its run segments); mean, p95, max over multi-GPU jobs.
* ``slowdown_spread``: the spread among co-located jobs (seed 001 §4.2: > 20 % → < 5 %):
  at :data:`SPREAD_SAMPLES` instants evenly over the makespan, the multi-GPU jobs running
  then; p95/p5 − 1 of their slowdowns; averaged over the instants with two or more.
"""

from __future__ import annotations

import numpy as np

from supernode.scheduler.records import JobTable, RunRecord

SPREAD_SAMPLES = 256
TIMELINE_POINTS = 400


def policy_metrics(rec: RunRecord, jobs: JobTable, cluster_gpus: int) -> dict:
    """The metrics dict of one run (keys in ``docs/scheduler.md``; SI units)."""
    t0, t1 = arrival_window(rec, jobs)
    capacity = cluster_gpus * (t1 - t0)
    wait = rec.first_start_s - jobs.submit_s
    high = jobs.priority > 0
    seg = rec.segments
    held = seg["gpus"] * _overlap(seg["start_s"], seg["end_s"], t0, t1)
    slow = job_slowdowns(rec, len(jobs))
    multi = jobs.gpus > 1
    tp_jobs = jobs.tp > 1
    crossed = np.zeros(len(jobs), dtype=bool)
    crossed[seg["job"][seg["tp_crosses"]]] = True
    spanned = np.zeros(len(jobs), dtype=bool)
    spanned[seg["job"][seg["domains"] > 1]] = True
    return {
        "policy": rec.policy,
        "utilisation": float(held.sum()) / capacity,
        "goodput_utilisation": float((held / seg["slowdown"]).sum() if rec.stretch
                                     else held.sum()) / capacity,
        "mean_queue_s": float(wait.mean()),
        "mean_queue_high_priority_s": float(wait[high].mean()) if high.any() else 0.0,
        "p50_queue_s": float(np.percentile(wait, 50)),
        "p95_queue_s": float(np.percentile(wait, 95)),
        "max_queue_s": float(wait.max()),
        "fragmentation": _timeline_area(rec, "fragmented_gpus", t0, t1) / capacity,
        "tp_crossing_share": float(crossed[tp_jobs].mean()) if tp_jobs.any() else 0.0,
        "tp_jobs": int(tp_jobs.sum()),
        "tp_crossing_jobs": int(crossed[tp_jobs].sum()),
        "multi_supernode_jobs": int(spanned.sum()),
        "mean_slowdown": float(slow[multi].mean()) if multi.any() else 1.0,
        "p95_slowdown": float(np.percentile(slow[multi], 95)) if multi.any() else 1.0,
        "max_slowdown": float(slow.max()),
        "slowdown_spread": slowdown_spread(rec, t0, t1),
        "window_s": t1 - t0,
        "makespan_s": float(np.nanmax(rec.end_s) - jobs.submit_s.min()),
        "preemptions": int(rec.preemptions.sum()),
        "restart_gpu_s": rec.restart_gpu_s,
        "immediate_kill_loss_gpu_s": rec.immediate_loss_gpu_s,
        "reserved_idle_gpu_s": rec.reserved_gpu_s,
        "wall_time_s": rec.wall_time_s,
        "cpu_time_s": rec.cpu_time_s,
    }


def arrival_window(rec: RunRecord, jobs: JobTable) -> tuple[float, float]:
    """First and last submit (s); up to the last finish when all jobs arrive at once."""
    t0, t1 = float(jobs.submit_s.min()), float(jobs.submit_s.max())
    if t1 <= t0:
        t1 = max(float(np.nanmax(rec.end_s)), t0 + 1e-9)
    return t0, t1


def _overlap(start: np.ndarray, end: np.ndarray, t0: float, t1: float) -> np.ndarray:
    """Seconds of each interval [start, end) inside [t0, t1)."""
    return np.clip(np.minimum(end, t1) - np.maximum(start, t0), 0.0, None)


def _timeline_area(rec: RunRecord, column: str, t0: float, t1: float) -> float:
    """Integral over [t0, t1) of a piecewise-constant timeline column (unit x s)."""
    t = rec.timeline["t_s"]
    if len(t) == 0:
        return 0.0
    value = rec.timeline[column]
    nxt = np.append(t[1:], max(t[-1], t1))
    return float((value * _overlap(t, nxt, t0, t1)).sum())


def job_slowdowns(rec: RunRecord, jobs: int) -> np.ndarray:
    """Per job: wall time of its run segments over their time at the ideal placement."""
    seg = rec.segments
    wall = seg["end_s"] - seg["start_s"]
    ideal = wall / seg["slowdown"]
    total_wall = np.bincount(seg["job"], weights=wall, minlength=jobs)
    total_ideal = np.bincount(seg["job"], weights=ideal, minlength=jobs)
    out = np.ones(jobs)
    ok = total_ideal > 0
    out[ok] = total_wall[ok] / total_ideal[ok]
    return out


def slowdown_spread(rec: RunRecord, t0: float, t1: float) -> float:
    """Mean over instants of p95/p5 − 1 of co-running multi-GPU jobs' slowdowns."""
    seg = rec.segments
    multi = seg["gpus"] > 1
    start, end, slow = seg["start_s"][multi], seg["end_s"][multi], seg["slowdown"][multi]
    if len(start) < 2:
        return 0.0
    spreads = []
    for t in np.linspace(t0, t1, SPREAD_SAMPLES, endpoint=False):
        on = slow[(start <= t) & (end > t)]
        if len(on) >= 2:
            lo, hi = np.percentile(on, [5, 95])
            spreads.append(hi / lo - 1.0)
    return float(np.mean(spreads)) if spreads else 0.0


def timeline(rec: RunRecord, cluster_gpus: int, points: int = TIMELINE_POINTS) -> dict:
    """Utilisation, queue length and fragmented share at ``points`` even instants."""
    tl = rec.timeline
    t = tl["t_s"]
    if len(t) == 0:
        return {"t_s": [], "utilisation": [], "queued_jobs": [], "fragmentation": []}
    grid = np.linspace(t[0], t[-1], points)
    at = np.clip(np.searchsorted(t, grid, side="right") - 1, 0, len(t) - 1)
    return {"t_s": grid.tolist(),
            "utilisation": (tl["busy_gpus"][at] / cluster_gpus).tolist(),
            "queued_jobs": tl["queued_jobs"][at].astype(int).tolist(),
            "fragmentation": (tl["fragmented_gpus"][at] / cluster_gpus).tolist()}

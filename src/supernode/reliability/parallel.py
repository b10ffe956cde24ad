"""Fan Monte Carlo runs out over a local process pool or Ray, with identical results.

Pure tasks (the spec and a range of run indices) run by :func:`supernode.parallel.
run_tasks`, results put back in run order. Each run seeds itself from ``(seed, run)``, so
the rows are the same bit for bit inline, on the pool and on Ray.
"""

from __future__ import annotations

import os
from collections.abc import Callable

import numpy as np

from supernode.parallel import run_tasks
from supernode.reliability.montecarlo import MonteCarloSpec, simulate_runs

Progress = Callable[[int], None]
#: Runs per task: large enough to amortise dispatch, small enough for a smooth progress bar.
MAX_CHUNK = 50
#: Below this many simulated failures in all (about a second of work), stay in this
#: process when the caller does not ask for workers: starting each worker costs ~1 s.
INLINE_EVENTS = 2_000_000


def expected_events(spec: MonteCarloSpec, runs: int) -> float:
    """Failures the runs will draw, on average (the work to share out)."""
    return runs * (sum(c.rate_per_s for c in spec.classes) * spec.horizon_s + 50.0)


def chunks(runs: int, workers: int) -> list[tuple[int, int]]:
    """Run ranges ``[(start, stop), ...]`` covering ``range(runs)``."""
    size = max(1, min(MAX_CHUNK, -(-runs // max(1, 4 * workers))))
    return [(s, min(runs, s + size)) for s in range(0, runs, size)]


def run_monte_carlo(spec: MonteCarloSpec, runs: int, workers: int | None = None,
                    use_ray: bool = False, ray_address: str | None = None,
                    on_done: Progress | None = None) -> np.ndarray:
    """Rows of ``runs`` runs (one per run, in run order): inline, process pool or Ray.

    ``workers`` None: inline for small batches (:data:`INLINE_EVENTS`), else one process
    per core; 1: inline; more: that many processes (or Ray CPUs).
    """
    done = on_done or (lambda n: None)
    inline = workers is None and expected_events(spec, runs) < INLINE_EVENTS
    workers = workers or min(os.cpu_count() or 1, 8)
    parts = chunks(runs, workers)
    rows = run_tasks(simulate_runs, parts, 1 if inline and not use_ray else workers,
                     shared=(spec,), use_ray=use_ray, ray_address=ray_address,
                     on_done=lambda i: done(parts[i][1] - parts[i][0]))
    return np.concatenate(rows) if rows else simulate_runs(spec, 0, 0)

"""Fan Monte Carlo runs out over a local process pool or Ray, with identical results.

The sweep's pattern (:mod:`supernode.planner.sweep_run`): pure tasks (a spec and a range of
run indices), a spawn-safe :class:`~concurrent.futures.ProcessPoolExecutor` or Ray remote
calls, results put back in run order. Each run seeds itself from ``(seed, run)``, so the
rows are the same bit for bit inline, on the pool and on Ray.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, as_completed

import numpy as np

from supernode.errors import InputError
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
    if use_ray:
        rows = _ray(spec, parts, workers, ray_address, done)
    elif workers <= 1 or inline:
        rows = []
        for start, stop in parts:
            rows.append(simulate_runs(spec, start, stop))
            done(stop - start)
    else:
        rows = _pool(spec, parts, workers, done)
    return np.concatenate(rows) if rows else simulate_runs(spec, 0, 0)


def _pool(spec: MonteCarloSpec, parts: list[tuple[int, int]], workers: int,
          done: Progress) -> list[np.ndarray]:
    out: dict[int, np.ndarray] = {}
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        futures = {pool.submit(simulate_runs, spec, a, b): i for i, (a, b) in enumerate(parts)}
        for future in as_completed(futures):
            i = futures[future]
            out[i] = future.result()
            done(parts[i][1] - parts[i][0])
    return [out[i] for i in range(len(parts))]


def _ray(spec: MonteCarloSpec, parts: list[tuple[int, int]], workers: int,
         address: str | None, done: Progress) -> list[np.ndarray]:
    try:
        import ray
    except ImportError:
        raise InputError("--ray", "Ray is not installed: pip install "
                                  "'supernode-toolkit[ray]'") from None
    started = not ray.is_initialized()
    if started:
        if address:
            ray.init(address=address, log_to_driver=False)
        else:
            ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False)
    try:
        remote = ray.remote(simulate_runs)
        shared = ray.put(spec)
        refs = [remote.remote(shared, a, b) for a, b in parts]
        index = {ref: i for i, ref in enumerate(refs)}
        out: dict[int, np.ndarray] = {}
        pending = list(refs)
        while pending:
            ready, pending = ray.wait(pending, num_returns=1)
            for ref in ready:
                i = index[ref]
                out[i] = ray.get(ref)
                done(parts[i][1] - parts[i][0])
        return [out[i] for i in range(len(parts))]
    finally:
        if started:
            ray.shutdown()

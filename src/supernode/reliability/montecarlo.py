"""Monte Carlo goodput of one training job: seeded, numpy-vectorised within each run.

One run draws every failure class's arrivals over the horizon (a Poisson process, or the
superposition of one stationary Weibull renewal process per unit of the class, of the
unit's mean rate: units of a fleet in service at random ages), then computes without an
event loop:

1. **Spares.** A hardware failure takes ``hosts_out`` hosts out for ``repair_s``. The job may
   restart once the hosts out of service are no more than the spare hosts: the level of
   that step function is a cumulative sum over sorted boundaries, and the first time it is
   low enough after each failure is a reverse running minimum.
2. **Progress clock.** Degrading failures (a lost uplink) slow the job to ``speed`` until
   repaired, and so does a restart onto a degraded domain (a lost scale-up plane); an
   isolated failure (``shrink``) pauses it, then runs it with fewer replicas until a spare
   joins. Progress ``P(t) = ∫ speed`` is piecewise linear.
3. **Restarts.** A restart-class failure at ``t`` loses the work since the last checkpoint;
   the job is back at ``max(t + restart_s, spare ready) + resume_s``. Between two failures it
   makes ``A = P(next) - P(back)`` of progress, kept in whole cycles of ``τ`` work plus a
   checkpoint stop ``δ``: ``τ floor(A / (τ + δ))``. This is Daly's model (failures during
   restarts and checkpoints included), so with one exponential class and ample spares the
   mean goodput converges to :func:`supernode.reliability.goodput.daly_goodput`.

Each run's generator is ``SeedSequence([seed, run])``: results do not depend on how runs are
split between processes or Ray tasks. Every interval of a grid is scored on the same draws.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

RESTART, DEGRADE, SHRINK = "restart", "degrade", "shrink"
#: Per-run columns before the per-interval goodputs.
METRICS = ("interruptions", "degradations", "shrinks", "spare_wait_s", "downtime_s")


@dataclass(frozen=True)
class FailureClass:
    """One kind of failure as the simulation sees it (SI units; rate for the whole job)."""

    name: str
    rate_per_s: float
    kind: str
    restart_s: float = 0.0
    resume_s: float = 0.0
    hosts_out: int = 0
    repair_s: float = 0.0
    speed: float = 1.0
    pause_s: float = 0.0
    #: Units the class's rate covers (Weibull: one renewal process per unit).
    units: float = 1.0


@dataclass(frozen=True)
class MonteCarloSpec:
    """Everything one batch of runs needs (plain data: picklable, Ray-serialisable)."""

    horizon_s: float
    classes: tuple[FailureClass, ...]
    intervals_s: tuple[float, ...]
    blocking_s: float
    spare_hosts: int
    weibull_shape: float = 1.0
    join_s: float = 0.0
    seed: int = 0


#: Most units drawn as separate renewal processes; a class of more is split into this many.
MAX_RENEWAL_UNITS = 1_000_000


def arrivals(rng: np.random.Generator, rate: float, horizon: float, shape: float,
             units: float = 1.0) -> np.ndarray:
    """Sorted arrival times in [0, horizon) of ``units`` renewal processes (one per unit,
    stationary) of total mean rate ``rate``: their superposition. One unit: an ordinary
    renewal process from 0 (as before). Exponential (``shape`` 1): a Poisson process of
    ``rate``, whatever the units."""
    if rate <= 0 or horizon <= 0:
        return np.empty(0)
    if shape == 1.0:
        return np.sort(rng.uniform(0.0, horizon, rng.poisson(rate * horizon)))
    n = min(MAX_RENEWAL_UNITS, max(1, round(units)))
    if n > 1:
        return _unit_renewals(rng, rate / n, horizon, shape, n)
    scale = 1.0 / (rate * math.gamma(1.0 + 1.0 / shape))
    mean = rate * horizon
    times = np.cumsum(scale * rng.weibull(shape, int(mean + 6 * math.sqrt(mean) + 16)))
    while times[-1] < horizon:
        more = np.cumsum(scale * rng.weibull(shape, int(mean / 2 + 16)))
        times = np.concatenate([times, times[-1] + more])
    return times[times < horizon]


def _unit_renewals(rng: np.random.Generator, rate: float, horizon: float, shape: float,
                   n: int) -> np.ndarray:
    """Superposed arrivals of ``n`` Weibull renewal processes, each of mean rate ``rate``,
    in equilibrium (units of a fleet in service, at random ages: stationary renewal; its
    count keeps the mean rate): the first arrival is the residual of a length-biased
    interval, ``U L`` with ``(L / scale)^k ~ Gamma(1 + 1/k)`` (vectorised over the units
    still inside the horizon)."""
    scale = 1.0 / (rate * math.gamma(1.0 + 1.0 / shape))
    length = scale * rng.gamma(1.0 + 1.0 / shape, 1.0, n) ** (1.0 / shape)
    clock = rng.uniform(0.0, 1.0, n) * length
    first = clock < horizon
    out = [clock[first]]
    alive = np.flatnonzero(first)
    while alive.size:
        clock[alive] += scale * rng.weibull(shape, alive.size)
        inside = clock[alive] < horizon
        out.append(clock[alive][inside])
        alive = alive[inside]
    return np.sort(np.concatenate(out)) if out else np.empty(0)


def ready_times(t: np.ndarray, hosts: np.ndarray, repair: np.ndarray, spares: int
                ) -> np.ndarray:
    """For each failure, the first time at or after it with out-of-service hosts <= spares."""
    n = t.size
    if n == 0:
        return t
    bt = np.concatenate([t, t + repair])
    step = np.concatenate([hosts, -hosts])
    # at equal times a repair ends before a failure starts; failures keep their order
    order = np.lexsort((np.concatenate([np.ones(n), np.zeros(n)]), bt))
    level = np.cumsum(step[order])
    position = np.empty(2 * n, dtype=np.int64)
    position[order] = np.arange(2 * n)
    big = 2 * n
    ok = np.where(level <= spares, np.arange(2 * n), big)
    next_ok = np.minimum.accumulate(ok[::-1])[::-1]
    j = next_ok[position[:n]]
    return np.where(j < big, bt[order][np.minimum(j, big - 1)], np.inf)


def progress_clock(windows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Boundaries, speed after each boundary, and progress at each boundary, for windows
    ``[[start, end, speed], ...]`` whose speeds multiply where they overlap."""
    if windows.size == 0:
        return np.zeros(1), np.ones(1), np.zeros(1)
    start, end, speed = windows.T
    zero = speed <= 0
    logs = np.log(np.where(zero, 1.0, speed))
    bt = np.concatenate([[0.0], start, end])
    dlog = np.concatenate([[0.0], logs, -logs])
    dzero = np.concatenate([[0], zero.astype(np.int64), -zero.astype(np.int64)])
    order = np.argsort(bt, kind="stable")
    bt = bt[order]
    rate = np.where(np.cumsum(dzero[order]) > 0, 0.0, np.exp(np.cumsum(dlog[order])))
    progress = np.concatenate([[0.0], np.cumsum(rate[:-1] * np.diff(bt))])
    return bt, rate, progress


def progress_at(clock: tuple[np.ndarray, np.ndarray, np.ndarray], q: np.ndarray) -> np.ndarray:
    """Progress ``P(q)`` (seconds of full-speed work done by wall time ``q``)."""
    bt, rate, progress = clock
    k = np.searchsorted(bt, q, side="right") - 1
    return progress[k] + rate[k] * (q - bt[k])


def _draw(spec: MonteCarloSpec, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    times, owner = [], []
    for i, c in enumerate(spec.classes):
        t = arrivals(rng, c.rate_per_s, spec.horizon_s, spec.weibull_shape, c.units)
        times.append(t)
        owner.append(np.full(t.size, i, dtype=np.int64))
    t = np.concatenate(times) if times else np.empty(0)
    k = np.concatenate(owner) if owner else np.empty(0, dtype=np.int64)
    order = np.argsort(t, kind="stable")
    return t[order], k[order]


def _columns(spec: MonteCarloSpec, k: np.ndarray) -> dict[str, np.ndarray]:
    table = {f: np.array([getattr(c, f) for c in spec.classes] or [0.0], dtype=float)
             for f in ("restart_s", "resume_s", "hosts_out", "repair_s", "speed", "pause_s")}
    kinds = np.array([c.kind for c in spec.classes] or [RESTART])
    out = {f: v[k] for f, v in table.items()}
    out["kind"] = kinds[k]
    return out


def simulate_run(spec: MonteCarloSpec, run: int) -> np.ndarray:
    """One run: :data:`METRICS` then the goodput at each of ``spec.intervals_s``."""
    rng = np.random.default_rng(np.random.SeedSequence([spec.seed, run]))
    t, k = _draw(spec, rng)
    col = _columns(spec, k)
    ready = ready_times(t, col["hosts_out"], col["repair_s"], spec.spare_hosts)
    restart = col["kind"] == RESTART
    shrink = col["kind"] == SHRINK
    degrade = col["kind"] == DEGRADE
    windows = [np.column_stack([t[degrade], t[degrade] + col["repair_s"][degrade],
                                col["speed"][degrade]])]
    ts, pause = t[shrink], col["pause_s"][shrink]
    back = np.maximum(ts + pause, ready[shrink]) + spec.join_s
    windows += [np.column_stack([ts, ts + pause, np.zeros(ts.size)]),
                np.column_stack([ts + pause, back, col["speed"][shrink]])]
    # a restart onto a degraded domain (a lost scale-up plane) runs slower until the repair
    slow = restart & (col["speed"] < 1.0)
    windows.append(np.column_stack([t[slow], t[slow] + col["repair_s"][slow],
                                    col["speed"][slow]]))
    clock = progress_clock(np.concatenate(windows))
    tr = t[restart]
    done = np.maximum(tr + col["restart_s"][restart], ready[restart]) + col["resume_s"][restart]
    horizon = spec.horizon_s
    starts = np.concatenate([[0.0], np.minimum(done, horizon)])
    ends = np.concatenate([tr, [horizon]])
    avail = np.maximum(0.0, progress_at(clock, ends) - progress_at(clock, starts))
    avail = np.where(starts < ends, avail, 0.0)
    cycle = np.asarray(spec.intervals_s) + spec.blocking_s
    whole = np.floor(avail[:, None] / cycle[None, :])
    useful = whole * np.asarray(spec.intervals_s)[None, :]
    tail = avail[-1] - whole[-1] * cycle
    useful[-1] += np.clip(tail, 0.0, np.asarray(spec.intervals_s))
    waited = np.maximum(0.0, ready[restart] - tr - col["restart_s"][restart])
    downtime = np.minimum(done, np.concatenate([tr[1:], [horizon]])) - tr
    metrics = [restart.sum(), degrade.sum(), shrink.sum(), waited.sum(), downtime.sum()]
    return np.concatenate([np.asarray(metrics, dtype=float), useful.sum(axis=0) / horizon])


def simulate_runs(spec: MonteCarloSpec, start: int, stop: int) -> np.ndarray:
    """Runs ``start .. stop - 1`` stacked: one row per run (see :func:`simulate_run`)."""
    return np.stack([simulate_run(spec, r) for r in range(start, stop)]) if stop > start \
        else np.empty((0, len(METRICS) + len(spec.intervals_s)))

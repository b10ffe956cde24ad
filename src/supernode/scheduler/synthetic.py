"""Synthetic job traces: Poisson arrivals, a GPU-count law and a log-normal run time.

* Arrivals: a Poisson process (exponential gaps) at ``arrival_rate_per_h`` jobs per hour,
  or at the rate that offers ``load`` times the cluster's GPU-seconds (load 1 = the
  cluster's capacity, computed from the drawn sizes and run times).
* Sizes: ``philly`` draws GPU counts with the frequencies of the Philly trace
  (:data:`PHILLY_GPU_COUNTS`, counted from ``data/traces/philly.csv``); ``pow2`` draws a
  power of two from 1 to ``max_gpus`` uniformly.
* Run times: log-normal with median ``median_duration_s`` and log-space standard deviation
  ``duration_sigma`` (defaults fitted to Philly: median 1,144 s, σ = 2.16 in ln s), cut to
  [1 s, ``max_duration_s``].

One ``numpy`` generator seeded with ``seed`` draws everything: same spec, same trace.
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
from pydantic import Field, model_validator

from supernode.bounds import MAX_TRACE_JOBS
from supernode.errors import InputError
from supernode.scheduler.trace import Trace
from supernode.spec.base import StrictModel

#: Jobs per GPU count in the Philly trace (Jeon et al., ATC'19; data/traces/philly.csv).
PHILLY_GPU_COUNTS = {1: 76627, 2: 1818, 4: 1870, 8: 1643, 12: 7, 16: 199, 24: 7, 32: 67,
                     64: 6, 128: 3}
#: Philly run times: median (s) and standard deviation of ln(run time / s).
PHILLY_MEDIAN_DURATION_S = 1144.0
PHILLY_DURATION_SIGMA = 2.16
#: Most synthetic jobs one spec may ask for.
MAX_SYNTHETIC_JOBS = MAX_TRACE_JOBS
#: Least offered load, and least arrival rate (jobs per hour), a spec may ask for: below,
#: the gaps between arrivals overflow (a load of 1e-320 is a subnormal number).
MIN_LOAD = MIN_ARRIVAL_RATE_PER_H = 1e-6


class SyntheticSpec(StrictModel):
    """Parameters of a synthetic trace (see the module doc)."""

    jobs: int = Field(10_000, ge=1, le=MAX_SYNTHETIC_JOBS, description="Jobs to draw.")
    arrival_rate_per_h: float | None = Field(None, ge=MIN_ARRIVAL_RATE_PER_H,
                                             description="Poisson arrivals per "
                                                                     "hour; null = from load.")
    load: float = Field(0.8, ge=MIN_LOAD, le=100, description="Offered GPU-seconds over the "
                                                       "cluster's, when no rate is given.")
    size_law: Literal["philly", "pow2"] = Field("philly", description="GPU-count law.")
    max_gpus: int = Field(128, ge=1, description="Largest job for the pow2 law (GPUs).")
    median_duration_s: float = Field(PHILLY_MEDIAN_DURATION_S, gt=0,
                                     description="Median run time (s).")
    duration_sigma: float = Field(PHILLY_DURATION_SIGMA, ge=0, le=10,
                                  description="Std. dev. of ln(run time).")
    max_duration_s: float = Field(30 * 86400.0, gt=1, description="Longest run time (s).")

    @model_validator(mode="after")
    def _check(self) -> SyntheticSpec:
        if self.max_duration_s < self.median_duration_s:
            raise ValueError("max_duration_s must be at least median_duration_s")
        return self


def synthetic_trace(spec: SyntheticSpec, cluster_gpus: int, seed: int,
                    priority_min_gpus: int = 8) -> Trace:
    """Draw a trace by ``spec`` for a cluster of ``cluster_gpus`` GPUs; jobs of at least
    ``priority_min_gpus`` GPUs get priority 1."""
    rng = np.random.default_rng(seed)
    gpus = _sizes(spec, rng)
    if gpus.max() > cluster_gpus:
        raise InputError("--max-gpus", f"jobs of up to {int(gpus.max())} GPUs do not fit a "
                                       f"cluster of {cluster_gpus:,} GPUs")
    sigma = spec.duration_sigma
    duration = np.exp(math.log(spec.median_duration_s) + sigma * rng.standard_normal(spec.jobs))
    duration = np.clip(np.round(duration), 1.0, spec.max_duration_s)
    rate_per_s = (spec.arrival_rate_per_h / 3600.0 if spec.arrival_rate_per_h else
                  spec.load * cluster_gpus / float(np.mean(gpus * duration)))
    gaps = rng.exponential(1.0 / rate_per_s, spec.jobs)
    submit = np.cumsum(gaps) - gaps[0]
    if not np.isfinite(submit[-1]):
        raise InputError("--load", "arrivals this sparse overflow the trace's clock; raise "
                                   "--load or --arrival-rate-per-h")
    n = spec.jobs
    minus = np.full(n, -1, dtype=np.int64)
    priority = (gpus >= priority_min_gpus).astype(np.int64)
    return Trace(f"synthetic-{spec.size_law}", "synthetic", submit, duration,
                 gpus.astype(np.int64), priority, minus, minus.copy(),
                 np.arange(n, dtype=np.int64))


def _sizes(spec: SyntheticSpec, rng: np.random.Generator) -> np.ndarray:
    if spec.size_law == "philly":
        values = np.array(list(PHILLY_GPU_COUNTS))
        weights = np.array(list(PHILLY_GPU_COUNTS.values()), dtype=float)
        return rng.choice(values, size=spec.jobs, p=weights / weights.sum())
    powers = 2 ** np.arange(int(math.log2(spec.max_gpus)) + 1)
    return rng.choice(powers, size=spec.jobs)

"""Analytic goodput: the share of wall time that becomes kept training progress.

Daly (2006, eq. 5) gives the expected wall time of ``T_s`` of work checkpointed every ``τ``
of compute at cost ``δ``, with exponential failures of mean ``M`` and a restart of ``R``
(failures may strike during work, checkpoints and restarts alike)::

    T_w = M e^{R/M} (e^{(τ+δ)/M} - 1) T_s / τ

so goodput ``G = τ / (M e^{R/M} (e^{(τ+δ)/M} - 1))``. The first-order form (Young) is
``G ≈ 1 - δ/τ - (τ/2 + R)/M``. Degraded modes (a job that runs slower until a repair) take a
further share ``Σ rate x duration x (1 - speed)`` of the time; the Monte Carlo
(:mod:`supernode.reliability.montecarlo`) simulates the same model without these closed forms.
"""

from __future__ import annotations

import math


def daly_goodput(tau_s: float, delta_s: float, restart_s: float, mtbf_s: float) -> float:
    """Expected goodput under Daly's exact model (exponential failures), in [0, 1]."""
    if not math.isfinite(mtbf_s):
        return tau_s / (tau_s + delta_s)
    m = mtbf_s
    exponent = restart_s / m + math.log(math.expm1((tau_s + delta_s) / m))
    return min(1.0, tau_s / m * math.exp(-exponent)) if exponent < 700 else 0.0


def degraded_share(windows: list[tuple[float, float, float]]) -> float:
    """Share of time lost to degraded running: ``Σ rate_per_s x duration_s x (1 - speed)``."""
    return sum(rate * duration * (1.0 - speed) for rate, duration, speed in windows)

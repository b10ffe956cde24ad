"""Analytic goodput: the share of wall time that becomes kept training progress.

Daly (2006, eq. 5) gives the expected wall time of ``T_s`` of work checkpointed every ``τ``
of compute at cost ``δ``, with exponential failures of mean ``M`` and a restart of ``R``
(failures may strike during work, checkpoints and restarts alike)::

    T_w = M e^{R/M} (e^{(τ+δ)/M} - 1) T_s / τ

so goodput ``G = τ / (M e^{R/M} (e^{(τ+δ)/M} - 1))``. The first-order form (Young) is
``G ≈ 1 - δ/τ - (τ/2 + R)/M``. Degraded modes (a job that runs slower until a repair) take a
further share ``Σ rate x duration x (1 - speed)`` of the time; the Monte Carlo
(:mod:`supernode.reliability.montecarlo`) simulates the same model without these closed forms.

**Waiting for a spare.** A hardware restart needs healthy hosts: it waits while more hosts
are out of service than there are spares. Hosts out form an M/G/∞ queue (failures arrive at
``Σ rate x hosts``, each out for its repair), so at a failure the others out are Poisson of
mean ``L = Σ rate x hosts x repair`` (PASTA). With ``m`` hosts out and ``S`` spares the job
waits for ``m - S`` of them to come back: with repairs of mean ``r`` taken as exponential,
``r (H_m - H_S)`` (``H`` harmonic numbers). The expected wait per failure, ``W``, costs wall
time without progress and without a failure clock (failures during it only lengthen the
queue): goodput is divided by ``1 + Σ rate x W`` (:func:`spare_wait_share`).
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


def _poisson(mean: float, n_max: int) -> list[float]:
    """Poisson probabilities ``P(N = 0..n_max)`` of ``mean`` (computed in logs)."""
    return [math.exp(-mean + n * math.log(mean) - math.lgamma(n + 1)) if mean > 0
            else float(n == 0) for n in range(n_max + 1)]


def expected_spare_wait_s(hosts_out: int, others_mean: float, repair_s: float,
                          spares: int) -> float:
    """Expected wait (s) of a restart that takes ``hosts_out`` hosts out, with the others out
    Poisson of mean ``others_mean``, repairs of mean ``repair_s`` (exponential) and
    ``spares`` spare hosts: ``E[r (H_m - H_S) | m > S]`` with ``m = hosts_out + N``."""
    if hosts_out <= 0 or repair_s <= 0:
        return 0.0
    n_max = int(others_mean + 10.0 * math.sqrt(others_mean) + 20)
    harmonic = [0.0]
    for i in range(1, hosts_out + n_max + 1):
        harmonic.append(harmonic[-1] + 1.0 / i)
    wait = 0.0
    for n, p in enumerate(_poisson(others_mean, n_max)):
        m = hosts_out + n
        if m > spares:
            wait += p * repair_s * (harmonic[m] - harmonic[spares])
    return wait


def spare_wait_share(restarts: list[tuple[float, int, float]], spares: int) -> float:
    """``Σ rate x W`` (waiting time per unit of wall time) of hardware restarts given as
    ``(rate_per_s, hosts_out, repair_s)`` with ``spares`` spare hosts (module docstring)."""
    flow = sum(rate * hosts for rate, hosts, repair in restarts if hosts and repair > 0)
    if flow <= 0:
        return 0.0
    busy = sum(rate * hosts * repair for rate, hosts, repair in restarts)
    mean_repair = busy / flow
    return sum(rate * expected_spare_wait_s(hosts, busy, mean_repair, spares)
               for rate, hosts, repair in restarts if hosts and repair > 0)

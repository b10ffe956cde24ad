"""One reliability scenario: failure modes priced, checkpoint costed, Monte Carlo classes.

:func:`build_scenario` turns a job and the recovery design (spares, hot standby, checkpoint
bandwidth and mode, recovery policy) into what the analytic model and the Monte Carlo need.
The what-if table rebuilds it with one design knob changed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from supernode.reliability.checkpoint import (
    CheckpointCost,
    checkpoint_cost,
    daly_interval_s,
    young_interval_s,
)
from supernode.reliability.degraded import Job, price_modes, replicas_hit, shrink_speed
from supernode.reliability.domains import ABSORBED, DEGRADE, INTERRUPT, FailureMode, failure_modes
from supernode.reliability.goodput import daly_goodput, degraded_share, spare_wait_share
from supernode.reliability.inventory import Inventory
from supernode.reliability.montecarlo import DEGRADE as MC_DEGRADE
from supernode.reliability.montecarlo import (
    RESTART,
    SHRINK,
    FailureClass,
    MonteCarloSpec,
)
from supernode.reliability.recovery import RecoveryTimes, restart_parts
from supernode.spec.resolved import Cluster

#: Grid of checkpoint intervals the simulation scores: Daly's times 2^(-2 .. 2).
GRID_EXPONENTS = np.linspace(-2.0, 2.0, 17)


@dataclass(frozen=True)
class Design:
    """The recovery design knobs (SI units; bandwidths aggregate, bytes/s)."""

    spare_hosts: int
    hot_standby_share: float
    write_bytes_per_s: float
    read_bytes_per_s: float
    checkpoint_mode: str
    recovery: str
    dual_homed: bool
    interval_s: float | None = None


@dataclass(frozen=True)
class Scenario:
    """Priced failure modes, checkpoint cost, intervals and the Monte Carlo spec."""

    design: Design
    modes: list[FailureMode]
    checkpoint: CheckpointCost
    mtbf_s: float
    restart_s: float
    young_s: float
    daly_s: float
    interval_s: float
    spec: MonteCarloSpec
    analytic_goodput: float
    degraded_share: float
    #: Expected wait for spare hosts per unit of wall time (analytic).
    spare_wait_share: float = 0.0


def _classes(modes: list[FailureMode], times: RecoveryTimes, load_s: float
             ) -> tuple[FailureClass, ...]:
    out = []
    for m in modes:
        if m.effect == ABSORBED:
            out.append(FailureClass(m.component, m.rate_per_s, MC_DEGRADE,
                                    repair_s=times.failover_s, speed=0.0, units=m.units))
        elif m.effect == DEGRADE:
            out.append(FailureClass(m.component, m.rate_per_s, MC_DEGRADE,
                                    repair_s=m.repair_s, speed=m.speed, units=m.units))
        elif m.effect == SHRINK:
            out.append(FailureClass(m.component, m.rate_per_s, SHRINK, hosts_out=m.hosts_out,
                                    repair_s=m.repair_s, speed=m.speed,
                                    pause_s=times.detection_s + times.shrink_s,
                                    units=m.units))
        else:
            before, after = restart_parts(times, load_s, m.hosts_out > 0)
            out.append(FailureClass(m.component, m.rate_per_s, RESTART, restart_s=before,
                                    resume_s=after, hosts_out=m.hosts_out,
                                    repair_s=m.repair_s, speed=m.speed, units=m.units))
    return tuple(out)


def _shrinkable(job: Job, modes: list[FailureMode]) -> list[FailureMode]:
    """Interrupting hardware failures that isolating a few DP replicas can absorb."""
    out = []
    for m in modes:
        hits = replicas_hit(job, m.gpus_out) if m.gpus_out else 0
        if m.effect == INTERRUPT and m.gpus_out and hits < job.plan.dp:
            speed = shrink_speed(job, hits)
            m = replace(m, effect=SHRINK, speed=speed,
                        notes=[*m.notes, f"isolate: {hits} of {job.plan.dp} DP replicas "
                                         f"dropped until a spare joins"])
        out.append(m)
    return out


def build_scenario(cluster: Cluster, inventory: Inventory, rates: dict, job: Job,
                   design: Design, times: RecoveryTimes, horizon_s: float, seed: int,
                   weibull_shape: float, pcie_bytes_per_s: float, size_bytes: float,
                   netsim: dict[str, float] | None = None) -> Scenario:
    """Everything the analytic model and the Monte Carlo need for one design."""
    modes = failure_modes(cluster, inventory, rates, design.hot_standby_share,
                          design.dual_homed)
    modes = price_modes(job, modes, netsim)
    if design.recovery == "shrink":
        modes = _shrinkable(job, modes)
    ckpt = checkpoint_cost(size_bytes, job.nominal.gpus, design.write_bytes_per_s,
                           design.read_bytes_per_s, pcie_bytes_per_s, design.checkpoint_mode)
    classes = _classes(modes, times, ckpt.read_s)
    a = analytic_figures(classes, times, ckpt.blocking_s, ckpt.min_interval_s,
                         design.interval_s, horizon_s, design.spare_hosts)
    grid = sorted({*(max(a.daly_s * 2.0 ** e, ckpt.min_interval_s) for e in GRID_EXPONENTS),
                   max(a.young_s, ckpt.min_interval_s), a.interval_s})
    spec = MonteCarloSpec(horizon_s, classes, tuple(grid), a.blocking_s, design.spare_hosts,
                          weibull_shape, times.reschedule_s + times.warmup_s, seed)
    return Scenario(design, modes, ckpt, a.mtbf_s, a.restart_s, a.young_s, a.daly_s,
                    a.interval_s, spec, a.goodput, a.degraded_share, a.spare_wait_share)


@dataclass(frozen=True)
class Analytic:
    """The closed-form figures of one set of failure classes (SI units)."""

    mtbf_s: float
    restart_s: float
    blocking_s: float
    young_s: float
    daly_s: float
    interval_s: float
    degraded_share: float
    spare_wait_share: float
    goodput: float


def analytic_figures(classes: tuple[FailureClass, ...], times: RecoveryTimes,
                     blocking_s: float, min_interval_s: float, interval_s: float | None,
                     horizon_s: float, spares: int) -> Analytic:
    """MTBF, intervals and analytic goodput of ``classes``: Daly's model times the share
    left by degraded running, divided by ``1 +`` the waits for a spare host
    (:func:`~supernode.reliability.goodput.spare_wait_share`)."""
    restarts = [c for c in classes if c.kind == RESTART]
    rate = sum(c.rate_per_s for c in restarts)
    mtbf = 1.0 / rate if rate > 0 else math.inf
    restart_s = (sum(c.rate_per_s * (c.restart_s + c.resume_s) for c in restarts) / rate
                 if rate > 0 else 0.0)
    blocking = max(blocking_s, 1e-3)
    young = young_interval_s(blocking, mtbf) if rate > 0 else horizon_s
    daly = daly_interval_s(blocking, mtbf) if rate > 0 else horizon_s
    chosen = max(interval_s or daly, min_interval_s)
    windows = [(c.rate_per_s, c.repair_s, c.speed) for c in classes if c.kind == MC_DEGRADE]
    windows += [(c.rate_per_s, c.pause_s, 0.0) for c in classes if c.kind == SHRINK]
    windows += [(c.rate_per_s, times.reschedule_s + times.warmup_s, c.speed)
                for c in classes if c.kind == SHRINK]
    # a restart onto a degraded domain (a lost plane) runs slower until the repair
    windows += [(c.rate_per_s, c.repair_s, c.speed) for c in restarts if c.speed < 1.0]
    lost = degraded_share(windows)
    waits = spare_wait_share([(c.rate_per_s, c.hosts_out, c.repair_s) for c in restarts],
                             spares)
    goodput = (daly_goodput(chosen, blocking, restart_s, mtbf) * max(0.0, 1.0 - lost)
               / (1.0 + waits))
    return Analytic(mtbf, restart_s, blocking, young, daly, chosen, lost, waits, goodput)

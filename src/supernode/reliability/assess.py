"""The library entry point: :func:`assess_reliability` of one job on one cluster.

Reads the cluster's optional ``reliability`` block and the caller's what-if options (which
win), prices every failure mode on the job's plan (the planner's best when none is given),
sizes checkpoints, and runs the Monte Carlo (process pool or Ray). The result
(:class:`~supernode.reliability.result.ReliabilityResult`) is what ``supernode reliability``
prints and what the design report's reliability section and rules read.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import partial

import numpy as np

from supernode import bounds
from supernode.cluster.cooling import CoolingTopology
from supernode.errors import InputError
from supernode.estimate.model import estimate_plan
from supernode.estimate.system import system_from_cluster
from supernode.reliability.checkpoint import (
    GBYTE_PER_S,
    checkpoint_bytes,
    default_bandwidth_bytes_per_s,
)
from supernode.reliability.degraded import Job
from supernode.reliability.inventory import Inventory, cluster_inventory
from supernode.reliability.montecarlo import METRICS
from supernode.reliability.parallel import run_monte_carlo
from supernode.reliability.rates import DAY_S, ComponentRate, default_rates, with_overrides
from supernode.reliability.recovery import RecoveryTimes
from supernode.reliability.result import ReliabilityResult, WhatIf, mc_summary
from supernode.reliability.scenario import Design, Scenario, build_scenario
from supernode.reliability.standby import HotStandby, hot_standby
from supernode.spec.base import UNIT_LIMITS
from supernode.spec.plan import ParallelPlan
from supernode.spec.reliability import ReliabilitySpec
from supernode.spec.resolved import Cluster
from supernode.spec.workload import WorkloadSpec
from supernode.topology import topology_report
from supernode.topology.cluster_graph import pcie_bandwidth_bytes_per_s

#: Spare hosts held when neither the cluster nor the caller says. ASSUMPTION: 2% of the
#: job's hosts, rounded up (operators keep a small hot-spare pool per pod).
DEFAULT_SPARE_SHARE = 0.02
MAX_DAYS = bounds.MAX_DAYS
MAX_RUNS = bounds.MAX_RUNS
#: The range of a checkpoint write bandwidth: the unit limit of a ``*_gbyte_per_s`` field.
WRITE_LIMIT = UNIT_LIMITS["_gbyte_per_s"]
#: Runs of each what-if row (common random numbers: the same draws as the main runs).
WHAT_IF_RUNS = 64
#: build_scenario's arguments before the design, and after it.
_Context = tuple[Cluster, Inventory, dict[str, ComponentRate], Job]
_Extras = tuple[RecoveryTimes, float, int, float, float, float, dict[str, float] | None]


@dataclass(frozen=True)
class ReliabilityOptions:
    """What-if knobs and Monte Carlo settings; None means: the cluster's, else the default."""

    days: float = 30.0
    runs: int = 200
    seed: int = 0
    weibull_shape: float = 1.0
    spare_hosts: int | None = None
    hot_standby_share: float | None = None
    checkpoint_write_gbyte_per_s: float | None = None
    checkpoint_mode: str | None = None
    interval_s: float | None = None
    recovery: str | None = None
    failures_per_unit_year: dict[str, float] = field(default_factory=dict)
    times: RecoveryTimes = RecoveryTimes()
    workers: int | None = None
    use_ray: bool = False
    ray_address: str | None = None
    what_if: bool = True
    netsim: bool = False
    #: The cluster's cooling topology (:func:`supernode.facility.cluster_cooling`); None:
    #: the inventory's default CDU layout.
    cooling: CoolingTopology | None = None


def _check(o: ReliabilityOptions) -> None:
    """Every number of ``o`` usable and in its documented range (:mod:`supernode.bounds`),
    before any model runs; InputError naming the field otherwise."""
    checks = [("days", o.days, 0, MAX_DAYS, "days", True),
              ("runs", o.runs, 1, MAX_RUNS, "runs", False),
              ("weibull_shape", o.weibull_shape, 0.1, 10, "", False),
              ("seed", o.seed, 0, bounds.MAX_INT64, "", False),
              ("interval_s", o.interval_s, 0, bounds.MAX_DURATION_S, "s", True),
              ("checkpoint_write_gbyte_per_s", o.checkpoint_write_gbyte_per_s,
               WRITE_LIMIT.low, WRITE_LIMIT.high, WRITE_LIMIT.unit, False),
              ("hot_standby_share", o.hot_standby_share, 0, 1, "", False),
              ("spare_hosts", o.spare_hosts, 0, None, "hosts", False)]
    for name, value, low, high, unit, low_open in checks:
        if value is not None:
            bounds.check_number(name, value, low, high, unit, low_open)
    bounds.check_workers(o.workers, "workers")


def _rates(cluster: Cluster, inventory: Inventory, spec: ReliabilitySpec,
           extra: dict[str, float]) -> dict[str, ComponentRate]:
    per_year = {**spec.failures_per_unit_year, **extra}
    rates = with_overrides(default_rates(), per_year, spec.repair_h)
    present = inventory.components()
    for name in {**per_year, **spec.repair_h}:
        if name not in present:
            raise InputError(f"reliability.failures_per_unit_year.{name}",
                             f"the topology of {cluster.name} has no {name} (scale-up "
                             f"{cluster.scale_up.kind}, {inventory.job_gpus:,} GPUs); failure "
                             f"types present: {', '.join(present)}")
    return rates


def _spares(cluster: Cluster, spec: ReliabilitySpec, o: ReliabilityOptions, job_hosts: int
            ) -> int:
    """Hot-spare hosts: the caller's, else the cluster's, else 2 % of the job's hosts."""
    spares = o.spare_hosts if o.spare_hosts is not None else spec.spare_hosts
    if spares is None:
        return math.ceil(DEFAULT_SPARE_SHARE * job_hosts)
    if spares > cluster.hosts:
        where = "spare_hosts" if o.spare_hosts is not None else "reliability.spare_hosts"
        raise InputError(where, f"a spare pool of {spares:,} hosts is larger than the "
                                f"cluster ({cluster.hosts:,} hosts)")
    return spares


def _standby(cluster: Cluster, o: ReliabilityOptions) -> HotStandby:
    """The hot-standby share (:mod:`supernode.reliability.standby`), or the caller's what-if."""
    measured = hot_standby(cluster, topology_report(cluster).to_dict())
    share = o.hot_standby_share
    if share is None:
        return measured
    if not (math.isfinite(share) and 0.0 <= share < 1.0):
        raise InputError("hot_standby_share", f"must be in [0, 1), got {share}")
    return replace(measured, share=share, source="option")


def _design(cluster: Cluster, spec: ReliabilitySpec, o: ReliabilityOptions, job_hosts: int,
            standby: float) -> Design:
    spares = _spares(cluster, spec, o, job_hosts)
    write = o.checkpoint_write_gbyte_per_s or spec.checkpoint_write_gbyte_per_s
    if write is not None and not (math.isfinite(write) and write > 0):
        raise InputError("checkpoint_write_gbyte_per_s", f"must be > 0, got {write}")
    default_bw = default_bandwidth_bytes_per_s(job_hosts)
    write_bps = write * GBYTE_PER_S if write else default_bw
    read = spec.checkpoint_read_gbyte_per_s
    mode = o.checkpoint_mode or spec.checkpoint_mode
    recovery = o.recovery or spec.recovery
    if mode not in ("sync", "async"):
        raise InputError("checkpoint_mode", f"sync or async, got {mode!r}")
    if recovery not in ("restart", "shrink"):
        raise InputError("recovery", f"restart or shrink, got {recovery!r}")
    idle = cluster.hosts - job_hosts
    return Design(spares + idle, standby, write_bps, read * GBYTE_PER_S if read else write_bps,
                  mode, recovery, spec.dual_homed_nics, o.interval_s)


def check_reliability_block(cluster: Cluster) -> None:
    """The cluster's ``reliability`` block against its topology, before any model runs:
    rate and repair overrides name components the cluster has, and the spare pool fits
    (InputError with the field path otherwise)."""
    spec = cluster.spec.reliability or ReliabilitySpec()
    _rates(cluster, cluster_inventory(cluster, None, spec.racks_per_cdu), spec, {})
    _spares(cluster, spec, ReliabilityOptions(), cluster.hosts)


def assess_reliability(cluster: Cluster, workload: WorkloadSpec, plan: ParallelPlan,
                       options: ReliabilityOptions = ReliabilityOptions(),
                       progress: Callable[[int], None] | None = None) -> ReliabilityResult:
    """Interruptions, blast radius, degraded modes, checkpoints, recovery and goodput."""
    result, what_ifs = assess_then_what_ifs(cluster, workload, plan, options, progress)
    if options.what_if:
        result.what_if = what_ifs()
    return result


def assess_then_what_ifs(cluster: Cluster, workload: WorkloadSpec, plan: ParallelPlan,
                         options: ReliabilityOptions = ReliabilityOptions(),
                         progress: Callable[[int], None] | None = None
                         ) -> tuple[ReliabilityResult, Callable[[], list[WhatIf]]]:
    """:func:`assess_reliability` without its what-ifs (``what_if`` empty, whatever
    ``options.what_if`` says), and the function that computes them from the same
    scenario and Monte Carlo rows: a caller comparing several results (the design
    review's two recovery policies) pays for the what-ifs of the one it keeps only."""
    _check(options)
    system = system_from_cluster(cluster, plan.precision)
    gpus = plan.tp * plan.pp * plan.dp * plan.cp
    if gpus > cluster.accelerators:
        raise InputError("plan", f"the plan spans {gpus:,} GPUs; {cluster.name} has "
                                 f"{cluster.accelerators:,}")
    system = replace(system, gpus=gpus)
    nominal = estimate_plan(workload, plan, system)
    job = Job(workload, plan, system, nominal)
    spec = cluster.spec.reliability or ReliabilitySpec()
    inventory = cluster_inventory(cluster, gpus, spec.racks_per_cdu, options.cooling)
    rates = _rates(cluster, inventory, spec, options.failures_per_unit_year)
    standby = _standby(cluster, options)
    design = _design(cluster, spec, options, inventory.hosts, standby.share)
    context: _Context = (cluster, inventory, rates, job)
    pcie, size = pcie_bandwidth_bytes_per_s(cluster), checkpoint_bytes(workload, plan.precision)
    speeds = None
    if options.netsim:
        from supernode.reliability.degraded import netsim_speeds
        from supernode.reliability.domains import failure_modes

        speeds = netsim_speeds(cluster, job, failure_modes(cluster, inventory, rates))
    extras: _Extras = (options.times, options.days * DAY_S, options.seed, options.weibull_shape,
                       pcie, size, speeds)
    main = _scenario(context, design, extras)
    rows = run_monte_carlo(main.spec, options.runs, options.workers, options.use_ray,
                           options.ray_address, progress)
    result = ReliabilityResult(cluster=cluster.name, workload=workload.name, job=job,
                               inventory=inventory, rates=rates, scenario=main,
                               times=options.times, options=options,
                               monte_carlo=mc_summary(main, rows), standby=standby)
    return result, partial(_what_ifs, context, extras, main, rows)


def _scenario(context: _Context, design: Design, extras: _Extras) -> Scenario:
    cluster, inventory, rates, job = context
    return build_scenario(cluster, inventory, rates, job, design, *extras)


def _what_ifs(context: _Context, extras: _Extras, main: Scenario, rows: np.ndarray
              ) -> list[WhatIf]:
    """Goodput with one design knob changed (analytic, and Monte Carlo on common draws)."""
    d = main.design
    variants: list[tuple[str, float, Design, float]] = [
        ("spare hosts", d.spare_hosts, replace(d, spare_hosts=0), 0),
        ("spare hosts", d.spare_hosts, replace(d, spare_hosts=max(4, d.spare_hosts * 4)),
         max(4, d.spare_hosts * 4))]
    for share in (0.10, 0.20):
        if abs(share - d.hot_standby_share) > 1e-9:
            variants.append(("hot-standby share", d.hot_standby_share,
                             replace(d, hot_standby_share=share), share))
    for factor in (0.5, 2.0):
        variants.append(("checkpoint write GB/s", d.write_bytes_per_s / GBYTE_PER_S,
                         replace(d, write_bytes_per_s=d.write_bytes_per_s * factor,
                                 read_bytes_per_s=d.read_bytes_per_s * factor,
                                 interval_s=None), d.write_bytes_per_s * factor / GBYTE_PER_S))
    runs = min(WHAT_IF_RUNS, rows.shape[0])
    column = len(METRICS) + list(main.spec.intervals_s).index(main.interval_s)
    base, everything = rows[:runs, column], float(rows[:, column].mean())
    out = []
    for knob, current, design, value in variants:
        s = _scenario(context, design, extras)
        mc = run_monte_carlo(s.spec, runs, workers=1)
        col = mc[:, len(METRICS) + list(s.spec.intervals_s).index(s.interval_s)]
        # the paired change on the first runs, added to the mean of every run: a what-if
        # reads against the headline goodput (same runs), not a mean of fewer runs
        delta = float((col - base).mean())
        out.append(WhatIf(knob, float(current), float(value), s.analytic_goodput,
                          everything + delta, delta, s.interval_s))
    return out

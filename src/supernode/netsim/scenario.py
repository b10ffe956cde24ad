"""Run a simulation end to end: cluster -> network (degraded) -> DAG -> results.

Links run at line rate; each collective's flows carry their schedule's protocol
efficiency (:mod:`supernode.netsim.collectives`).

:func:`simulate_jobs` runs one training iteration of one or more jobs sharing the fabric;
:func:`simulate_traffic` runs a traffic file. Both return a :class:`SimResult`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from supernode.collectives import fabric_from_cluster
from supernode.collectives.efficiency import ideal_tables, load_efficiency_tables
from supernode.errors import InputError
from supernode.netsim.build import network_from_cluster
from supernode.netsim.engine import Environment
from supernode.netsim.failures import apply_failures
from supernode.netsim.groups import replica_sets
from supernode.netsim.iteration import IterationOptions, JobRun, build_iteration
from supernode.netsim.jobs import prepare_job
from supernode.netsim.limits import (
    check_flows,
    check_passes,
    check_simulated_size,
    job_flows,
    job_passes,
)
from supernode.netsim.network import Network
from supernode.netsim.results import RunTables, tables
from supernode.netsim.routing import Router, RoutingConfig
from supernode.netsim.traffic import TrafficFile, build_traffic, check_traffic_size
from supernode.spec.plan import ParallelPlan
from supernode.spec.resolved import Cluster
from supernode.spec.workload import WorkloadSpec

Progress = Callable[[float, int, int], None]
#: Largest ECMP hash seed (the flow keys are 64-bit unsigned; kept within int64).
MAX_SEED = 2**63 - 1


@dataclass(frozen=True)
class SimOptions:
    """Knobs of a run: routing, seed, aggregation, decomposition, link efficiency."""

    seed: int = 0
    #: Fabric routing policy; None: the cluster file's ``scale_out.routing``
    #: (:func:`with_fabric_routing`), so the simulator routes as the fabric really runs.
    routing: str | None = None
    scale_up_routing: str = "spray"
    rail_aligned: bool = True
    aggregate: bool = True
    mode: str = "pipelined"
    efficiency: bool = True
    top: int = 20
    dp_launches: int = 8
    bins: int = 0

    def __post_init__(self) -> None:
        if isinstance(self.seed, bool) or not isinstance(self.seed, int | np.integer) \
                or not 0 <= self.seed <= MAX_SEED:
            raise InputError("seed", f"must be an integer in [0, {MAX_SEED}], got {self.seed!r}")
        if isinstance(self.top, bool) or not isinstance(self.top, int | np.integer) \
                or self.top < 1:
            raise InputError("top", f"must be an integer >= 1, got {self.top!r}")

    def routing_config(self) -> RoutingConfig:
        """The router's configuration (routing None: ECMP, for a network without a
        cluster; runs resolve it first with :func:`with_fabric_routing`)."""
        return RoutingConfig(self.routing or "ecmp", self.scale_up_routing, self.rail_aligned,
                             self.seed)


def with_fabric_routing(options: SimOptions, cluster: Cluster) -> SimOptions:
    """``options`` with the fabric's own routing where none is given (``--routing``
    overrides it): the cluster file's ``scale_out.routing``, else its fabric's default."""
    if options.routing is not None:
        return options
    fabric = cluster.scale_out.routing if cluster.scale_out is not None else "ecmp"
    return replace(options, routing=fabric)


@dataclass(frozen=True)
class JobInput:
    """A job to simulate: name, workload, plan and rank -> accelerator array."""

    name: str
    workload: WorkloadSpec
    plan: ParallelPlan
    accelerators: np.ndarray


@dataclass
class SimResult:
    """A run's results: per-job step times, tables, and what was simulated."""

    jobs: list[dict[str, Any]]
    tables: RunTables
    failures: list[str]
    options: SimOptions
    wall_time_s: float
    notes: list[str] = field(default_factory=list)

    @property
    def step_time_s(self) -> float:
        """Slowest job's step time (traffic runs: the makespan), seconds."""
        return max((j["step_time_s"] for j in self.jobs), default=self.tables.duration_s)

    @property
    def estimate_step_time_s(self) -> float | None:
        """The analytic estimate of the slowest job (None for traffic runs)."""
        if not self.jobs:
            return None
        worst = max(self.jobs, key=lambda j: j["step_time_s"])
        return worst["estimate_step_time_s"]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict with stable keys."""
        t = self.tables
        return {
            "step_time_s": self.step_time_s,
            "estimate_step_time_s": self.estimate_step_time_s,
            "jobs": self.jobs,
            "hot_links": t.hot_links,
            "hot_link_counts": t.hot_counts,
            "link_utilization": t.link_utilization,
            "collectives": t.collectives,
            "events": t.events,
            "flow_classes": t.classes,
            "max_min_solves": t.solves,
            "wall_time_s": self.wall_time_s,
            "simulated_time_s": t.duration_s,
            "failures": self.failures,
            "options": {"seed": self.options.seed, "routing": self.options.routing,
                        "scale_up_routing": self.options.scale_up_routing,
                        "rail_aligned": self.options.rail_aligned,
                        "aggregate": self.options.aggregate, "mode": self.options.mode,
                        "efficiency": self.options.efficiency},
            "notes": self.notes,
        }


def prepare_network(cluster: Cluster, failures: list[str] | tuple[str, ...],
                    efficiency: bool = True) -> tuple[Network, list[str]]:
    """The cluster's network at line rate, degraded by failures. Protocol efficiency is
    not a property of the links: each collective's flows carry their schedule's
    (:func:`run_tables`)."""
    check_simulated_size(cluster.accelerators)
    net = network_from_cluster(cluster)
    net, parsed = apply_failures(net, list(failures))
    return net, [f.spec for f in parsed]


def run_tables(efficiency: bool):
    """Efficiency tables of a run: the calibrated ones, or line rate with no protocol
    latency (``efficiency=False``)."""
    tables = load_efficiency_tables()
    return tables if efficiency else ideal_tables(tables)


def simulate_jobs(cluster: Cluster, jobs: list[JobInput], *, failures: tuple[str, ...] = (),
                  options: SimOptions = SimOptions(), progress: Progress | None = None
                  ) -> SimResult:
    """Simulate one training iteration of every job at once on ``cluster``."""
    start = time.perf_counter()
    options = with_fabric_routing(options, cluster)
    run_efficiency = run_tables(options.efficiency)
    models = [prepare_job(job.name, job.workload, job.plan, job.accelerators, cluster,
                          tables=run_efficiency) for job in jobs]
    check_flows(sum(job_flows(m.calls, int(m.accelerators.size)) for m in models),
                "the iteration's expert parallelism")  # before the network is built
    for m in models:
        sets = len(replica_sets(m, options.aggregate))
        check_passes(job_passes(m.plan.pp, m.vpp, m.microbatches, sets), m.name)
    net, applied = prepare_network(cluster, failures, options.efficiency)
    env = Environment(net, Router(net, options.routing_config()), progress=progress)
    runs: list[JobRun] = []
    iteration = IterationOptions(options.aggregate, options.mode, options.dp_launches)
    for model in models:
        runs.append(build_iteration(env, model, net, iteration))
    duration = env.run()
    result_tables = tables(env, net, duration, options.top, options.bins)
    out = []
    notes: list[str] = []
    for run in runs:
        est = run.job.estimate
        step = run.step_time_s()
        out.append({"name": run.job.name, "step_time_s": step,
                    "estimate_step_time_s": est.step_time_s,
                    "slowdown_vs_estimate": step / est.step_time_s,
                    "gpus": int(run.job.accelerators.size),
                    "plan": {k: v for k, v in run.job.plan.model_dump().items()
                             if v is not None},
                    "estimate_breakdown_s": est.breakdown_s})
        notes += [f"{run.job.name}: {n}" for n in est.notes]
    return SimResult(out, result_tables, applied, options, time.perf_counter() - start,
                     notes + env.notes)


def simulate_traffic(cluster: Cluster, doc: TrafficFile, *, failures: tuple[str, ...] = (),
                     options: SimOptions = SimOptions(), progress: Progress | None = None
                     ) -> SimResult:
    """Simulate the collectives of a traffic file on ``cluster``."""
    start = time.perf_counter()
    options = with_fabric_routing(options, cluster)
    check_traffic_size(doc, cluster.accelerators)  # before the network is built
    net, applied = prepare_network(cluster, failures, options.efficiency)
    env = Environment(net, Router(net, options.routing_config()), progress=progress)
    fabric, _ = fabric_from_cluster(cluster)
    build_traffic(env, net, doc, options.mode, options.aggregate, fabric,
                  run_tables(options.efficiency))
    duration = env.run()
    result_tables = tables(env, net, duration, options.top, options.bins)
    return SimResult([], result_tables, applied, options, time.perf_counter() - start)

"""Compare placement policies on one trace and one cluster: the library entry point.

``schedule(cluster, trace, policies, seed)`` draws the job shapes once (the same for every
policy), runs one :class:`~supernode.scheduler.engine.Simulation` per policy and returns a
:class:`ScheduleResult` whose ``to_dict()`` is the ``--json`` of ``supernode schedule``
(and the scheduling section of a design report); :func:`supernode.scheduler.plots.
plot_schedule` draws it. Every policy gets its own generator seeded from ``seed``, so
results do not depend on which policies run or in which order.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from supernode.errors import InputError
from supernode.scheduler.engine import EngineOptions, JobTable, Simulation
from supernode.scheduler.metrics import job_slowdowns, policy_metrics, timeline
from supernode.scheduler.policies import POLICIES
from supernode.scheduler.shapes import draw_shapes, job_models
from supernode.scheduler.slowdown import SlowdownModel
from supernode.scheduler.state import Occupancy
from supernode.scheduler.trace import Trace
from supernode.spec.resolved import Cluster
from supernode.topology.hierarchy import Hierarchy, build_hierarchy

#: Policies compared when none is named.
DEFAULT_POLICIES = ("random", "first-fit", "node-pack", "best-fit", "slurm-block", "preempt")


@dataclass
class ScheduleResult:
    """Per-policy metrics, the cluster and trace they ran on, and data for the plots."""

    cluster: dict
    trace: dict
    seed: int
    options: dict
    shapes: dict
    policies: list[dict]
    timelines: dict[str, dict] = field(default_factory=dict)
    #: Per policy, the slowdown of every multi-GPU job (for the plots).
    slowdowns: dict[str, np.ndarray] = field(default_factory=dict)
    skipped_rows: list[dict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        """JSON-ready dict with stable keys (``docs/scheduler.md``)."""
        return {"cluster": self.cluster, "trace": self.trace, "seed": self.seed,
                "options": self.options, "shapes": self.shapes, "policies": self.policies,
                "timelines": self.timelines, "skipped_rows": self.skipped_rows,
                "notes": self.notes}

    def policy(self, name: str) -> dict:
        """The metrics of policy ``name``."""
        return next(p for p in self.policies if p["policy"] == name)


def policy_seed(seed: int, name: str) -> int:
    """The generator seed of one policy's run: ``seed`` mixed with the policy's name."""
    return (seed * 1_000_003 + zlib.crc32(name.encode())) % 2**32


def job_table(trace: Trace, cluster: Cluster, seed: int, rule: str = "memory-tp"
              ) -> JobTable:
    """The trace's jobs with shapes drawn by :func:`~supernode.scheduler.shapes.draw_shapes`
    (``rule``: how TP is chosen)."""
    shapes = draw_shapes(trace.gpus, cluster.scale_up.size, cluster.accelerator.memory_bytes,
                         seed, model=trace.model, tp=trace.tp, rule=rule)
    return JobTable(trace.submit_s, trace.duration_s, trace.gpus, shapes.tp, shapes.model,
                    trace.priority)


def run_policy(cluster: Cluster, hierarchy: Hierarchy, jobs: JobTable, name: str,
               options: EngineOptions, seed: int, slowdowns: SlowdownModel | None = None,
               progress: Callable[[str, int], None] | None = None) -> tuple:
    """One policy's (metrics, timeline, multi-GPU slowdowns, step-time cache keys)."""
    slowdowns = slowdowns or SlowdownModel(cluster, hierarchy, options.pricing)
    sim = Simulation(jobs, Occupancy(hierarchy), POLICIES.create(name), slowdowns, options,
                     policy_seed(seed, name))
    record = sim.run(None if progress is None else lambda n: progress(name, n))
    return (policy_metrics(record, jobs, cluster.accelerators),
            timeline(record, cluster.accelerators),
            job_slowdowns(record, len(jobs))[jobs.gpus > 1], set(slowdowns.step_keys()))


def schedule(cluster: Cluster, trace: Trace, policies: Sequence[str] = DEFAULT_POLICIES,
             seed: int = 0, options: EngineOptions | None = None,
             progress: Callable[[str, int], None] | None = None,
             workers: int = 1) -> ScheduleResult:
    """Run every policy in ``policies`` over ``trace`` on ``cluster`` (see module doc).

    ``workers`` > 1 runs the policies in that many processes (same results: each policy
    has its own seed and the step-time model is deterministic); ``progress(policy,
    events)`` is then called once per finished policy.
    """
    options = options or EngineOptions()
    if len(trace) == 0:
        raise InputError("--trace", "the trace has no jobs to schedule")
    names = list(dict.fromkeys(policies))
    for n in names:
        POLICIES.create(n)
    hierarchy = build_hierarchy(cluster)
    _check_cluster(cluster, hierarchy, trace)
    SlowdownModel.check_pricing(options.pricing)
    jobs = job_table(trace, cluster, seed, options.shapes)
    if workers > 1 and len(names) > 1:
        outcomes = _in_processes(cluster, hierarchy, jobs, names, options, seed, workers,
                                 progress)
    else:
        shared = SlowdownModel(cluster, hierarchy, options.pricing)
        outcomes = [run_policy(cluster, hierarchy, jobs, n, options, seed, shared, progress)
                    for n in names]
    results = [o[0] for o in outcomes]
    timelines = {n: o[1] for n, o in zip(names, outcomes, strict=True)}
    slows = {n: o[2] for n, o in zip(names, outcomes, strict=True)}
    estimates = len(set().union(*(o[3] for o in outcomes)))
    return ScheduleResult(
        cluster=_cluster_summary(cluster, hierarchy), trace=trace.summary(), seed=seed,
        options={"backfill_depth": options.backfill_depth, "stretch": options.stretch,
                 "preempt_after_s": options.preempt_after_s,
                 "checkpoint_interval_s": options.checkpoint_interval_s,
                 "restart_s": options.restart_s, "shapes": options.shapes,
                 "pricing": options.pricing},
        shapes=_shape_summary(jobs, estimates), policies=results, timelines=timelines,
        slowdowns=slows, skipped_rows=[e.to_dict() for e in trace.skipped])


def _check_cluster(cluster: Cluster, hierarchy: Hierarchy, trace: Trace) -> None:
    if hierarchy.domains > 1 and cluster.scale_out is None:
        raise InputError("scale_out", "a cluster of several supernodes needs a scale-out "
                                      "fabric to schedule jobs across them")
    if int(trace.gpus.max()) > cluster.accelerators:
        raise InputError("--trace", f"jobs of {int(trace.gpus.max()):,} GPUs do not fit "
                                    f"{cluster.accelerators:,} GPUs")


def _cluster_summary(cluster: Cluster, h: Hierarchy) -> dict:
    return {"name": cluster.name, "gpus": cluster.accelerators, "hosts": h.hosts,
            "supernodes": h.domains, "supernode_gpus": h.domain_size, "port_groups": h.groups,
            "pods": h.pods, "fabric_tiers": h.fabric_tiers,
            "oversubscription": list(h.oversubscription)}


def _in_processes(cluster, hierarchy, jobs, names, options, seed, workers, progress):
    """Each policy in its own process of a pool of ``workers``
    (:func:`supernode.parallel.run_tasks`); results in ``names`` order."""
    from supernode.parallel import run_tasks

    def done(index: int) -> None:
        if progress is not None:
            progress(names[index], 2 * len(jobs))

    return run_tasks(run_policy, [(n, options, seed) for n in names], workers,
                     shared=(cluster, hierarchy, jobs), on_done=done)


def _shape_summary(jobs: JobTable, estimates: int) -> dict:
    models = job_models()
    names, counts = np.unique(jobs.model, return_counts=True)
    tps, tp_counts = np.unique(jobs.tp, return_counts=True)
    return {"models": {models[int(m)].name: int(c) for m, c in zip(names, counts, strict=True)},
            "tp": {str(int(t)): int(c) for t, c in zip(tps, tp_counts, strict=True)},
            "step_times_estimated": estimates}

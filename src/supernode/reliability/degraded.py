"""Degraded-mode step times, from the estimate model (and the flow simulator on request).

A degrading failure runs the same plan on a weaker fabric: the scale-up tier's bandwidth
times ``1 - loss`` (a lost plane or link; the job's collectives run at the slowest domain's
pace), or the scale-out tiers' oversubscription times ``1 / (1 - loss)`` (a lost uplink or
spine). :func:`supernode.estimate.model.estimate_plan` prices the step on that fabric. An
isolated failure (recovery ``shrink``) drops data-parallel replicas (whole expert-parallel
groups: an EP group joining several replicas goes with any of its GPUs): the estimate of the
plan with ``dp - k`` replicas at the same per-replica batch gives the throughput left.

With ``netsim=True`` the scale-out rows are replayed by the flow simulator
(:func:`supernode.netsim.scenario.simulate_jobs`) with the row's ``--fail`` spec, where
ECMP collisions around the hole matter.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

from supernode.collectives.fabric import Fabric
from supernode.errors import InputError
from supernode.estimate.model import Estimate, estimate_plan
from supernode.estimate.system import SystemModel
from supernode.reliability.domains import DEGRADE, INTERRUPT, FailureMode, with_speed
from supernode.spec.plan import ParallelPlan
from supernode.spec.workload import WorkloadSpec


@dataclass(frozen=True)
class Job:
    """The job under study: workload, plan, machine view and its nominal estimate."""

    workload: WorkloadSpec
    plan: ParallelPlan
    system: SystemModel
    nominal: Estimate

    @property
    def replica_gpus(self) -> int:
        """GPUs of one data-parallel replica (``tp * pp * cp``)."""
        return self.plan.tp * self.plan.pp * self.plan.cp


def degraded_system(system: SystemModel, tier: str, loss: float) -> SystemModel:
    """``system`` with ``tier`` (``scale_up``/``scale_out``) weakened by ``loss`` (share)."""
    keep = max(1e-6, 1.0 - loss)
    tiers = []
    for t in system.fabric.tiers:
        if tier == "scale_up" and t.name == "scale_up":
            t = dataclasses.replace(t, bandwidth_bytes_per_s=t.bandwidth_bytes_per_s * keep)
        elif tier == "scale_out" and t.name.startswith("scale_out"):
            t = dataclasses.replace(t, oversubscription=t.oversubscription / keep)
        tiers.append(t)
    return dataclasses.replace(system, fabric=Fabric(tuple(tiers)))


def degraded_step_s(job: Job, tier: str, loss: float) -> float:
    """Step time (s) of the job's plan with ``tier`` weakened by ``loss``."""
    if loss <= 0:
        return job.nominal.step_time_s
    fixed = job.plan.with_chosen(job.nominal.chosen)
    return estimate_plan(job.workload, fixed, degraded_system(job.system, tier, loss)
                         ).step_time_s


def shrink_speed(job: Job, replicas_lost: int) -> float:
    """Throughput left after dropping ``replicas_lost`` DP replicas (0 when none remain)."""
    dp = job.plan.dp
    left = dp - replicas_lost
    if left < 1:
        return 0.0
    per_replica = job.plan.global_batch_sequences // dp
    plan = job.plan.model_copy(update={"dp": left, "global_batch_sequences": per_replica * left,
                                       **job.nominal.chosen})
    system = dataclasses.replace(job.system, gpus=job.replica_gpus * left)
    try:
        est = estimate_plan(job.workload, plan, system)
    except InputError:
        return left / dp
    return est.tokens_per_s / job.nominal.tokens_per_s


def expert_joined_replicas(plan: ParallelPlan) -> int:
    """DP replicas one expert-parallel group joins: a stage's ``tp * cp * dp`` ranks
    split as ``etp x ep x edp``, so an EP block of ``etp * ep`` consecutive ranks spans
    ``lcm(tp cp, etp ep) / (tp cp)`` replicas of ``tp * cp`` (1 without EP). Losing one
    GPU breaks the all-to-all of every replica its block joins."""
    group = plan.tp * plan.cp
    block = plan.ep * (plan.etp or plan.tp)
    return math.lcm(group, block) // group


def replicas_hit(job: Job, gpus_out: int) -> int:
    """DP replicas a loss of ``gpus_out`` aligned GPUs takes out: one per model-parallel
    stage group it contains (at least one), rounded up to whole expert-joined sets
    (:func:`expert_joined_replicas`), so the job left is a legal plan."""
    group = job.plan.tp * job.plan.cp
    joined = expert_joined_replicas(job.plan)
    touched = max(1, math.ceil(gpus_out / max(1, group)))
    return min(job.plan.dp, math.ceil(touched / joined) * joined)


def price_modes(job: Job, modes: list[FailureMode], netsim: dict[str, float] | None = None
                ) -> list[FailureMode]:
    """Every mode with its degraded speed: estimate (or netsim step ratio where given)."""
    out, cache = [], {}
    for mode in modes:
        # a degrading mode, or an interruption whose restart runs degraded (a lost plane)
        if mode.effect not in (DEGRADE, INTERRUPT) or mode.tier is None:
            out.append(mode)
            continue
        key = (mode.tier, round(mode.bandwidth_loss, 9))
        if key not in cache:
            cache[key] = job.nominal.step_time_s / degraded_step_s(job, *key)
        note = None
        speed = cache[key]
        if netsim and mode.netsim_spec in netsim:
            speed, note = netsim[mode.netsim_spec], "speed from the flow simulator"
        out.append(with_speed(mode, speed, note))
    return out


def netsim_speeds(cluster, job: Job, modes: list[FailureMode]) -> dict[str, float]:
    """Flow-simulated speed (healthy step / degraded step) of each degrading mode's
    ``--fail`` spec on ``cluster`` (the job on its first GPUs, Megatron rank order)."""
    import numpy as np

    from supernode.netsim.scenario import JobInput, simulate_jobs

    specs = sorted({m.netsim_spec for m in modes if m.effect == DEGRADE and m.netsim_spec})
    if not specs:
        return {}
    fixed = job.plan.with_chosen(job.nominal.chosen)
    jobs = [JobInput("job", job.workload, fixed, np.arange(job.nominal.gpus))]
    healthy = simulate_jobs(cluster, jobs).jobs[0]["step_time_s"]
    return {s: healthy / simulate_jobs(cluster, jobs, failures=(s,)).jobs[0]["step_time_s"]
            for s in specs}

"""A training job prepared for simulation: plan, compute times, collectives, algorithms.

Everything that does not depend on the network comes from the analytic model, so the
simulation and the estimate differ only in how communication is timed: the estimate's
chosen knobs (micro-batch, recomputation, sequence parallelism, interleaving), the
per-micro-batch compute time on the busiest pipeline GPU
(:func:`supernode.estimate.compute.microbatch_compute`), the optimizer and fixed
per-step times (its breakdown), the collectives one GPU issues per step
(:func:`supernode.workload.traffic.traffic_per_step`), and for each collective the
algorithm the estimate's cost model picks for that group.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np

from supernode.collectives import Fabric, Tables, collective_time_s, load_efficiency_tables
from supernode.collectives.fabric import with_group_size
from supernode.errors import InputError
from supernode.estimate.calibration import Calibration, default_calibration
from supernode.estimate.comm import dispatch_ratio, group_fabric, group_stride
from supernode.estimate.compute import microbatch_compute
from supernode.estimate.model import Estimate, estimate_plan
from supernode.estimate.system import system_from_cluster
from supernode.spec.plan import ParallelPlan, PlanArrays, as_plan_arrays
from supernode.spec.resolved import Cluster
from supernode.spec.stack import tp_overlap_on
from supernode.spec.workload import WorkloadSpec
from supernode.workload.cp_exchange import hidden_shares
from supernode.workload.traffic import CollectiveCall, torch_cp, traffic_per_step


@dataclass(frozen=True)
class Call:
    """One kind of collective of a job (scalars): dim, op, bytes, calls per step, algo."""

    dim: str
    op: str
    message_bytes: float
    per_step: float
    group_size: int
    phase: str
    algorithm: str
    hidden: bool = False  # runs beside the attention core (the CP ring)


@dataclass(frozen=True)
class JobModel:
    """A job ready to be turned into a DAG (times in seconds, sizes in bytes)."""

    name: str
    plan: ParallelPlan
    accelerators: np.ndarray
    forward_s: float
    backward_s: float
    core_forward_s: float
    core_backward_s: float
    optimizer_s: float
    other_s: float
    microbatches: int
    calls: tuple[Call, ...]
    estimate: Estimate
    calibration: Calibration
    stage_scale: tuple[float, float, float] = (1.0, 1.0, 1.0)
    layers_per_gpu: float = 1.0
    fabric: Fabric | None = None
    tables: Tables | None = None
    #: shares of the forward and backward attention core the hidden CP exchange runs beside
    cp_hidden_shares: tuple[float, float] = (0.0, 0.0)

    def compute_scale(self, stage: int) -> float:
        """Compute of pipeline stage ``stage`` relative to the busiest (first, middle and
        last stages differ by their layer counts, embedding and output layer)."""
        first, middle, last = self.stage_scale
        if stage == self.plan.pp - 1:
            return last
        return first if stage == 0 else middle

    @property
    def vpp(self) -> int:
        """Model chunks per pipeline device."""
        return int(self.plan.vpp or 1)

    def rank(self, t, c, d, s) -> np.ndarray:
        """Rank of (tp t, cp c, dp d, stage s), Megatron order tp -> cp -> dp -> pp."""
        p = self.plan
        return np.asarray(t) + p.tp * (np.asarray(c) + p.cp * (np.asarray(d) + p.dp
                                                                * np.asarray(s)))

    def acc(self, ranks) -> np.ndarray:
        """Accelerator indices of ``ranks``."""
        return self.accelerators[np.asarray(ranks, dtype=np.int64)]


def _estimate_algorithm(call: CollectiveCall, a: PlanArrays, fabric: Fabric) -> str:
    """The algorithm the analytic model picks for ``call`` (scalar plan)."""
    size = int(call.group_size)
    if call.kind == "p2p":
        return "p2p"
    stride = int(group_stride(call.dim, a))
    sub = group_fabric(fabric, stride, size)
    if sub.tiers[-1].group_size < size:
        sub = Fabric((with_group_size(sub.tiers[-1], size),))
    _, name = collective_time_s(call.kind, float(call.message_bytes), size, sub)
    return str(name)


def _message_bytes(call: CollectiveCall, a: PlanArrays, fabric: Fabric) -> float:
    """The call's message as the estimate prices it: an expert dispatch carries the
    stack's dispatcher's bytes over the group (:func:`~supernode.estimate.comm.
    dispatch_ratio`)."""
    size = int(call.group_size)
    ratio = dispatch_ratio(call, group_fabric(fabric, int(group_stride(call.dim, a)), size),
                           size) if call.routing is not None else 1.0
    return float(call.message_bytes) * ratio


def prepare_job(name: str, workload: WorkloadSpec, plan: ParallelPlan, accelerators: np.ndarray,
                cluster: Cluster, cal: Calibration | None = None,
                tables: Tables | None = None) -> JobModel:
    """Resolve a plan with the analytic model and collect what the simulation needs.

    ``tables``: the efficiency tables the simulator's flows use (default: packaged).

    Raises :class:`InputError` when the plan does not fit the job's accelerators.
    """
    cal = cal or default_calibration()
    gpus = int(accelerators.size)
    system = dataclasses.replace(system_from_cluster(cluster, plan.precision), gpus=gpus)
    est = estimate_plan(workload, plan, system, cal)
    resolved = plan.with_chosen(est.chosen)
    # TP overlap only where the stack has it, as the estimate has it
    resolved = resolved.model_copy(update={"overlap_tp_comm": bool(tp_overlap_on(
        resolved.overlap_tp_comm, workload.software))})
    a = as_plan_arrays(resolved)
    comp = microbatch_compute(workload, a, system, cal)
    busiest = float(comp.total_s)
    first, middle, last = (float(comp.stage_s[k]) / busiest if busiest > 0 else 1.0
                           for k in ("first", "middle", "last"))
    scale = (first, middle, last)
    calls = []
    for call in traffic_per_step(workload, a):
        per_step = float(call.calls_per_step)
        if per_step <= 0 or int(call.group_size) <= 1:
            continue
        calls.append(Call(call.dim, call.kind, _message_bytes(call, a, system.fabric),
                          per_step, int(call.group_size), call.phase,
                          _estimate_algorithm(call, a, system.fabric), bool(call.hidden)))
    return JobModel(
        name=name, plan=resolved, accelerators=np.asarray(accelerators, dtype=np.int64),
        forward_s=float(comp.forward_s), backward_s=float(comp.backward_s + comp.recompute_s),
        core_forward_s=float(comp.attention_core_forward_s),
        core_backward_s=float(comp.attention_core_backward_s),
        optimizer_s=float(est.breakdown_s["optimizer"]), other_s=float(est.breakdown_s["other"]),
        microbatches=int(a.microbatches), calls=tuple(calls), estimate=est, calibration=cal,
        stage_scale=scale, layers_per_gpu=float(comp.layers),
        fabric=system.fabric, tables=tables or load_efficiency_tables(),
        cp_hidden_shares=_floats(hidden_shares(a, torch_cp(workload))))


def _floats(pair: tuple[Any, Any]) -> tuple[float, float]:
    return float(pair[0]), float(pair[1])


def check_job_size(plan: ParallelPlan, accelerators: int, job: str) -> None:
    """Refuse a plan whose ``tp*pp*dp*cp`` differs from the job's accelerator count."""
    total = plan.tp * plan.pp * plan.dp * plan.cp
    if total != accelerators:
        raise InputError("plan.dp", f"job {job!r}: tp*pp*dp*cp = {plan.tp}*{plan.pp}*{plan.dp}"
                         f"*{plan.cp} = {total} but it has {accelerators} accelerators")

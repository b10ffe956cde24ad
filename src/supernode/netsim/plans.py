"""The plan to simulate when none is given: the planner's best, else a simple default.

:func:`default_plan` asks ``supernode.planner`` for its best plan
(``plan_job(build_target(...))``: layout, knobs and rank order; a non-Megatron rank order
is honoured by renumbering the job's accelerators, :func:`reorder`); when the planner is
absent or finds nothing feasible it derives one: tensor parallelism as wide as the
scale-up domain allows (at most 8, dividing heads, KV heads and MLP widths), the fewest
pipeline stages (a power of two dividing the layers) whose estimate fits in memory, data
parallelism filling the GPUs, and ``global_batch_sequences`` (when not given) of 8
micro-batches per pipeline.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from supernode.errors import InputError
from supernode.estimate.model import estimate_plan
from supernode.estimate.system import system_from_cluster
from supernode.spec.plan import ParallelPlan, plan_from_data
from supernode.spec.resolve import Cluster
from supernode.spec.workload import WorkloadSpec

MEGATRON_ORDER = ("tp", "cp", "dp", "pp")


def planner_plan(workload: WorkloadSpec, cluster: Cluster, gpus: int,
                 global_batch: int | None) -> tuple[ParallelPlan, tuple[str, ...]] | None:
    """The planner's best plan and its rank order (innermost first), or None when the
    planner is absent, finds nothing feasible, or cannot answer."""
    try:
        from supernode.planner import build_target, plan_job
    except ImportError:
        return None
    try:
        target, _ = build_target(cluster.spec, workload, gpus=gpus, global_batch=global_batch)
        report = plan_job(target, top=1)
        if not report.feasible or not report.plans:
            return None
        best = report.plans[0]
        x = best.layout
        data = {"tp": x.tp, "pp": x.pp, "dp": x.dp, "cp": x.cp, "ep": x.ep,
                "etp": x.expert_tp, "rank_order": "-".join(x.order),
                "global_batch_sequences": target.global_batch_sequences}
        data.update({k: v for k, v in best.knobs.items() if k in ParallelPlan.model_fields})
        return plan_from_data(data), tuple(x.order)
    except (InputError, ValueError, TypeError, AttributeError):
        return None


def reorder(accelerators: np.ndarray, plan: ParallelPlan, order: tuple[str, ...]
            ) -> np.ndarray:
    """Accelerators indexed by Megatron rank for a job laid out in rank ``order``
    (innermost first): the simulator numbers ranks tp -> cp -> dp -> pp."""
    if tuple(order) == MEGATRON_ORDER:
        return accelerators
    sizes = {"tp": plan.tp, "cp": plan.cp, "dp": plan.dp, "pp": plan.pp}
    t, c, d, s = np.meshgrid(*(np.arange(sizes[k]) for k in MEGATRON_ORDER), indexing="ij")
    coords = {"tp": t, "cp": c, "dp": d, "pp": s}
    position, stride = np.zeros_like(t), 1
    for dim in order:
        position += coords[dim] * stride
        stride *= sizes[dim]
    megatron = t + plan.tp * (c + plan.cp * (d + plan.dp * s))
    out = np.empty_like(accelerators)
    out[megatron.ravel()] = accelerators[position.ravel()]
    return out


def _divides(w: WorkloadSpec, tp: int) -> bool:
    widths = [w.ffn_hidden] + ([w.expert_ffn_hidden] if w.moe else [])
    return w.heads % tp == 0 and w.n_kv_heads % tp == 0 and all(f % tp == 0 for f in widths)


def derived_plan(workload: WorkloadSpec, cluster: Cluster, gpus: int,
                 global_batch: int | None) -> ParallelPlan:
    """The simple default plan of the module docstring (raises if nothing fits the GPUs)."""
    limit = min(8, cluster.scale_up.size, gpus)
    tp = max(t for t in range(1, limit + 1) if _divides(workload, t) and gpus % t == 0)
    system = dataclasses.replace(system_from_cluster(cluster), gpus=gpus)
    fallback = None
    pp = 1
    while pp <= workload.layers and gpus % (tp * pp) == 0:
        dp = gpus // (tp * pp)
        gb = global_batch or dp * 8
        if gb % dp == 0:
            plan = plan_from_data({"tp": tp, "pp": pp, "dp": dp,
                                   "global_batch_sequences": gb})
            fallback = fallback or plan
            if estimate_plan(workload, plan, system).fits_in_memory:
                return plan
        pp *= 2
    if fallback is None:
        raise InputError("plan", f"no default plan divides {gpus} GPUs with tp={tp}; give "
                                 "--tp/--pp/--dp or --plan")
    return fallback


def default_plan(workload: WorkloadSpec, cluster: Cluster, gpus: int,
                 global_batch: int | None) -> tuple[ParallelPlan, tuple[str, ...], str]:
    """The plan to use without ``--plan``, its rank order, and a note saying where it
    came from."""
    found = planner_plan(workload, cluster, gpus, global_batch)
    if found is not None:
        plan, order = found
        return plan, order, (f"no plan given: simulated the planner's best plan (tp={plan.tp}"
                             f", pp={plan.pp}, dp={plan.dp}, cp={plan.cp}, ep={plan.ep}, "
                             f"rank order {'-'.join(order)}, global_batch_sequences="
                             f"{plan.global_batch_sequences})")
    plan = derived_plan(workload, cluster, gpus, global_batch)
    return plan, MEGATRON_ORDER, (
        f"no plan given and no planner answer: simulated a default plan (tp={plan.tp}, "
        f"pp={plan.pp}, dp={plan.dp}, global_batch_sequences={plan.global_batch_sequences})")

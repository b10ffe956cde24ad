"""The plan to use when none is given: the planner's best, else a simple default.

:func:`default_plan` asks the planner for its best plan (``plan_job(build_target(...))``:
layout, knobs and rank order); when it finds nothing feasible it derives one: tensor
parallelism as wide as the scale-up domain allows (at most 8, dividing heads, KV heads
and MLP widths), the fewest pipeline stages (a power of two dividing the layers) whose
estimate fits in memory, data parallelism filling the GPUs, and
``global_batch_sequences`` (when not given) of 8 micro-batches per pipeline. ``simulate``
and ``reliability`` use it.
"""

from __future__ import annotations

import dataclasses

from supernode.errors import InputError
from supernode.estimate.model import estimate_plan
from supernode.estimate.system import system_from_cluster
from supernode.netsim.plans import MEGATRON_ORDER
from supernode.planner.build import build_target
from supernode.planner.report import plan_job
from supernode.spec.plan import ParallelPlan, plan_from_data
from supernode.spec.resolved import Cluster
from supernode.spec.workload import WorkloadSpec


def planner_plan(workload: WorkloadSpec, cluster: Cluster, gpus: int,
                 global_batch: int | None) -> tuple[ParallelPlan, tuple[str, ...]] | None:
    """The planner's best plan and its rank order (innermost first), or None when the
    planner finds nothing feasible or cannot answer."""
    try:
        target, _ = build_target(cluster.spec, workload, gpus=gpus, global_batch=global_batch)
        report = plan_job(target, top=1)
        if not report.feasible or not report.plans:
            return None
        best = report.plans[0]
        return best.as_plan(target.global_batch_sequences), tuple(best.layout.order)
    except (InputError, ValueError, TypeError, AttributeError):
        return None


def _divides(w: WorkloadSpec, tp: int) -> bool:
    widths = [w.ffn_hidden] + ([w.expert_ffn_hidden] if w.moe else [])
    return w.n_heads % tp == 0 and w.n_kv_heads % tp == 0 and all(f % tp == 0 for f in widths)


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

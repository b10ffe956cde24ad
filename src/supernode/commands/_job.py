"""The plan of one job from the plan options, the same on every command that prices a
job on a whole cluster without searching (``reliability``, ``facility``).

:func:`job_plan`: the ``--plan`` file and inline plan fields (a field given fixes the
knob; the file's values stand otherwise; the global batch defaults as everywhere,
:func:`supernode.workload.batch.with_default_batch`), or, with no plan field but the
global batch, the planner's best plan (:func:`supernode.planner.default_plan.default_plan`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from supernode.spec.plan import ParallelPlan, plan_from_data
from supernode.spec.planfile import plan_data
from supernode.spec.resolved import Cluster
from supernode.spec.workload import WorkloadSpec


def job_plan(cluster: Cluster, workload: WorkloadSpec, plan_file: Path | None,
             flags: dict[str, Any], gpus: int | None = None
             ) -> tuple[ParallelPlan, str | None]:
    """The plan from the file and flags (the plan fields given), or the planner's best
    on ``gpus`` (default: every GPU of the cluster) when none is given; with a note
    saying so (None for a given plan)."""
    job = gpus or cluster.accelerators
    if plan_file is None and set(flags) <= {"global_batch_sequences"}:
        from supernode.planner.default_plan import default_plan

        plan, _, _ = default_plan(workload, cluster, job,
                                  flags.get("global_batch_sequences"))
        return plan, (f"no plan given: the planner's best (tp={plan.tp}, pp={plan.pp}, "
                      f"dp={plan.dp}, cp={plan.cp}, global batch "
                      f"{plan.global_batch_sequences:,})")
    from supernode.workload.batch import with_default_batch

    data = with_default_batch(plan_data(plan_file, flags, job), workload)
    return plan_from_data(data, source=str(plan_file) if plan_file else "plan"), None

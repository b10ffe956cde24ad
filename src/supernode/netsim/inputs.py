"""Turn command-line inputs (cluster, workload, plan, placement) into :class:`JobInput` s."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from supernode.errors import InputError
from supernode.netsim.jobs import check_job_size
from supernode.netsim.placement import JobPlacement, default_placement, load_placement
from supernode.netsim.plans import reorder
from supernode.netsim.scenario import JobInput
from supernode.spec.plan import ParallelPlan, plan_from_data
from supernode.spec.planfile import fill_dp, merged_plan, plan_document
from supernode.spec.resolved import Cluster
from supernode.spec.workload import WorkloadSpec
from supernode.workload.batch import with_default_batch
from supernode.workload.presets import load_workload

#: Picks the plan of a job given none: (workload, cluster, gpus, global batch or None) ->
#: (plan, rank order innermost first, a note saying where it came from).
PlanChooser = Callable[[WorkloadSpec, Cluster, int, int | None],
                       tuple[ParallelPlan, tuple[str, ...], str]]


def job_inputs(cluster: Cluster, workload: str | None, plan_file: Path | None,
               flags: dict[str, Any], placement: Path | None, default_plan: PlanChooser,
               gpus: int | None = None) -> tuple[list[JobInput], list[str]]:
    """Jobs to simulate and notes about defaults taken.

    The CLI plan (file, overridden by inline flags) applies to every job without its own
    plan in the placement file; with no plan at all, ``default_plan`` picks one (the
    ``simulate`` command passes :func:`supernode.planner.default_plan.default_plan`).
    ``gpus``: the one job's size without a placement file (default: every accelerator).
    """
    placed: list[JobPlacement] = (load_placement(placement, cluster.accelerators)
                                  if placement is not None
                                  else default_placement(gpus or cluster.accelerators))
    base = merged_plan(plan_file, flags)
    jobs, notes = [], []
    for job in placed:
        name = job.workload or workload
        if name is None:
            raise InputError("workload", f"job {job.name!r} has no workload: give --workload "
                                         "or a workload in the placement file")
        spec = load_workload(name)
        gpus = int(job.accelerators.size)
        data = plan_document(job.plan) if job.plan is not None else dict(base)
        accelerators = job.accelerators
        if not data or set(data) <= {"global_batch_sequences"}:
            plan, order, note = default_plan(spec, cluster, gpus,
                                             data.get("global_batch_sequences"))
            accelerators = reorder(accelerators, plan, order)
            notes.append(f"{job.name}: {note}")
        else:
            data = with_default_batch(fill_dp(data, gpus, f"job {job.name!r}"), spec)
            plan = plan_from_data(data, source=str(plan_file) if plan_file else "plan")
            accelerators = reorder(accelerators, plan, plan.order)  # --rank-order
        check_job_size(plan, gpus, job.name)
        jobs.append(JobInput(job.name, spec, plan, accelerators))
    return jobs, notes

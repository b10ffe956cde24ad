"""Turn command-line inputs (cluster, workload, plan, placement) into :class:`JobInput` s."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from supernode.errors import InputError
from supernode.netsim.jobs import check_job_size
from supernode.netsim.placement import JobPlacement, default_placement, load_placement
from supernode.netsim.plans import default_plan, reorder
from supernode.netsim.scenario import JobInput
from supernode.spec.loader import read_document
from supernode.spec.plan import plan_from_data
from supernode.spec.resolve import Cluster
from supernode.workload.presets import load_workload


def plan_document(plan: dict[str, Any] | str | Path | None) -> dict[str, Any]:
    """Plan fields from a mapping or a plan file (empty when None)."""
    if plan is None:
        return {}
    if isinstance(plan, dict):
        return dict(plan)
    doc = read_document(plan)
    if not isinstance(doc, dict):
        raise InputError("", "a plan file is a mapping of plan fields", source=str(plan))
    return doc


def _fill_dp(data: dict[str, Any], gpus: int, job: str) -> dict[str, Any]:
    if "dp" not in data:
        mp = int(data.get("tp", 1)) * int(data.get("pp", 1)) * int(data.get("cp", 1))
        if mp <= 0 or gpus % mp:
            raise InputError("plan.dp", f"job {job!r}: tp*pp*cp = {mp} does not divide its "
                                        f"{gpus} GPUs; give --dp explicitly")
        data["dp"] = gpus // mp
    return data


def job_inputs(cluster: Cluster, workload: str | None, plan_file: Path | None,
               flags: dict[str, Any], placement: Path | None) -> tuple[list[JobInput], list[str]]:
    """Jobs to simulate and notes about defaults taken.

    The CLI plan (file, overridden by inline flags) applies to every job without its own
    plan in the placement file; with no plan at all, :func:`default_plan` picks one.
    """
    placed: list[JobPlacement] = (load_placement(placement, cluster.accelerators)
                                  if placement is not None
                                  else default_placement(cluster.accelerators))
    base = plan_document(plan_file)
    base.update({k: v for k, v in flags.items() if v is not None})
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
            data = _fill_dp(data, gpus, job.name)
            if "global_batch_sequences" not in data:
                raise InputError("plan.global_batch_sequences", "required: give "
                                 "--global-batch or global_batch_sequences in the plan")
            plan = plan_from_data(data, source=str(plan_file) if plan_file else "plan")
        check_job_size(plan, gpus, job.name)
        jobs.append(JobInput(job.name, spec, plan, accelerators))
    return jobs, notes

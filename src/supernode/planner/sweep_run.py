"""Run a sweep's variants: one pure task each, on a local process pool or on Ray.

:func:`run_variant` is a pure function of its task (a plain dict): it loads the base
documents, applies the variant's overrides, plans, and returns one table row. So the
same tasks give the same rows whether run inline, on a process pool or as Ray tasks
(:func:`supernode.parallel.run_tasks`); rows carry no timing. A variant that cannot be
built or planned is a row with ``status: error`` (a result: the three kinds of failure,
docs/architecture.md), not an exception that stops the sweep. An error, Ctrl-C or SIGTERM
in the caller stops the pool and ends its workers: none outlives the sweep.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from supernode import bounds, parallel
from supernode.cluster.load import load_cluster_spec
from supernode.errors import InputError
from supernode.planner.build import build_target
from supernode.planner.report import PlanReport, plan_job
from supernode.planner.sweep_spec import PLAN_SETTINGS, SweepBase, SweepSpec
from supernode.planner.variants import with_domain_size, with_overrides
from supernode.spec.loader import validate_document
from supernode.workload.presets import load_workload

Progress = Callable[[], None]
#: Most worker processes of a local pool (``--workers``; its home is
#: :mod:`supernode.bounds`); never more than the variants or the CPU cores.
MAX_WORKERS = bounds.MAX_WORKERS

#: Result columns of a row, after the variant index and the swept keys.
METRIC_COLUMNS = ("status", "error", "gpus", "global_batch_sequences", "scale_up_size",
                  "tp", "pp", "dp", "cp", "ep", "vpp", "micro_batch", "recompute",
                  "sequence_parallel", "zero_stage", "distributed_optimizer", "rank_order",
                  "step_time_s", "tokens_per_s", "mfu", "comm_share", "exposed_comm_share",
                  "memory_per_gpu_bytes", "fits_in_memory", "cost_per_million_tokens_usd",
                  "energy_per_token_j", "candidates_evaluated", "legal_candidates",
                  "notes")


def make_tasks(spec: SweepSpec, variants: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One plain-dict task per variant (picklable, Ray-serialisable)."""
    base = spec.base.model_dump()
    return [{"index": i, "base": base, "overrides": v} for i, v in enumerate(variants)]


def _target(base: dict[str, Any], overrides: dict[str, Any]):
    spec = load_cluster_spec(overrides.get("cluster", base["cluster"]))
    base_gpus = spec.supernodes * spec.scale_up.size
    cluster = {k[len("cluster."):]: v for k, v in overrides.items() if k.startswith("cluster.")}
    if base["keep_gpus"] and "scale_up.size" in cluster:
        size = cluster.pop("scale_up.size")
        if not isinstance(size, int) or isinstance(size, bool):
            raise InputError("cluster.scale_up.size", f"must be an integer, got {size!r}")
        spec = with_domain_size(spec, size, base["gpus"] or base_gpus)
    spec = with_overrides(spec, cluster, root="cluster")
    w = load_workload(overrides.get("workload", base["workload"]))
    fields = {k[len("workload."):]: v for k, v in overrides.items()
              if k.startswith("workload.")}
    w = with_overrides(w, fields, root="workload")
    plan = plan_settings(base, overrides)
    target, _ = build_target(spec, w, plan["gpus"] or base_gpus, plan["global_batch"],
                             plan["precision"], plan["price_per_gpu_hour"], add_tiers=True)
    return target, plan


def plan_settings(base: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    """The variant's ``plan.*`` settings, validated by the same schema as the base's
    (:class:`SweepBase`): a value of the wrong type or out of bounds is an InputError at
    ``plan.<setting>`` (the variant's error row), not a crash further on."""
    values = {k: overrides.get(f"plan.{k}", base[k]) for k in PLAN_SETTINGS}
    try:
        checked = validate_document({**base, **values}, SweepBase)
    except InputError as exc:
        raise InputError(f"plan.{exc.path}" if exc.path else "plan", exc.message) from None
    return {k: getattr(checked, k) for k in PLAN_SETTINGS}


def _metrics(report: PlanReport) -> dict[str, Any]:
    t = report.outcome.target
    row: dict[str, Any] = {
        "status": "ok" if report.feasible else "infeasible", "error": "",
        "gpus": t.gpus, "global_batch_sequences": t.global_batch_sequences,
        "scale_up_size": t.scale_up_size,
        "candidates_evaluated": report.outcome.stats.candidates_evaluated,
        "legal_candidates": report.outcome.stats.legal_candidates,
        "notes": " | ".join(t.notes)}
    if not report.feasible:
        row["error"] = report.advice["reason"] if report.advice else "no legal plan"
        return row
    d = report.plans[0].to_dict()
    for key in ("tp", "pp", "dp", "cp", "ep", "vpp", "micro_batch", "recompute",
                "sequence_parallel", "zero_stage", "distributed_optimizer", "rank_order",
                "step_time_s", "tokens_per_s", "mfu", "memory_per_gpu_bytes",
                "fits_in_memory", "cost_per_million_tokens_usd", "energy_per_token_j"):
        row[key] = d[key]
    row["comm_share"] = d["comm_compute"]["share"]
    row["exposed_comm_share"] = d["comm_compute"]["exposed_share"]
    return row


def run_variant(task: dict[str, Any]) -> dict[str, Any]:
    """Plan one variant; returns its table row (pure: same task, same row)."""
    row: dict[str, Any] = {"variant": task["index"], **task["overrides"]}
    try:
        target, plan = _target(task["base"], task["overrides"])
        report = plan_job(target, objective=plan["objective"], top=1,
                          allow_cross_domain_tp=plan["allow_cross_domain_tp"])
        row.update(_metrics(report))
    except InputError as exc:
        row.update({"status": "error", "error": exc.render()})
    return row


def run_tasks(tasks: list[dict[str, Any]], workers: int | None = None,
              ray_address: str | None = None, use_ray: bool = False,
              on_done: Progress | None = None) -> list[dict[str, Any]]:
    """Rows of every task, in task order: inline, process pool, or Ray
    (:func:`supernode.parallel.run_tasks`; ``workers`` None: one per core, or 2 Ray CPUs)."""
    if use_ray:
        count = workers or 2
    else:
        count = bounds.worker_processes(bounds.check_workers(workers) or bounds.cpu_cores(),
                                        max(1, len(tasks)))
    done = on_done or (lambda: None)
    return parallel.run_tasks(run_variant, [(task,) for task in tasks], count,
                              use_ray=use_ray, ray_address=ray_address,
                              on_done=lambda index: done())

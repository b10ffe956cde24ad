"""Workload fit (seed 001 §1.3, §6): does this workload need a supernode?

The same job (model, GPUs, batch) is planned on the cluster's chips and NICs with
scale-up domains of 8 GPUs (a conventional 8-GPU-server cluster) and of each size ``S``
asked for. The answer puts numbers on the seed's three questions:

1. Is the model communication-bound? The comm share of the best plan on 8-GPU servers
   against the 20% line, and the speedup a domain of ``S`` brings.
2. Is operations ready for a bigger blast radius? One GPU or switch failure stalls a
   whole domain: ``S`` GPUs instead of 8; job interruptions per day from the fleet rate
   (:mod:`supernode.reliability.rates`).
3. Does the scale justify the cost? Cost per token at the base price (8-GPU domains)
   and at ``price x (1 + premium)`` for larger domains, and the premium at which a
   supernode breaks even (its speedup minus one).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

from supernode.errors import InputError
from supernode.planner.build import build_target
from supernode.planner.economics import default_economics
from supernode.planner.report import PlanReport, plan_job
from supernode.planner.search import PlanTarget
from supernode.planner.space import SearchSpace
from supernode.planner.variants import with_domain_size
from supernode.reliability.rates import expected_interruptions
from supernode.spec.cluster import ClusterSpec
from supernode.spec.workload import WorkloadSpec
from supernode.workload.params import total_params

CONVENTIONAL_DOMAIN = 8
DEFAULT_SIZES = (8, 16, 32, 36, 72, 144, 576)
#: Most domain sizes one question may try (each is a whole plan search).
MAX_SIZES = 64
#: ASSUMPTION: extra price per GPU-hour of a GPU in a domain larger than 8 (NVLink
#: switch trays, copper spine, liquid cooling); override with --supernode-premium.
DEFAULT_SUPERNODE_PREMIUM = 0.25
#: Speedups within this factor of the best count as the same (prefer the smaller domain).
SAME_SPEED = 1.01
#: A supernode that brings less than this speedup is not worth its blast radius.
MIN_USEFUL_SPEEDUP = 1.05
#: Seed 001 §1.3: supernodes pay off for >100B-parameter pre-training.
LARGE_MODEL_PARAMS = 100e9


@dataclass(frozen=True)
class FitInput:
    """The question: this workload, these chips, this many GPUs, these domain sizes."""

    workload: WorkloadSpec
    cluster: ClusterSpec
    gpus: int | None = None
    global_batch: int | None = None
    sizes: tuple[int, ...] = DEFAULT_SIZES
    price_per_gpu_hour: float | None = None
    supernode_premium: float = DEFAULT_SUPERNODE_PREMIUM
    workers: int | None = 1  # processes per plan search (None: as many as pay)
    #: Plan reports the caller has already searched (the design review's own plan
    #: search): a size whose search would be the same one reuses it (:func:`same_search`).
    searched: tuple[PlanReport, ...] = ()


def same_search(a: PlanTarget, b: PlanTarget) -> bool:
    """True when planning ``a`` and ``b`` is one search: the same model, machine, job size,
    batch, precision and prices; only the notes and the wording of the price's source
    may differ (neither enters a plan's score)."""
    def bare(t: PlanTarget) -> str:
        econ = replace(t.economics, price_note="") if t.economics is not None else None
        return repr(replace(t, notes=(), economics=econ))
    return bare(a) == bare(b)


def usable_sizes(spec: ClusterSpec, sizes: tuple[int, ...], gpus: int) -> list[int]:
    """Domain sizes buildable from the cluster's hosts and no larger than the job."""
    per_host = spec.host.accelerators_per_host
    ok = {s for s in sizes if 1 <= s <= gpus and (s % per_host == 0 or per_host % s == 0)}
    return sorted(ok | {CONVENTIONAL_DOMAIN} if CONVENTIONAL_DOMAIN % per_host == 0
                  or per_host % CONVENTIONAL_DOMAIN == 0 else ok)


def _plan_size(req: FitInput, size: int, gpus: int, price: float) -> tuple[PlanReport, Any]:
    spec = with_domain_size(req.cluster, size, gpus)
    target, scaled = build_target(spec, req.workload, gpus, req.global_batch,
                                  price_per_gpu_hour=price, add_tiers=True)
    for report in req.searched:
        if report.outcome.objective == "time" and \
                not report.outcome.allow_cross_domain_tp and \
                report.outcome.space == SearchSpace() and \
                same_search(report.outcome.target, target):
            return report, scaled
    return plan_job(target, top=1, workers=req.workers), scaled


def _row(size: int, report: PlanReport, base: PlanReport | None, price: float
         ) -> dict[str, Any]:
    row: dict[str, Any] = {"scale_up_size": size, "feasible": report.feasible,
                           "price_per_gpu_hour_usd": price}
    if not report.feasible:
        row["reason"] = report.advice["reason"] if report.advice else "no plan"
        return row
    best = report.plans[0]
    cc = best.comm_compute
    row.update({"step_time_s": best.step_time_s, "tokens_per_s": best.tokens_per_s,
                "mfu": best.mfu, "comm_share": cc["share"],
                "exposed_comm_share": cc["exposed_share"],
                "over_20pct": cc["over_threshold"],
                "cost_per_million_tokens_usd": best.cost_per_million_tokens_usd,
                "plan": {k: getattr(best.layout, k) for k in ("tp", "pp", "dp", "cp", "ep")}})
    if base is not None and base.feasible:
        row["speedup_vs_8"] = base.plans[0].step_time_s / best.step_time_s
    return row


def workload_fit(req: FitInput) -> dict[str, Any]:
    """Plan the job on 8-GPU domains and on each size; answer the seed's questions."""
    if not (math.isfinite(req.supernode_premium) and req.supernode_premium >= 0):
        raise InputError("supernode_premium", f"must be a finite number >= 0 (a share of the "
                                              f"price, --supernode-premium), got "
                                              f"{req.supernode_premium}")
    if req.gpus is not None and req.gpus < 1:
        raise InputError("gpus", f"must be >= 1 (--gpus), got {req.gpus}")
    gpus = req.cluster.supernodes * req.cluster.scale_up.size if req.gpus is None else req.gpus
    sizes = usable_sizes(req.cluster, tuple(req.sizes), gpus)
    if CONVENTIONAL_DOMAIN not in sizes:
        raise InputError("cluster.host.accelerators_per_host",
                         "an 8-GPU baseline cannot be built from these hosts")
    probe, _ = build_target(req.cluster, req.workload, None, 1)
    econ = default_economics(probe.system.accelerator, None, req.price_per_gpu_hour)
    base_report, _ = _plan_size(req, CONVENTIONAL_DOMAIN, gpus, econ.price_per_gpu_hour)
    rows = [_row(CONVENTIONAL_DOMAIN, base_report, base_report, econ.price_per_gpu_hour)]
    for size in sizes:
        if size == CONVENTIONAL_DOMAIN:
            continue
        price = econ.price_per_gpu_hour * (1.0 + req.supernode_premium)
        report, _ = _plan_size(req, size, gpus, price)
        rows.append(_row(size, report, base_report, price))
    out = {"workload": req.workload.name, "accelerator": probe.system.accelerator,
           "gpus": gpus, "global_batch_sequences": base_report.outcome.target
           .global_batch_sequences, "price_note": econ.price_note,
           "supernode_premium": req.supernode_premium, "sizes": rows}
    out["questions"] = _answers(req, rows, gpus, base_report)
    return out


def _answers(req: FitInput, rows: list[dict[str, Any]], gpus: int,
             base: PlanReport) -> dict[str, Any]:
    """The seed's three questions, answered with the numbers above."""
    ok = [r for r in rows if r["feasible"]]
    base_row = rows[0]
    top = max((r.get("speedup_vs_8", 1.0) for r in ok), default=1.0)
    # the smallest domain within 1% of the best speedup: same speed, smaller blast radius
    best = min((r for r in ok if r.get("speedup_vs_8", 1.0) >= top / SAME_SPEED),
               key=lambda r: r["scale_up_size"], default=None)
    params = float(total_params(req.workload))
    bound = base_row.get("comm_share")
    q1 = {"comm_share_on_8_gpu_servers": bound,
          "exposed_comm_share_on_8_gpu_servers": base_row.get("exposed_comm_share"),
          "communication_bound": bool(base_row.get("over_20pct")) if base.feasible else None,
          "best_scale_up_size": best["scale_up_size"] if best else None,
          "best_speedup": best.get("speedup_vs_8", 1.0) if best else None,
          "params": params, "large_model": params >= LARGE_MODEL_PARAMS}
    size = best["scale_up_size"] if best else CONVENTIONAL_DOMAIN
    q2 = {"blast_radius_gpus": size, "blast_radius_vs_8": size / CONVENTIONAL_DOMAIN,
          "job_interruptions_per_day": expected_interruptions(gpus, 86_400.0),
          "share_of_job_lost_per_failure_until_repair": size / gpus}
    q3: dict[str, Any] = {"cost_per_million_tokens_8": base_row.get(
        "cost_per_million_tokens_usd")}
    if best and base.feasible:
        q3.update({"cost_per_million_tokens_best": best["cost_per_million_tokens_usd"],
                   "break_even_premium": best.get("speedup_vs_8", 1.0) - 1.0,
                   "pays_off": best["cost_per_million_tokens_usd"]
                   < base_row["cost_per_million_tokens_usd"]})
    return {"communication_bound": q1, "blast_radius": q2, "cost": q3,
            "verdict": _verdict(q1, q3)}


def _verdict(q1: dict[str, Any], q3: dict[str, Any]) -> str:
    speedup = q1.get("best_speedup") or 1.0
    if q1["communication_bound"] is None:
        return "the job does not fit on 8-GPU servers; see the sizes that fit"
    if speedup < MIN_USEFUL_SPEEDUP:
        text = ("a supernode brings less than 5%: a conventional 8-GPU-server cluster is "
                "enough (seed 001 §1.3)")
        if q1["communication_bound"]:
            text += ("; its communication crosses the scale-out network in every design "
                     "(larger batches or faster NICs help more than a bigger domain)")
        return text
    return (f"a {q1['best_scale_up_size']}-GPU domain is {speedup:.2f}x faster than "
            f"8-GPU servers") + premium_clause(q3)


def premium_clause(q3: dict[str, Any]) -> str:
    """The end of a fit verdict: whether the larger domain pays for its premium per token
    (``q3``: ``pays_off``, ``break_even_premium``), training's and serving's alike."""
    if q3.get("pays_off"):
        return " and cheaper per token at the assumed premium: worth it"
    return (f", but costs more per token unless its premium stays below "
            f"{q3.get('break_even_premium', 0.0):.0%}")

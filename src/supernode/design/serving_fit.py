"""Serving fit (seed 001 §1.3, §6, for inference): does serving this model need a supernode?

The training fit's question (:mod:`supernode.planner.fit`) asked of a serving workload:
the same model, lengths, load and latency targets served on the cluster's chips and NICs
with scale-up domains of 8 GPUs (a conventional 8-GPU-server cluster) and of each larger
size asked for (:func:`~supernode.planner.variants.with_domain_size`, the same GPUs), each
searched by :func:`supernode.serve.plan.plan_serving` (aggregated and disaggregated). Per
size: the best deployment's output tokens/s per GPU under the targets, its layout and
latencies, and the share of its decode step spent in exposed communication (the TP
all-reduces and expert all-to-alls, :func:`supernode.serve.step.decode_comm_s`). The
answer:

1. Is serving communication-bound on 8-GPU servers? That share against the seeds' 20 %
   line (seed 000 §5.2), and what the larger domain buys in tokens/s per GPU.
2. The blast radius of the domain (GPUs one switch or GPU failure takes down).
3. Cost per million output tokens at the base price (8-GPU domains) and at
   ``price x (1 + premium)`` for the larger domains; the premium that breaks even.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from supernode.catalog.power import listed_price
from supernode.errors import InputError
from supernode.estimate.system import job_system
from supernode.planner.fit import (
    CONVENTIONAL_DOMAIN,
    DEFAULT_SUPERNODE_PREMIUM,
    MIN_USEFUL_SPEEDUP,
    premium_clause,
    usable_sizes,
)
from supernode.planner.variants import with_domain_size
from supernode.serve.calibration import default_serve_constants
from supernode.serve.deploy import Deployments
from supernode.serve.plan import ServeRequest, plan_serving, usd_per_million
from supernode.serve.step import decode_comm_s, decode_step_s
from supernode.spec.cluster import ClusterSpec

#: Seeds 000 §5.2 / 001 §2.1: communication above this share of a step is the bottleneck.
COMM_SHARE_LINE = 0.20


def _best(plan: dict[str, Any]) -> tuple[str, dict[str, Any] | None]:
    """The mode and the deployment ``plan_serving`` chose (None when nothing meets)."""
    mode = plan["mode"]
    if mode == "disaggregated":
        return mode, plan["disaggregated"]
    return mode, plan["aggregated"]["best"]


def _decode_comm_share(req: ServeRequest, best: dict[str, Any]) -> float:
    """Exposed communication over the decode step of deployment ``best`` (its layout and
    batch) at the traffic's mean decode context, from the step model the search priced it
    with (:func:`~supernode.serve.step.decode_step_s`)."""
    c = default_serve_constants()
    d = Deployments.of(tp=best["tp"], pp=best["pp"], dp=best["dp"], ep=best["ep"],
                       batch=best["batch_per_dp_rank"])
    context = req.traffic.decode_context
    step = decode_step_s(req.workload, d, req.system, c, req.precision, context)
    comm = decode_comm_s(req.workload, d, req.system, c, req.precision)
    return float(np.asarray(comm / step).reshape(-1)[0])


def _row(size: int, req: ServeRequest, plan: dict[str, Any], price: float,
         base_rate: float | None) -> dict[str, Any]:
    mode, best = _best(plan)
    row: dict[str, Any] = {"scale_up_size": size, "feasible": best is not None,
                           "mode": mode, "price_per_gpu_hour_usd": price}
    if best is None:
        row["reason"] = plan["mode_reason"]
        return row
    decode = best["decode"] if mode == "disaggregated" else best
    rate = best["output_tokens_per_s_per_gpu"]
    row.update({"output_tokens_per_s_per_gpu": rate, "ttft_ms": best["ttft_ms"],
                "tpot_ms": best["tpot_ms"],
                "layout": {k: decode[k] for k in ("tp", "pp", "dp", "ep")},
                "decode_batch_per_dp_rank": decode["batch_per_dp_rank"],
                "decode_comm_share": _decode_comm_share(req, decode),
                "usd_per_million_output_tokens": usd_per_million(price, rate)})
    row["over_20pct"] = row["decode_comm_share"] > COMM_SHARE_LINE
    if base_rate:
        row["speedup_vs_8"] = rate / base_rate
    elif size == CONVENTIONAL_DOMAIN:
        row["speedup_vs_8"] = 1.0
    return row


def serving_fit(req: ServeRequest, cluster: ClusterSpec, sizes: tuple[int, ...],
                premium: float = DEFAULT_SUPERNODE_PREMIUM) -> dict[str, Any]:
    """Serve ``req`` (its workload, precision, traffic; its system only for its GPUs) on
    ``cluster``'s chips with 8-GPU domains and with each of ``sizes``; answer the seed's
    questions for serving (see the module doc). Domains larger than 8 are priced at
    ``(1 + premium)`` times the base GPU-hour price. The cluster's own domain size is served
    as the cluster is; another size that its scale-up cannot be resized to (a full mesh, a
    torus) is a row saying why."""
    if not (math.isfinite(premium) and premium >= 0):
        raise InputError("supernode_premium", f"must be a finite number >= 0, got {premium}")
    gpus = int(req.system.gpus)
    usable = usable_sizes(cluster, tuple(sizes), gpus)
    if CONVENTIONAL_DOMAIN not in usable:
        raise InputError("cluster.host.accelerators_per_host",
                         "an 8-GPU baseline cannot be built from these hosts")
    base_price = req.usd_per_gpu_hour or listed_price(req.system.accelerator).usd_per_gpu_hour
    rows: list[dict[str, Any]] = []
    for size in [CONVENTIONAL_DOMAIN] + [u for u in usable if u != CONVENTIONAL_DOMAIN]:
        price = base_price * (1.0 if size == CONVENTIONAL_DOMAIN else 1.0 + premium)
        try:  # the cluster's own size as it is; another only where the domain resizes
            sized = cluster if size == cluster.scale_up.size else \
                with_domain_size(cluster, size, gpus)
        except InputError as exc:
            rows.append({"scale_up_size": size, "feasible": False, "mode": "none",
                         "price_per_gpu_hour_usd": price,
                         "reason": f"not buildable from this cluster: {exc.message}"})
            continue
        system = job_system(sized, gpus, add_tiers=True)
        one = ServeRequest(req.workload, system, req.precision, req.traffic, 1,
                           req.disaggregation, price)
        base = rows[0].get("output_tokens_per_s_per_gpu") if rows else None
        rows.append(_row(size, one, plan_serving(one), price, base))
    return {"model": req.workload.name, "accelerator": req.system.accelerator, "gpus": gpus,
            "supernode_premium": premium, "comm_share_line": COMM_SHARE_LINE,
            "sizes": rows, "questions": _answers(rows)}


def _answers(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The seed's questions for serving, with the numbers of ``rows`` (8-GPU row first)."""
    base = rows[0]
    ok = [r for r in rows if r["feasible"]]
    top = max(ok, key=lambda r: r["output_tokens_per_s_per_gpu"], default=None)
    speedup = (top["output_tokens_per_s_per_gpu"] / base["output_tokens_per_s_per_gpu"]
               if top and base["feasible"] else None)
    q1 = {"decode_comm_share_on_8_gpu_servers": base.get("decode_comm_share"),
          "communication_bound": base.get("over_20pct") if base["feasible"] else None,
          "best_scale_up_size": top["scale_up_size"] if top else None,
          "tokens_per_s_per_gpu_gain": speedup}
    q2 = {"blast_radius_gpus": top["scale_up_size"] if top else CONVENTIONAL_DOMAIN}
    q3: dict[str, Any] = {"usd_per_million_8": base.get("usd_per_million_output_tokens")}
    if top and base["feasible"] and speedup is not None:
        q3.update({"usd_per_million_best": top["usd_per_million_output_tokens"],
                   "break_even_premium": speedup - 1.0,
                   "pays_off": top["usd_per_million_output_tokens"]
                   < base["usd_per_million_output_tokens"]})
    return {"communication_bound": q1, "blast_radius": q2, "cost": q3,
            "verdict": _verdict(q1, q3, base, len(rows))}


def _verdict(q1: dict[str, Any], q3: dict[str, Any], base: dict[str, Any],
             sizes: int) -> str:
    gain = q1["tokens_per_s_per_gpu_gain"]
    if not base["feasible"]:
        return (f"no 8-GPU baseline ({base['reason']})"
                + (f"; served with {q1['best_scale_up_size']}-GPU domains"
                   if q1["best_scale_up_size"] else "; no domain size meets the targets")
                if base.get("reason", "").startswith("not buildable") else
                "8-GPU servers cannot serve this model under the targets"
                + (f"; a {q1['best_scale_up_size']}-GPU domain can"
                   if q1["best_scale_up_size"] else "; no domain size can"))
    share = q1["decode_comm_share_on_8_gpu_servers"]
    bound = (f"communication is {share:.0%} of the decode step on 8-GPU servers"
             if share is not None else "the decode step's communication share is unknown")
    if sizes == 1:
        return f"only 8-GPU domains were asked for ({bound}); nothing larger to compare"
    if gain is None or gain < MIN_USEFUL_SPEEDUP:
        return f"a supernode serves less than 5% more tokens/s per GPU ({bound}): " \
               "8-GPU servers are enough"
    return (f"a {q1['best_scale_up_size']}-GPU domain serves {gain:.2f}x the tokens/s "
            f"per GPU of 8-GPU servers ({bound})") + premium_clause(q3)

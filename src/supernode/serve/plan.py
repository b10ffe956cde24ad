"""The serving plan of a model on a cluster: ranked deployments, the frontier, the mode.

:func:`plan_serving` runs the aggregated search (:mod:`supernode.serve.search`) and the
disaggregated one (:mod:`supernode.serve.disagg`), chooses the mode that serves more output
tokens/s per GPU under the targets (aggregated on a tie), and says why each runner-up lost.
Every deployment also carries its price per million output tokens at the catalog's price
per GPU-hour (``data/catalog/prices.yaml``): on one cluster it ranks as tokens/s per GPU.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from supernode.catalog.power import listed_price
from supernode.estimate.system import SystemModel
from supernode.serve.calibration import ServeConstants, default_serve_constants
from supernode.serve.disagg import best_disaggregated
from supernode.serve.precision import ServePrecision
from supernode.serve.search import (
    best_per_layout,
    evaluate,
    infeasible_reason,
    pareto,
    row,
    why_lost,
)
from supernode.serve.traffic import Traffic
from supernode.spec.workload import WorkloadSpec


@dataclass(frozen=True)
class ServeRequest:
    """A model, the GPUs that serve it (their system), precisions and the traffic."""

    workload: WorkloadSpec
    system: SystemModel
    precision: ServePrecision
    traffic: Traffic
    top: int = 5
    disaggregation: bool = True
    usd_per_gpu_hour: float | None = None


def plan_serving(req: ServeRequest, constants: ServeConstants | None = None) -> dict[str, Any]:
    """Ranked deployments, Pareto frontier and the chosen mode, as a JSON-ready dict."""
    c = constants or default_serve_constants()
    w, system, p, t = req.workload, req.system, req.precision, req.traffic
    gpus = int(system.gpus)
    e = evaluate(w, system, c, p, t, gpus)
    ranked = best_per_layout(e)
    front = pareto(e)
    out: dict[str, Any] = {
        "model": w.name, "accelerator": system.accelerator, "gpus": gpus,
        "scale_up_gpus": int(system.scale_up_size),
        "traffic": {"input_tokens": t.isl, "output_tokens": t.osl,
                    "concurrency": t.concurrency, "request_rate": t.request_rate,
                    "ttft_ms": t.ttft_s * 1e3 if t.ttft_s else None,
                    "tpot_ms": t.tpot_s * 1e3 if t.tpot_s else None},
        "precision": {"math": p.main, "other_gemms": p.other, "weights": p.weights,
                      "kv_cache": p.kv},
        "candidates": int(e.deployments.tp.size),
        "pareto": [row(e, int(i)) for i in front],
        "notes": list(system.notes),
    }
    aggregated = row(e, int(ranked[0])) if ranked.size else None
    out["aggregated"] = {"best": aggregated,
                         "runners_up": [row(e, int(i)) | {"why": why_lost(e, int(i),
                                                                         int(ranked[0]))}
                                        for i in ranked[1:req.top]]}
    if not ranked.size:
        out["aggregated"]["reason"] = infeasible_reason(e)
    disagg = best_disaggregated(w, system, c, p, t, gpus) \
        if req.disaggregation and t.osl and not t.request_rate and not t.concurrency else None
    out["disaggregated"] = disagg
    price = listed_price(system.accelerator)
    usd = req.usd_per_gpu_hour or price.usd_per_gpu_hour
    out["price"] = {"usd_per_gpu_hour": usd, "listed": price.listed and not
                    req.usd_per_gpu_hour, "source": "--price-per-gpu-hour" if
                    req.usd_per_gpu_hour else price.source}
    for d in [aggregated, disagg, *out["aggregated"]["runners_up"], *out["pareto"]]:
        if d:
            d["usd_per_million_output_tokens"] = usd_per_million(
                usd, d["output_tokens_per_s_per_gpu"])
    agg_rate = aggregated["output_tokens_per_s_per_gpu"] if aggregated else -np.inf
    dis_rate = disagg["output_tokens_per_s_per_gpu"] if disagg else -np.inf
    out["mode"] = ("disaggregated" if dis_rate > agg_rate else
                   "aggregated" if aggregated else "none")
    if disagg and aggregated:
        ratio = dis_rate / agg_rate
        out["mode_reason"] = (f"disaggregated pools serve {ratio:.3f}x the tokens/s per GPU "
                              if ratio > 1 else
                              f"aggregated serves {1 / ratio:.3f}x the disaggregated pools' "
                              "tokens/s per GPU ") + "under the targets"
    elif aggregated:
        out["mode_reason"] = ("disaggregation not searched" if not req.disaggregation or
                              t.request_rate or t.concurrency else
                              "no disaggregated pair meets the targets")
    else:
        out["mode_reason"] = out["aggregated"]["reason"]
    return out


def usd_per_million(usd_per_gpu_hour: float, tokens_per_s_per_gpu: float) -> float | None:
    """USD per million output tokens at ``usd_per_gpu_hour`` (None when nothing is served)."""
    if tokens_per_s_per_gpu <= 0:
        return None
    return usd_per_gpu_hour / (tokens_per_s_per_gpu * 3600.0) * 1e6

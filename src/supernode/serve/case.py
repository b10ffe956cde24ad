"""Predict an ``inference`` validation case (format revision 3) with the serving model.

The case's ``system`` block is the step model's (:func:`supernode.estimate.system.
system_from_validation`; ``hbm_gigabytes`` / ``hbm_tb_per_s`` override the catalog's
memory), its ``model`` block the training side's (:func:`supernode.spec.training_case.
case_workload`). Nulls in ``serving`` are chosen as a tuned deployment would: every layout
of :mod:`supernode.serve.candidates` that the stated fields allow, and the batch, are
searched for the best primary metric among those that fit in memory and meet the ``slo``;
the detail says what was chosen. A null length of a case that names a ``dataset`` is the
dataset's published mean (:mod:`supernode.serve.datasets`); a null ``batch_size`` of a
case whose ``engine`` has a default sequence limit (:mod:`supernode.serve.engines`) is
held to it. A null KV precision is chosen as
:mod:`supernode.serve.precision` says. The primary metric is the first published of
:data:`PRIMARY_METRICS`; TTFT, TPOT (ITL) and request latency are predicted beside it.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from supernode.errors import InputError
from supernode.serve.calibration import ServeConstants, default_serve_constants
from supernode.serve.candidates import layouts, with_batches
from supernode.serve.datasets import dataset_lengths
from supernode.serve.engines import default_max_sequences
from supernode.serve.precision import resolve_precision
from supernode.serve.throughput import Served, serve
from supernode.serve.traffic import PHASES, Traffic

#: The validation format's primary-metric order for ``inference`` cases.
PRIMARY_METRICS = ("output_tokens_per_s_per_gpu", "output_tokens_per_s",
                   "input_tokens_per_s_per_gpu", "input_tokens_per_s", "request_throughput",
                   "tpot_ms", "itl_ms", "ttft_ms", "request_latency_ms")
#: Latency metrics reported beside the primary one where published.
LATENCY_METRICS = ("ttft_ms", "tpot_ms", "itl_ms")


class UnsupportedServingCase(Exception):
    """The case's inputs are outside what the serving model handles (message: why)."""


def primary_metric(case: dict[str, Any]) -> str:
    """The case's primary metric: the first of :data:`PRIMARY_METRICS` it publishes."""
    measured = case.get("measured") or {}
    for name in PRIMARY_METRICS:
        if isinstance(measured, dict) and _number(measured.get(name)):
            return name
    return PRIMARY_METRICS[0]


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _opt_int(block: dict[str, Any], name: str, path: str) -> int | None:
    value = block.get(name)
    if value is None:
        return None
    if not _number(value) or value < 1 or int(value) != value:
        raise InputError(f"{path}.{name}", f"a positive integer or null, got {value!r}")
    return int(value)


def _opt_float(block: dict[str, Any], name: str, path: str) -> float | None:
    value = block.get(name)
    if value is None:
        return None
    if not _number(value) or not np.isfinite(value) or value <= 0:
        raise InputError(f"{path}.{name}", f"a positive number or null, got {value!r}")
    return float(value)


def case_traffic(serving: dict[str, Any]) -> Traffic:
    """The serving block's lengths, load, targets and phase (a null length of a named
    dataset in :func:`supernode.serve.datasets.dataset_lengths`: its mean, tokens)."""
    phase = serving.get("phase") or "both"
    if phase not in PHASES:
        raise InputError("serving.phase", f"unknown phase {phase!r}; allowed: {', '.join(PHASES)}")
    isl = _opt_float(serving, "input_tokens", "serving")
    osl = _opt_float(serving, "output_tokens", "serving")
    table = dataset_lengths(serving.get("dataset"))
    if table is not None:  # the dataset's published means fill the lengths left null
        isl = table.input_tokens if isl is None else isl
        osl = table.output_tokens if osl is None and phase != "prefill" else osl
    if isl is None or (osl is None and phase == "both"):
        where = f" (dataset {serving.get('dataset')!r} has no length table here)" \
            if serving.get("dataset") else ""
        raise UnsupportedServingCase(f"workload lengths not given{where}")
    slo = serving.get("slo") or {}
    if not isinstance(slo, dict):
        raise InputError("serving.slo", "a mapping {ttft_ms, tpot_ms} or null")
    ttft, tpot = _opt_float(slo, "ttft_ms", "serving.slo"), _opt_float(slo, "tpot_ms",
                                                                      "serving.slo")
    return Traffic(isl=isl, osl=osl, concurrency=_opt_float(serving, "concurrency", "serving"),
                   request_rate=_opt_float(serving, "request_rate", "serving"),
                   ttft_s=ttft / 1e3 if ttft else None, tpot_s=tpot / 1e3 if tpot else None,
                   phase=phase)


def _system(case: dict[str, Any]) -> Any:
    from supernode.estimate.system import system_from_validation

    block = case.get("system")
    if not isinstance(block, dict):
        raise InputError("system", "a mapping with accelerator, gpus, ...")
    system = system_from_validation(block)
    hbm, bw = _opt_float(block, "hbm_gigabytes", "system"), _opt_float(block, "hbm_tb_per_s",
                                                                     "system")
    return replace(system, memory_bytes=hbm * 1e9 if hbm else system.memory_bytes,
                   memory_bandwidth_bytes_per_s=bw * 1e12 if bw else
                   system.memory_bandwidth_bytes_per_s)


def _workload(case: dict[str, Any], traffic: Traffic) -> Any:
    from supernode.spec.training_case import case_workload

    model = dict(case.get("model") or {})
    model["seq_len"] = int(max(round(traffic.peak_context), 1))
    return case_workload({**case, "model": model, "training": {}})


def predict_serving_case(case: dict[str, Any], constants: ServeConstants | None = None
                         ) -> tuple[dict[str, float], str]:
    """Predicted figures of one case (by measured-metric name) and what was chosen."""
    c = constants or default_serve_constants()
    serving = case.get("serving")
    if not isinstance(serving, dict):
        raise InputError("serving", "a mapping with the deployment and its load")
    traffic = case_traffic(serving)
    side = serving.get(traffic.phase) if traffic.phase in ("prefill", "decode") else None
    side = side if isinstance(side, dict) else {}
    if serving.get("disaggregated") and traffic.phase == "both":
        raise UnsupportedServingCase("disaggregated end-to-end cases are not modelled yet "
                                     "(phase prefill or decode is)")
    system = _system(case)
    w = _workload(case, traffic)
    p = resolve_precision(str(serving.get("precision") or "bf16"),
                          serving.get("weights_precision"), serving.get("kv_cache_precision"),
                          w.moe is not None, system.peak_flops_by_precision, "serving.precision")
    gpus = int(system.gpus)
    fields = {k: _opt_int({**serving, **side}, k, "serving") for k in ("tp", "pp", "dp", "ep")}
    batch = _opt_int({**serving, **side}, "batch_size", "serving")
    if w.moe is None:
        fields["ep"] = 1
    lay = layouts(w, gpus, **fields)
    if lay.tp.size == 0:
        raise UnsupportedServingCase(f"no layout of tp/pp/dp {fields} divides {gpus} GPUs")
    probe = serve(w, lay, system, c, p, traffic)
    limit = probe.max_batch
    cap = default_max_sequences(serving.get("engine")) if batch is None else None
    if cap is not None:  # no published batch limit: the engine ran at its default
        limit = np.minimum(limit, cap)
    if traffic.concurrency:
        instances = gpus // lay.gpus
        per_rank = np.floor(traffic.concurrency / np.maximum(instances * lay.dp, 1))
        limit = np.minimum(limit, np.maximum(per_rank, 1))
    if batch:  # the format's batch_size is the engine's maximum batch (max_batch_size)
        limit = np.minimum(limit, batch)
    d = with_batches(lay, limit, None)
    r = serve(w, d, system, c, p, traffic)
    ok = np.asarray(r.fits, dtype=bool)
    if traffic.tpot_s:
        ok &= r.tpot_s <= traffic.tpot_s
    if traffic.ttft_s:
        ok &= r.ttft_s <= traffic.ttft_s
    figures = _figures(r, d, gpus, traffic)
    metric = primary_metric(case)
    score = figures[metric] if not metric.endswith("_ms") else -figures[metric]
    if traffic.request_rate and traffic.phase == "both":
        score = np.where(figures["request_throughput"] >= traffic.request_rate, -d.batch, -np.inf)
        score = np.where(np.isfinite(score).any(), score, figures["request_throughput"])
    if not ok.any():
        raise UnsupportedServingCase("no layout and batch fits in memory"
                                     + (" and meets the slo" if traffic.tpot_s or traffic.ttft_s
                                        else ""))
    best = int(np.argmax(np.where(ok, score, -np.inf)))
    out = {k: float(v[best]) for k, v in figures.items()}
    if traffic.request_rate and traffic.phase == "both":
        served = min(out["request_throughput"], traffic.request_rate)
        scale = served / out["request_throughput"]
        for k in ("output_tokens_per_s", "output_tokens_per_s_per_gpu", "request_throughput",
                  "input_tokens_per_s", "input_tokens_per_s_per_gpu"):
            out[k] *= scale
    detail = (f"chose tp={d.tp[best]} pp={d.pp[best]} dp={d.dp[best]} ep={d.ep[best]} "
              f"batch={d.batch[best]} per DP rank (KV limit {int(r.max_batch[best]):,}"
              f"{f', engine default {cap:,}' if cap is not None else ''}), "
              f"kv {p.kv}, weights {p.weights}; "
              f"{r.weights_bytes[best] / 1e9:.1f} GB weights/GPU, "
              f"{r.kv_tokens[best]:,.0f} KV tokens/GPU; TPOT {r.tpot_s[best] * 1e3:.2f} ms")
    return out, detail


def _figures(r: Served, d: Any, gpus: int, traffic: Traffic) -> dict[str, Any]:
    instances = gpus // d.gpus
    used = (instances * d.gpus).astype(float)
    out_gpu = r.output_tokens_per_s_per_gpu * used / gpus
    in_gpu = r.input_tokens_per_s_per_gpu * used / gpus
    osl = traffic.osl or 1.0
    decoding = max(osl - 1.0, 0.0) * r.tpot_s if traffic.phase != "prefill" else 0.0
    return {
        "output_tokens_per_s_per_gpu": out_gpu,
        "output_tokens_per_s": out_gpu * gpus,
        "input_tokens_per_s_per_gpu": in_gpu,
        "input_tokens_per_s": in_gpu * gpus,
        "request_throughput": out_gpu * gpus / osl,
        "tpot_ms": r.tpot_s * 1e3,
        "itl_ms": r.tpot_s * 1e3,
        "ttft_ms": r.ttft_s * 1e3,
        "request_latency_ms": (r.ttft_s + decoding) * 1e3,
    }

"""A serving request from its documents: the serve file (or block) with command-line
overrides, validated, and the model, GPUs, precisions and traffic it asks for on a cluster
(what ``supernode serve``, ``fit --serve`` and ``design --serve`` all start from)."""

from __future__ import annotations

from typing import Any

from supernode.cluster.load import load_cluster_spec
from supernode.errors import InputError


def serve_spec(path: str | None, flags: dict[str, Any]) -> Any:
    """The serving workload of ``path`` (a ``serve:`` block or a serve file; None: none)
    with ``flags`` (non-None values) over its fields, validated (:class:`ServeSpec`)."""
    from supernode.spec.loader import read_document
    from supernode.spec.serving import ServeSpec
    from supernode.spec.workload import validate_as

    data: dict[str, Any] = {}
    if path is not None:
        doc = read_document(path)
        if isinstance(doc, dict) and set(doc) == {"serve"}:
            doc = doc["serve"]
        if not isinstance(doc, dict):
            raise InputError("serve", "a mapping of serving fields", source=str(path))
        data = dict(doc)
    data.update({k: v for k, v in flags.items() if v is not None})
    return validate_as(ServeSpec, data, "serve", str(path) if path else None)


def build_request(spec: Any, cluster: str, top: int, disaggregation: bool,
                  usd_per_gpu_hour: float | None = None) -> Any:
    """The serving request of a validated serve spec on ``cluster`` (its GPUs)."""
    from supernode.estimate.system import job_system
    from supernode.serve.plan import ServeRequest
    from supernode.serve.precision import resolve_precision
    from supernode.serve.traffic import Traffic, trace_means
    from supernode.workload.presets import load_workload

    if spec.model is None:
        raise InputError("model", "required: a workload file or preset (--model)")
    isl, osl = spec.input_tokens, spec.output_tokens
    if spec.trace_file is not None:
        isl, osl, _ = trace_means(spec.trace_file)
    if isl is None or osl is None:
        raise InputError("input_tokens" if isl is None else "output_tokens",
                         "required (--isl/--osl or a trace_file)")
    w = load_workload(spec.model)
    w = w.model_copy(update={"seq_len": int(max(round(isl + osl), 1))})
    system = job_system(load_cluster_spec(cluster), spec.gpus)
    precision = resolve_precision(spec.precision, spec.weights_precision,
                                  spec.kv_cache_precision, w.moe is not None,
                                  system.peak_flops_by_precision)
    traffic = Traffic(isl=isl, osl=osl, concurrency=spec.concurrency,
                      request_rate=spec.request_rate_per_s,
                      ttft_s=spec.ttft_ms / 1e3 if spec.ttft_ms else None,
                      tpot_s=spec.tpot_ms / 1e3 if spec.tpot_ms else None)
    return ServeRequest(w, system, precision, traffic, top, disaggregation, usd_per_gpu_hour)

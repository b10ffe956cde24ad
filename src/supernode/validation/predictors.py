"""Predictors of each validation-case kind, registered with the harness's registry.

* ``training_step``: the step-time model on the case's system, model and plan;
* ``collective``: the collective cost model (bus bandwidth, nccl-tests definition);
* ``model_state_memory`` / ``activation_memory``: the workload memory model;
* ``interruptions``: the default component failure rates on the case's inventory
  (reliability.interruptions);
* ``inference``: the serving model (:mod:`supernode.serve.case`): the primary metric the
  case publishes first, TTFT/TPOT beside it;
* ``remote_memory``: the memory model (:mod:`supernode.memory.remote_case`): a remote or
  coherent access's bandwidth or latency.
"""

from __future__ import annotations

from typing import Any

from supernode.validation.registry import Prediction, UnsupportedCase, register_predictor


def _with_global_batch(case: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """The case with a null ``training.global_batch`` set to the default batch
    (:func:`supernode.workload.batch.default_global_batch`) where the case is scored on
    ``tokens_per_s_per_gpu`` (a throughput does not depend on the batch it was counted
    at, the step time it is compared as does, on both sides alike), and what was chosen."""
    from supernode.spec.training_case import case_workload
    from supernode.workload.batch import default_batch_reason

    train, measured = case.get("training") or {}, case.get("measured") or {}
    if train.get("global_batch") is not None or measured.get("step_time_s") is not None \
            or measured.get("tokens_per_s_per_gpu") is None:
        return case, ""
    gpus = (case.get("system") or {}).get("gpus")
    if not isinstance(gpus, int) or isinstance(gpus, bool) or gpus < 1:
        return case, ""
    batch, why = default_batch_reason(case_workload(case), gpus)
    filled = {**case, "training": {**train, "global_batch": batch}}
    return filled, f", global_batch={batch:,} (null: {why}; scored on tokens/s per GPU)"


def _training_step(case: dict[str, Any]) -> Prediction:
    from supernode.estimate.model import describe_stack, estimate_plan
    from supernode.estimate.system import system_from_validation
    from supernode.spec.training_case import case_plan, case_workload, derived_sizes

    case, batch_note = _with_global_batch(case)
    workload = case_workload(case)
    plan = case_plan(case)
    system = system_from_validation(case["system"], plan.precision)
    result = estimate_plan(workload, plan, system)
    chosen = ", ".join(f"{k}={v}" for k, v in result.chosen.items())
    fit = "" if result.fits_in_memory else "; does not fit in memory"
    heads = (case.get("model") or {}).get("heads", 0) is None
    assumed = f"; heads not published: {workload.n_heads} of {workload.qk_head_dim}" if heads \
        else ""
    train, par = case.get("training") or {}, case.get("parallelism") or {}
    if workload.moe is not None and plan.ep > 1 and par.get("etp") is None:
        chosen += f", etp={plan.etp or plan.tp} (null: Megatron's default, tp)"
    for size, rule in derived_sizes(case).items():
        chosen += f", {size}={getattr(plan, size)} (null: {rule})"
    chosen += batch_note
    framework = "" if train.get("framework") else " (framework null: the default)"
    stack = f"; stack {describe_stack(result.stack)}{framework}"
    notes = "".join(f"; {n}" for n in system.notes)
    return Prediction(result.step_time_s,
                      f"chose {chosen}; mfu={result.mfu:.3f}{fit}{assumed}{stack}{notes}")


def _training_measured(case: dict[str, Any]) -> float | None:
    from supernode.spec.training_case import measured_step_time_s

    return measured_step_time_s(_with_global_batch(case)[0])


def _collective(case: dict[str, Any]) -> Prediction:
    from supernode.collectives.validate import UnsupportedCase as CollectiveUnsupported
    from supernode.collectives.validate import predict_collective_case

    try:
        out = predict_collective_case(case)
    except CollectiveUnsupported as exc:
        raise UnsupportedCase(str(exc)) from None
    return Prediction(float(out["busbw_gigabytes_per_s"]),
                      f"algorithm={out['algorithm']}; {out.get('detail', '')}".strip("; "))


def _model_state(case: dict[str, Any]) -> Prediction:
    from supernode.workload.memory import predict_model_state_memory

    return Prediction(predict_model_state_memory(case), "model states (ZeRO formulas)")


def _activation(case: dict[str, Any]) -> Prediction:
    from supernode.workload.activations import predict_activation_memory

    return Prediction(predict_activation_memory(case), "per layer (Korthikanti Table 2)")


def _interruptions(case: dict[str, Any]) -> Prediction:
    from supernode.reliability.interruptions import predict_case

    value, detail = predict_case(case)
    return Prediction(value, detail)


def _inference(case: dict[str, Any]) -> Prediction:
    from supernode.serve.case import UnsupportedServingCase, predict_serving_case, primary_metric

    try:
        figures, detail = predict_serving_case(case)
    except UnsupportedServingCase as exc:
        raise UnsupportedCase(str(exc)) from None
    metric = primary_metric(case)
    same = {metric, *(pair for pair in _SAME_MEASUREMENT.get(metric, ()))}
    return Prediction(figures[metric], detail,
                      {k: v for k, v in figures.items() if k not in same})


#: A per-GPU figure and its whole-system figure are one measurement (format revision 3).
_SAME_MEASUREMENT = {
    "output_tokens_per_s_per_gpu": ("output_tokens_per_s",),
    "output_tokens_per_s": ("output_tokens_per_s_per_gpu",),
    "input_tokens_per_s_per_gpu": ("input_tokens_per_s",),
    "input_tokens_per_s": ("input_tokens_per_s_per_gpu",),
    "tpot_ms": ("itl_ms",),
    "itl_ms": ("tpot_ms",),
}


def _inference_metric(case: dict[str, Any]) -> str:
    from supernode.serve.case import primary_metric

    return primary_metric(case)


def _remote_memory(case: dict[str, Any]) -> Prediction:
    from supernode.memory.remote_case import RemoteCaseError, predict_remote_case

    try:
        _, value, detail = predict_remote_case(case)
    except RemoteCaseError as exc:
        raise UnsupportedCase(str(exc)) from None
    return Prediction(value, detail)


def _remote_memory_metric(case: dict[str, Any]) -> str:
    from supernode.memory.remote_case import case_metric

    return case_metric(case)


register_predictor("training_step", "step_time_s", _training_step, _training_measured)
register_predictor("collective", "busbw_gigabytes_per_s", _collective)
register_predictor("model_state_memory", "bytes_per_gpu", _model_state)
register_predictor("activation_memory", "bytes_per_layer", _activation)
register_predictor("interruptions", "unexpected_interruptions", _interruptions)
register_predictor("inference", "output_tokens_per_s_per_gpu", _inference,
                   metric_of=_inference_metric)
register_predictor("remote_memory", "bandwidth_gbyte_per_s", _remote_memory,
                   metric_of=_remote_memory_metric)

"""Memory per GPU during training, by component (bytes).

* **Model states** (Rajbhandari et al., "ZeRO", SC'20, §5): with ``W`` bytes per weight,
  ``G`` per gradient and ``K`` per parameter of optimizer state, stage 0 keeps
  ``(W+G+K) Psi``, stage 1 ``W Psi + G Psi + K Psi/Nd``, stage 2 ``W Psi + (G+K) Psi/Nd``,
  stage 3 ``(W+G+K) Psi/Nd``. ZeRO's mixed-precision Adam is W=2, G=2, K=12. Megatron's
  distributed optimizer shards like stage 1: bf16 params with fp32 main grads
  ``2 + 4 + 12/d = 6 + 12/d`` (18 unsharded), fp16 ``2 + 2 + 16/d = 4 + 16/d`` (20).
* **Parameters per GPU** after sharding: layers by ``tp`` (experts by ``tp * ep``), the
  busiest pipeline stage's layers (:mod:`supernode.workload.stages`), the input embedding
  on the first stage, the output layer (or a tied copy) and final norm on the last.
  Dense parameters shard over the ``dp * cp`` group, experts over ``dp * cp / ep``.
* **Activations**: :mod:`supernode.workload.activations` per layer x in-flight
  micro-batches of the pipeline schedule, plus one layer's full activations while a
  fully recomputed layer runs its backward.
* **Output logits** on the last stage: ``4 s b V / t`` (fp32 cross-entropy, Korthikanti
  §4.3) plus the final norm and output-layer inputs.
* **Communication buffers**: the all-gathered sequence for TP+SP, pipeline send/receive
  buffers, MoE all-to-all buffers, ZeRO-3 gathered parameters of two layers (prefetch).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from supernode.errors import InputError
from supernode.spec.plan import ParallelPlan, PlanArrays, as_plan_arrays
from supernode.spec.recompute import is_full
from supernode.spec.workload import WorkloadSpec
from supernode.workload.activations import (
    activation_element_bytes,
    in_flight_layer_microbatches,
    layer_activation_bytes,
    predict_activation_memory,
)
from supernode.workload.params import count_params
from supernode.workload.stages import stage_layer_mix

__all__ = ["STATE_BYTES", "memory_bytes_per_gpu", "model_state_bytes", "params_per_gpu",
           "peak_memory_bytes_per_gpu",
           "predict_activation_memory", "predict_model_state_memory"]

STATE_BYTES: dict[str, tuple[int, int, int]] = {
    "bf16": (2, 4, 12),  # Megatron: bf16 params, fp32 main grads, fp32 master + Adam m, v
    "fp8": (2, 4, 12),  # Megatron/TE fp8 keeps bf16 params and fp32 grads: as bf16
    "fp16": (2, 2, 16),  # Megatron: fp16 params and grads, fp32 main grads + master + m + v
    "fp32": (4, 4, 8),  # plain fp32 Adam
    "fp16_params_fp16_grads_fp32_adam": (2, 2, 12),  # ZeRO (SC'20) K = 12
    "bf16_params_fp32_grads_fp32_adam": (2, 4, 12),
    "bf16_params_bf16_grads_fp32_adam": (2, 2, 12),
}
"""Bytes per parameter (weights W, gradients G, optimizer states K) by precision name."""


def state_bytes(precision: str, path: str = "precision") -> tuple[int, int, int]:
    """(W, G, K) bytes per parameter for ``precision``; InputError naming allowed ones."""
    if precision not in STATE_BYTES:
        raise InputError(path, f"unknown precision {precision!r}; allowed: "
                               f"{', '.join(STATE_BYTES)}")
    return STATE_BYTES[precision]


def plan_state_bytes(a: PlanArrays) -> tuple[Any, Any, Any]:
    """(W, G, K) bytes per parameter of the plans: gradients in fp32 (4 B) where
    ``grad_fp32``, else in the weights' 16-bit type; optimizer states as the precision."""
    wb, gb, kb = state_bytes(a.precision)
    grads = np.where(a.grad_fp32, max(gb, 4), wb)
    return wb, grads, kb


def model_state_bytes(params: Any, shard_group: Any, zero_stage: Any, precision: str,
                      distributed_optimizer: Any = False,
                      per_param: tuple[Any, Any, Any] | None = None) -> dict[str, Any]:
    """Weights, gradients and optimizer-state bytes per GPU for ``params`` parameters.

    ``shard_group`` is the data-parallel group the ZeRO stage shards over; the
    distributed optimizer counts as stage 1. ``per_param`` overrides the (W, G, K) bytes of
    ``precision``. Returns keys weights, gradients, optimizer_states, total (bytes; arrays
    broadcast).
    """
    wb, gb, kb = per_param if per_param is not None else state_bytes(precision)
    z = np.maximum(np.asarray(zero_stage), np.where(distributed_optimizer, 1, 0))
    d = np.asarray(shard_group, dtype=float)
    p = np.asarray(params, dtype=float)
    out = {"weights": wb * p / np.where(z >= 3, d, 1.0),
           "gradients": gb * p / np.where(z >= 2, d, 1.0),
           "optimizer_states": kb * p / np.where(z >= 1, d, 1.0)}
    out["total"] = out["weights"] + out["gradients"] + out["optimizer_states"]
    return out


def params_per_gpu(w: WorkloadSpec, plan: ParallelPlan | PlanArrays,
                   stage: str = "first") -> dict[str, Any]:
    """Parameters held by one GPU of the first or last pipeline stage.

    Keys: ``dense`` (everything but routed experts, sharded by tp) and ``expert``
    (routed experts, sharded by etp * ep). Norms and routers are replicated across TP.
    """
    a = as_plan_arrays(plan)
    c = count_params(w)
    n_dense, n_moe = stage_layer_mix(w, a.pp, a.vpp, stage, a.pp_layout)
    per_layer = (c.attention_per_layer / a.tp + c.norms_per_layer)
    dense = (n_dense + n_moe) * per_layer + n_dense * c.dense_mlp_per_layer / a.tp
    dense = dense + n_moe * (c.shared_experts_per_layer / a.tp + c.router_per_layer)
    expert = n_moe * c.experts * c.expert_per_layer / (a.etp * a.ep)
    if stage == "first":
        dense = dense + c.embedding / a.tp + c.position_embedding
    last_extra = c.final_norm + (c.lm_head / a.tp if c.lm_head else
                                 np.where(a.pp > 1, c.embedding / a.tp, 0.0))
    # the last stage holds the output layer; with pp == 1 the first stage is also the last
    dense = dense + (last_extra if stage == "last" else np.where(a.pp == 1, last_extra, 0.0))
    return {"dense": dense, "expert": expert}


def _stage_breakdown(w: WorkloadSpec, a: PlanArrays, stage: str) -> dict[str, Any]:
    """Memory components (bytes) of one GPU of the first or last pipeline stage."""
    e = activation_element_bytes(a.precision)
    p = params_per_gpu(w, a, stage)
    dp_group = a.dp * a.cp
    per_param = plan_state_bytes(a)
    dense = model_state_bytes(p["dense"], dp_group, a.zero, a.precision, per_param=per_param)
    expert = model_state_bytes(p["expert"], a.edp, a.zero, a.precision, per_param=per_param)
    out = {k: dense[k] + expert[k] for k in ("weights", "gradients", "optimizer_states")}

    n_dense, n_moe = stage_layer_mix(w, a.pp, a.vpp, stage, a.pp_layout)
    act_dense, act_moe = layer_activation_bytes(w, a), layer_activation_bytes(w, a, True)
    per_layer = (n_dense * act_dense + n_moe * act_moe) / np.maximum(n_dense + n_moe, 1)
    sets = in_flight_layer_microbatches(w, a, stage)
    worst_full = np.maximum(layer_activation_bytes(w, a, False, 0),
                            layer_activation_bytes(w, a, True, 0) if w.moe else 0.0)
    out["activations"] = sets * per_layer + np.where(is_full(a.recompute), worst_full, 0.0)

    t, sp_div = a.tp.astype(float), np.where(a.sp, a.tp, 1).astype(float)
    tokens = a.micro_batch * (w.seq_len / a.cp)
    is_last = (stage == "last") | (a.pp == 1)
    logits = tokens * (4.0 * w.vocab / t + 2.0 * e * w.hidden / sp_div)
    out["output_logits"] = np.where(is_last, logits, 0.0)

    buffers = np.where(a.sp, tokens * e * w.hidden, 0.0)  # all-gathered sequence (TP+SP)
    buffers = buffers + np.where(a.pp > 1, 4.0 * tokens * e * w.hidden / sp_div, 0.0)
    if w.moe is not None:
        copies = w.moe.top_k * (w.moe.capacity_factor or 1.0) * w.moe.token_imbalance
        buffers = buffers + np.where(a.ep > 1, 2.0 * tokens / t * copies * e * w.hidden, 0)
    # ZeRO-3 gathers one layer's parameters ahead of use and keeps the next in flight (2
    # layers): this GPU's shard of them, the routed experts of its expert-parallel rank only
    c = count_params(w)
    moe_params = (c.shared_experts_per_layer / t + c.router_per_layer
                  + c.experts * c.expert_per_layer / (a.etp * a.ep))
    layer_params = c.attention_per_layer / t + np.maximum(c.dense_mlp_per_layer / t,
                                                          moe_params if w.moe else 0.0)
    buffers = buffers + np.where(a.zero >= 3, 2.0 * layer_params * STATE_BYTES[
        a.precision][0], 0.0)
    out["comm_buffers"] = buffers
    out["total"] = sum(out[k] for k in ("weights", "gradients", "optimizer_states",
                                        "activations", "output_logits", "comm_buffers"))
    return out


def memory_bytes_per_gpu(w: WorkloadSpec, plan: ParallelPlan | PlanArrays) -> dict[str, Any]:
    """Peak memory of the busiest GPU (first or last pipeline stage), by component (bytes).

    Keys: weights, gradients, optimizer_states, activations, output_logits, comm_buffers,
    total (all bytes), and ``peak_stage`` (0 or pp - 1, the stage the breakdown is for).
    Allocator fragmentation and the CUDA context are not included.
    """
    a = as_plan_arrays(plan)
    first, last, use_first = _end_stages(w, a)
    out = {k: np.where(use_first, first[k], last[k]) for k in first}
    out["peak_stage"] = np.where(use_first, 0, a.pp - 1)
    return out


def _end_stages(w: WorkloadSpec, a: PlanArrays) -> tuple[dict[str, Any], dict[str, Any], Any]:
    """The first and last stages' breakdowns, and where the first is the busier one."""
    state_bytes(a.precision)
    first, last = _stage_breakdown(w, a, "first"), _stage_breakdown(w, a, "last")
    return first, last, first["total"] >= last["total"]


def peak_memory_bytes_per_gpu(w: WorkloadSpec, plan: ParallelPlan | PlanArrays) -> Any:
    """``memory_bytes_per_gpu(w, plan)["total"]`` alone (bytes): the busiest stage's peak,
    without selecting every component (the planner's memory grid needs only this)."""
    first, last, use_first = _end_stages(w, as_plan_arrays(plan))
    return np.where(use_first, first["total"], last["total"])


def predict_model_state_memory(case: dict[str, Any]) -> float:
    """Predict ``measured.bytes_per_gpu`` of a ``model_state_memory`` validation case.

    Fields: params, dp, zero_stage, precision (a :data:`STATE_BYTES` name); optional
    distributed_optimizer. Parameters, gradients and optimizer states only.
    """
    try:
        params, dp, stage = float(case["params"]), int(case["dp"]), int(case["zero_stage"])
        precision = case["precision"]
    except KeyError as exc:
        raise InputError(str(exc.args[0]), "required field of a model_state_memory case") from None
    except (TypeError, ValueError) as exc:
        raise InputError("", f"bad model_state_memory case: {exc}") from None
    if not 0 <= stage <= 3:
        raise InputError("zero_stage", f"must be 0, 1, 2 or 3, got {stage}")
    if dp < 1 or params <= 0:
        raise InputError("dp" if dp < 1 else "params", "must be positive")
    out = model_state_bytes(params, dp, stage, precision,
                            bool(case.get("distributed_optimizer", False)))
    return float(out["total"])

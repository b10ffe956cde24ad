"""Floating-point operations of transformer training, per token, per step and per GPU.

Conventions (all results in FLOPs):

* A matmul of ``(m x k) @ (k x n)`` costs ``2 m n k`` (one multiply, one add).
  Only matmuls are counted; norms, softmax, activations and biases are not (as in
  Megatron-LM and PaLM).
* Backward = 2 x forward (gradients of inputs and of weights), so training = 3 x forward
  (Narayanan et al., SC'21, §5.1).
* The attention core (``Q K^T`` and ``softmax(.) V``) costs ``2 * s * a * (d_qk + d_v)``
  per token and layer times ``causal_attention_factor``: **1.0 counts the full s x s
  square** (Megatron's 72 B s l h^2 formula and PaLM's ``12 l h s`` term, used for published
  MFU), **0.5 counts only the causal lower triangle** (what a causal FlashAttention
  kernel executes), and :data:`EXECUTED` counts exactly the keys each query attends to
  (the causal half, or its sliding window on windowed layers). Every function takes the
  factor; the default is 1.0. The estimate reports MFU/HFU on executed FLOPs, so that
  they can never exceed 1.
* Model FLOPs (for MFU) exclude recomputation; hardware FLOPs (for HFU) add it: full
  recompute repeats every layer's forward (not the output layer), selective recompute
  repeats the attention core (Korthikanti et al., MLSys'23, §5).

Arguments named ``seq_len``, ``micro_batch`` ... accept numpy arrays and broadcast.
"""

from __future__ import annotations

from typing import Any, Final, Literal

import numpy as np

from supernode.spec.plan import ParallelPlan, PlanArrays, as_plan_arrays
from supernode.spec.recompute import is_full, recompute_mask, recomputes
from supernode.spec.workload import WorkloadSpec
from supernode.workload.activations import full_recompute_share
from supernode.workload.params import attention_matrix_params, mlp_matrix_params, router_params
from supernode.workload.stages import layers_per_gpu_max

#: ``causal_attention_factor`` value: count the attention FLOPs a causal (windowed) kernel
#: executes, from :meth:`~supernode.spec.workload.WorkloadSpec.attended_keys`.
EXECUTED: Final = "executed"
#: A ``causal_attention_factor``: the share of the s x s square counted, or :data:`EXECUTED`.
AttentionFactor = float | Literal["executed"]


def _recompute_mask(recompute: Any) -> np.ndarray:
    """A recompute label (mode or ``+``-joined modules) or masks, as an integer array."""
    if isinstance(recompute, str):
        return np.asarray(recompute_mask(recompute))
    return np.asarray(recompute)


def layer_forward_flops_per_token(w: WorkloadSpec, seq_len: Any = None,
                                  causal_attention_factor: AttentionFactor = 1.0) -> dict[str, Any]:
    """Forward FLOPs per token of one layer, by part.

    Keys: ``attention_projections`` (Q/K/V/O or MLA projections), ``attention_core``
    (scores and context, scaled by ``causal_attention_factor``), ``dense_mlp`` (a dense
    layer's MLP), ``moe_mlp`` (top_k + shared experts + router; 0 for a dense model).
    """
    s = w.seq_len if seq_len is None else np.asarray(seq_len)
    keys = w.attended_keys(s) if causal_attention_factor == EXECUTED else \
        s * causal_attention_factor
    core = 2.0 * keys * w.n_heads * (w.qk_head_dim + w.v_head_dim)
    moe = 0.0
    if w.moe is not None:
        expert = mlp_matrix_params(w, w.expert_ffn_hidden)
        moe = 2.0 * ((w.moe.top_k + w.moe.shared_experts) * expert + router_params(w))
    return {
        "attention_projections": 2.0 * attention_matrix_params(w),
        "attention_core": core,
        "dense_mlp": 2.0 * mlp_matrix_params(w, w.ffn_hidden),
        "moe_mlp": moe,
    }


def forward_flops_per_token(w: WorkloadSpec, seq_len: Any = None,
                            causal_attention_factor: AttentionFactor = 1.0) -> dict[str, Any]:
    """Forward FLOPs per token of the whole model, by part, summed over layers.

    Keys: ``attention_projections``, ``attention_core``, ``mlp`` (dense and MoE layers),
    ``layers`` (sum of the three), ``lm_head`` (``2 h V``; the input embedding is a
    lookup, 0 FLOPs), ``total``.
    """
    p = layer_forward_flops_per_token(w, seq_len, causal_attention_factor)
    layers = w.layers
    out = {
        "attention_projections": layers * p["attention_projections"],
        "attention_core": layers * p["attention_core"],
        "mlp": w.dense_layers * p["dense_mlp"] + w.moe_layers * p["moe_mlp"],
        "lm_head": 2.0 * w.hidden * w.vocab,
    }
    out["layers"] = out["attention_projections"] + out["attention_core"] + out["mlp"]
    out["total"] = out["layers"] + out["lm_head"]
    return out


def model_flops_per_token(w: WorkloadSpec, seq_len: Any = None,
                          causal_attention_factor: AttentionFactor = 1.0) -> Any:
    """Training model FLOPs per token (forward + backward = 3 x forward), for MFU."""
    return 3.0 * forward_flops_per_token(w, seq_len, causal_attention_factor)["total"]


def recompute_flops_per_token(w: WorkloadSpec, recompute: Any, seq_len: Any = None,
                              causal_attention_factor: AttentionFactor = 1.0,
                              full_share: Any = 1.0) -> Any:
    """Extra forward FLOPs per token that activation recomputation adds.

    ``recompute``: a mode or module label, or an array of masks (:mod:`supernode.spec.
    recompute`). Full repeats every layer's forward (Narayanan et al. SC'21 Eq. 3: 4 x
    instead of 3 x), on ``full_share`` of the layers (``--recompute-num-layers``); each
    recomputed module repeats its own matmuls: ``core_attn`` the attention core (Korthikanti
    et al. MLSys'23 §5), ``mla_up_proj`` MLA's up-projections, ``mlp`` a dense layer's MLP,
    ``moe`` a MoE layer's experts and router, ``shared_experts`` the shared experts
    (``layernorm`` and ``moe_act`` are not matmuls).
    """
    f = forward_flops_per_token(w, seq_len, causal_attention_factor)
    mask = _recompute_mask(recompute)
    up = 0.0
    if w.mla is not None:
        x = w.mla
        up = 2.0 * w.n_heads * ((x.q_lora_rank or w.hidden) * (x.qk_nope_head_dim
                              + x.qk_rope_head_dim)
                              + x.kv_lora_rank * (x.qk_nope_head_dim + x.v_head_dim))
    layer = layer_forward_flops_per_token(w, seq_len, causal_attention_factor)
    shared = 0.0
    if w.moe is not None and w.moe.shared_experts:
        shared = 2.0 * w.moe.shared_experts * mlp_matrix_params(w, w.expert_ffn_hidden)
    parts = {"core_attn": f["attention_core"], "mla_up_proj": w.layers * up,
             "mlp": w.dense_layers * layer["dense_mlp"], "moe": w.moe_layers * layer["moe_mlp"],
             "shared_experts": w.moe_layers * shared}
    modules = sum(np.where(recomputes(mask, name), flops, 0.0) for name, flops in parts.items())
    # the MoE block's recompute already repeats its shared experts
    modules = modules - np.where(recomputes(mask, "moe") & recomputes(mask, "shared_experts"),
                                 parts["shared_experts"], 0.0)
    return np.where(is_full(mask), np.asarray(full_share) * f["layers"], modules)


def hardware_flops_per_token(w: WorkloadSpec, recompute: Any = "none", seq_len: Any = None,
                             causal_attention_factor: AttentionFactor = 1.0,
                             full_share: Any = 1.0) -> Any:
    """Training FLOPs per token actually executed, including recomputation (for HFU)."""
    return (model_flops_per_token(w, seq_len, causal_attention_factor)
            + recompute_flops_per_token(w, recompute, seq_len, causal_attention_factor,
                                        full_share))


def model_flops_per_step(w: WorkloadSpec, global_batch_sequences: Any, seq_len: Any = None,
                         causal_attention_factor: AttentionFactor = 1.0) -> Any:
    """Model FLOPs of one optimizer step of ``global_batch_sequences`` sequences."""
    s = w.seq_len if seq_len is None else np.asarray(seq_len)
    return (np.asarray(global_batch_sequences) * s
            * model_flops_per_token(w, s, causal_attention_factor))


def hardware_flops_per_step(w: WorkloadSpec, global_batch_sequences: Any, recompute: Any = "none",
                            seq_len: Any = None, causal_attention_factor: AttentionFactor = 1.0,
                            full_share: Any = 1.0) -> Any:
    """Hardware FLOPs (with recomputation) of one optimizer step."""
    s = w.seq_len if seq_len is None else np.asarray(seq_len)
    return (np.asarray(global_batch_sequences) * s
            * hardware_flops_per_token(w, recompute, s, causal_attention_factor, full_share))


def megatron_flops_per_step(batch: Any, seq_len: Any, layers: Any, hidden: Any, vocab: Any,
                            full_recompute: bool = False) -> Any:
    """Megatron-LM closed form for a dense GPT (MLP 4h, MHA), FLOPs per step.

    ``72 B s l h^2 (1 + s/(6h) + V/(12 l h))``, or with full recompute
    ``96 B s l h^2 (1 + s/(6h) + V/(16 l h))`` (Narayanan et al., SC'21, Eq. 3).
    """
    b, s, n, h, v = (np.asarray(x, dtype=float) for x in (batch, seq_len, layers, hidden, vocab))
    if full_recompute:
        return 96.0 * b * s * n * h**2 * (1 + s / (6 * h) + v / (16 * n * h))
    return 72.0 * b * s * n * h**2 * (1 + s / (6 * h) + v / (12 * n * h))


def palm_flops_per_token(n_params: Any, layers: Any, hidden: Any, seq_len: Any) -> Any:
    """PaLM model FLOPs per token, ``6 N + 12 l h s`` (Chowdhery et al. 2022, App. B).

    Equals :func:`model_flops_per_token` (full-square attention) minus ``6 x`` the
    parameters that do no matmul (input embedding when untied, norms, biases, learned
    positions); ``N`` is the (active) parameter count.
    """
    return 6.0 * np.asarray(n_params) + 12.0 * np.asarray(layers) * hidden * np.asarray(seq_len)


def stage_flops_per_microbatch(w: WorkloadSpec, plan: ParallelPlan | PlanArrays,
                               causal_attention_factor: AttentionFactor = 1.0) -> dict[str, Any]:
    """FLOPs one GPU of the busiest pipeline stage executes per micro-batch.

    Keys (FLOPs per GPU per micro-batch): ``layers_forward``, ``layers_backward``
    (2 x forward), ``layers_recompute``, ``head_forward`` and ``head_backward`` (output
    layer, last stage only). Layer work is split evenly by ``tp * cp``; expert work is
    assumed balanced across ``ep`` ranks, so the per-GPU share is the same. The busiest
    GPU holds ``vpp * ceil(layers / (pp * vpp))`` layers, each costed as the heavier of a
    dense and a MoE layer. Multiply by :attr:`PlanArrays.microbatches` for a step.
    """
    a = as_plan_arrays(plan)
    p = layer_forward_flops_per_token(w, w.seq_len, causal_attention_factor)
    mlp = max(p["dense_mlp"] if w.dense_layers else 0.0, p["moe_mlp"] if w.moe_layers else 0.0)
    layer = p["attention_projections"] + p["attention_core"] + mlp
    tokens_per_gpu = a.micro_batch * w.seq_len / (a.tp * a.cp)
    layers = layers_per_gpu_max(w, a.pp, a.vpp, a.pp_layout)
    fwd = tokens_per_gpu * layers * layer
    share = full_recompute_share(w, a)
    per_token = recompute_flops_per_token(w, a.recompute, w.seq_len, causal_attention_factor)
    recompute = np.where(is_full(a.recompute), share * fwd,
                         tokens_per_gpu * layers / w.layers * per_token)
    head = tokens_per_gpu * 2.0 * w.hidden * w.vocab
    return {"layers_forward": fwd, "layers_backward": 2.0 * fwd, "layers_recompute": recompute,
            "head_forward": head, "head_backward": 2.0 * head}

"""Compute time of one micro-batch on each pipeline GPU (seconds, vectorised over plans).

Per layer, every operation at its own ceiling (:mod:`supernode.estimate.kernels`):

* **GEMMs** of :mod:`supernode.workload.shapes` (projections, MLA, dense MLP, router,
  grouped experts, shared experts, output layer) at the part's measured matmul ceiling
  for their precision and shape, each pass no faster than its own HBM traffic (the
  weight-gradient GEMM accumulates into the gradient buffer).
* **Attention core** at the kernel's measured rate for the head size, mask and the
  length of the calls it runs (:mod:`supernode.estimate.attention`): ``mb s / cp`` local
  queries, each over ``s / 2`` causal keys on average (context parallelism splits the
  work ``cp`` ways; its exchange type decides the calls' lengths) or over its sliding
  window on windowed layers.
* **Streaming work** at HBM speed: per token and layer the forward reads/writes ``11 h``
  elements outside the MLP (two norms, two fused bias-dropout-adds; ``/ tp`` with
  sequence parallelism), rotary embedding on queries and keys, MLA's latent norms,
  ``3 f`` (gated) or ``2 f`` in the MLP activation; a MoE layer adds the router, the token
  permutation and un-permutation (``(3 top_k + 1) h``) and the expert activations; FP8
  adds casts (2 B read, 1 B written): forward only of the attention output (Transformer
  Engine fuses the other inputs' casts into the norm and activation kernels), backward of
  every FP8 GEMM's output gradient. The cross-entropy streams the bytes per vocabulary
  entry and token of the stack's implementation (:func:`cross_entropy_bytes`: 52 for
  Megatron-Core's unfused default, 10 for a fused kernel). Counts from Megatron-LM's fused
  kernels (Korthikanti et al., MLSys'23, §4 lists the same tensors); backward = 2 x.
  These are the hand-fused (Transformer Engine) and compiled (torch.compile, XLA) stacks'
  counts; an eager stack runs each operator as its own kernel and moves more
  (:func:`elementwise_cost`: norms, gated activations and rotary).

Recomputation adds the forward of each recomputed module
(:func:`supernode.estimate.recompute_cost.module_forward_s`:
Megatron-Core's ``core_attn``, ``layernorm``, ``mla_up_proj``, ``mlp``, ``moe``,
``moe_act``, ``shared_experts``), or the whole layer forward on the layers full
recomputation covers.
The first GPU's stage also holds the embedding, the last the output layer and loss.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from supernode.estimate.attention import attention_core_s, cp_merge_s
from supernode.estimate.calibration import Calibration
from supernode.estimate.elementwise import (
    NORM_ELEMENTS_PER_HIDDEN,
    cross_entropy_bytes,
    elementwise_cost,
)
from supernode.estimate.kernels import (
    gemm_pass_s,
    gemm_precision,
    stream_s,
)
from supernode.estimate.recompute_cost import module_forward_s, recomputed_forward_s
from supernode.estimate.system import SystemModel
from supernode.spec.plan import PlanArrays
from supernode.spec.recompute import is_full
from supernode.spec.workload import WorkloadSpec
from supernode.workload.activations import activation_element_bytes, full_recompute_share
from supernode.workload.shapes import head_gemms, layer_gemms, local_tokens
from supernode.workload.stages import stage_layer_mix

#: Element reads+writes per token and layer outside the MLP, forward (see module doc).
NON_MLP_ELEMENTS_PER_HIDDEN = 11.0
#: Bytes an FP8 cast moves per element (read BF16, write FP8).
FP8_CAST_BYTES = 3.0


@dataclass(frozen=True)
class LayerTime:
    """Seconds of one layer and micro-batch on one GPU, by pass (arrays); ``recompute_s``:
    what the plans' recomputed modules (not full recomputation) run forward again."""

    forward_s: Any
    backward_s: Any
    core_forward_s: Any
    core_backward_s: Any
    recompute_s: Any


@dataclass(frozen=True)
class MicrobatchCompute:
    """Seconds per micro-batch on the busiest GPU (arrays broadcast over plans).

    ``stage_s`` holds forward + backward + recompute per micro-batch of the first, middle
    and last pipeline GPUs; the busiest sets the pace (``total_s``), the mean over the
    pipeline's GPUs is ``mean_stage_s``. ``layers`` and ``layer_forward_s`` describe the
    busiest GPU's transformer layers (count, mean forward seconds of one).
    """

    forward_s: Any
    backward_s: Any
    recompute_s: Any
    attention_core_forward_s: Any
    attention_core_backward_s: Any
    stage_s: dict[str, Any]
    mean_stage_s: Any
    layers: Any
    layer_forward_s: Any

    @property
    def total_s(self) -> Any:
        """Forward + backward + recomputation of one micro-batch (seconds)."""
        return self.forward_s + self.backward_s + self.recompute_s


def _stream_elements(w: WorkloadSpec, a: PlanArrays, moe_layer: bool) -> Any:
    """Elements one token streams through HBM in one layer's forward (see module doc),
    each family at its stack's traffic (:func:`elementwise_cost`)."""
    t = a.tp.astype(float)
    sp_div = np.where(a.sp, t, 1.0)
    gate = 3.0 if w.gated_mlp else 2.0
    cost = elementwise_cost(w)
    elements = (NON_MLP_ELEMENTS_PER_HIDDEN + (cost.norm - 1.0) * NORM_ELEMENTS_PER_HIDDEN
                ) * w.hidden / sp_div
    if w.mla is not None:
        x = w.mla
        rope = 2.0 * (w.n_heads + 1) * x.qk_rope_head_dim / t
        elements = (elements + 2.0 * ((x.q_lora_rank or 0) + x.kv_lora_rank) * cost.norm
                    + rope * cost.rotary)
    elif w.position_embedding == "rotary":
        elements = elements + 2.0 * (w.n_heads + w.n_kv_heads) * w.qk_head_dim / t * cost.rotary
    act = gate * cost.activation
    if moe_layer and w.moe is not None:
        moe = w.moe
        routed = moe.top_k * moe.token_imbalance
        elements = (elements + (3.0 * routed + 1.0) * w.hidden / t
                    + act * w.expert_ffn_hidden * (routed + moe.shared_experts) / t
                    + 4.0 * moe.experts / t)
    else:
        elements = elements + act * w.ffn_hidden / t
    return elements


def layer_time(w: WorkloadSpec, a: PlanArrays, system: SystemModel, cal: Calibration,
               moe_layer: bool) -> LayerTime:
    """Seconds of one dense or MoE layer per micro-batch on one GPU, by pass."""
    gemms = layer_gemms(w, a, moe_layer)
    gemm_f, gemm_b = gemm_pass_s(gemms, system, cal, a.precision, grad_buffer_bytes(a))
    m = local_tokens(w, a)
    e = activation_element_bytes(a.precision)
    moved = m * _stream_elements(w, a, moe_layer) * e
    cast_f: Any = 0.0
    cast_b: Any = 0.0
    if a.precision == "fp8":
        fp8 = [g for g in gemms if gemm_precision(g, a.precision) == "fp8"]
        cast_f = sum(FP8_CAST_BYTES * np.asarray(g.m, dtype=float) * g.k * g.count
                     for g in fp8 if g.name == "attn_out")
        cast_b = sum(FP8_CAST_BYTES * np.asarray(g.m, dtype=float) * g.n * g.count
                     for g in fp8)
    memory_s = stream_s(moved, system, cal)
    cast_f, cast_b = stream_s(cast_f, system, cal), stream_s(cast_b, system, cal)
    core_f, core_b = attention_core_s(w, a, system, w.software.attention_kernel)
    merge_f, merge_b = cp_merge_s(w, a, system, cal)  # PyTorch CP's eager merges
    core_f, core_b = core_f + merge_f, core_b + merge_b
    forward = gemm_f + core_f + memory_s + cast_f
    backward = gemm_b + core_b + 2.0 * memory_s + cast_b
    total = recomputed_forward_s(
        a, module_forward_s(w, a, system, cal, gemms, moe_layer, core_f))
    return LayerTime(forward, backward, core_f, core_b, total)


def _attention_mix(w: WorkloadSpec, a: PlanArrays) -> list[tuple[float, Any, Any]]:
    """(share of layers, keys per query, executed forward FLOPs of one layer on one GPU
    per micro-batch) of the full and the windowed attention layers."""
    m = local_tokens(w, a)
    heads = w.n_heads / a.tp.astype(float)
    return [(share, keys, 2.0 * m * keys * heads * (w.qk_head_dim + w.v_head_dim))
            for share, keys in w.attention_key_mix()]


def attention_core_flops(w: WorkloadSpec, a: PlanArrays) -> Any:
    """Executed attention-core FLOPs of one layer's forward on one GPU per micro-batch
    (mean over full and windowed layers): ``mb s / cp`` local queries over ``s / 2``
    causal keys each, ``a / tp`` heads."""
    return sum(share * flops for share, _, flops in _attention_mix(w, a))


def head_time(w: WorkloadSpec, a: PlanArrays, system: SystemModel, cal: Calibration
              ) -> tuple[Any, Any]:
    """(forward, backward) seconds of the output layer and loss per micro-batch."""
    gemm_f, gemm_b = gemm_pass_s(head_gemms(w, a), system, cal, a.precision,
                                 grad_buffer_bytes(a))
    entries = w.vocab * local_tokens(w, a) / a.tp
    loss_f, loss_b = (stream_s(b * entries, system, cal) for b in cross_entropy_bytes(w))
    return gemm_f + loss_f, gemm_b + loss_b


def grad_buffer_bytes(a: PlanArrays) -> Any:
    """Bytes per element of the weight-gradient buffer GEMMs accumulate into."""
    return np.where(a.grad_fp32, 4.0, 2.0)


def microbatch_compute(w: WorkloadSpec, a: PlanArrays, system: SystemModel,
                       cal: Calibration) -> MicrobatchCompute:
    """Compute seconds of one micro-batch on each pipeline GPU, and the busiest's parts."""
    dense = layer_time(w, a, system, cal, moe_layer=False)
    moe = layer_time(w, a, system, cal, moe_layer=True) if w.moe else dense
    head_f, head_b = head_time(w, a, system, cal)
    full_share = full_recompute_share(w, a)
    parts: dict[str, tuple[Any, ...]] = {}
    for stage in ("first", "middle", "last"):
        n_dense, n_moe = (np.asarray(x, dtype=float)
                          for x in stage_layer_mix(w, a.pp, a.vpp, stage, a.pp_layout))

        def mix(attr: str, nd: Any = n_dense, nm: Any = n_moe) -> Any:
            return nd * getattr(dense, attr) + nm * getattr(moe, attr)

        fwd, bwd = mix("forward_s"), mix("backward_s")
        core_f, core_b = mix("core_forward_s"), mix("core_backward_s")
        recompute = np.where(is_full(a.recompute), full_share * fwd, mix("recompute_s"))
        if stage == "last":
            fwd, bwd = fwd + head_f, bwd + head_b
        parts[stage] = (fwd, bwd, recompute, core_f, core_b, n_dense + n_moe)
    totals = {s: p[0] + p[1] + p[2] for s, p in parts.items()}
    middle = np.asarray(a.pp) >= 3
    totals["middle"] = np.where(middle, totals["middle"], 0.0)
    last_busiest = totals["last"] >= np.maximum(totals["first"], totals["middle"])
    first_busiest = ~last_busiest & (totals["first"] >= totals["middle"])

    def busiest(i: int) -> Any:
        return np.where(last_busiest, parts["last"][i], np.where(
            first_busiest, parts["first"][i], parts["middle"][i]))

    pp = np.asarray(a.pp, dtype=float)
    edges = np.where(pp >= 2, totals["first"] + totals["last"], totals["first"])
    mean = (edges + np.maximum(pp - 2.0, 0.0) * totals["middle"]) / pp
    layers = busiest(5)
    layer_fwd = (busiest(0) - np.where(last_busiest, head_f, 0.0)) / np.maximum(layers, 1.0)
    return MicrobatchCompute(busiest(0), busiest(1), busiest(2), busiest(3), busiest(4),
                             totals, mean, layers, layer_fwd)


def optimizer_step_s(params_per_gpu: Any, shard: Any, system: SystemModel,
                     cal: Calibration) -> Any:
    """Seconds of the Adam update: ~32 bytes moved per (sharded) parameter at HBM speed.

    fp32 master weight, m and v are read and written (24 B), the fp32 gradient read (4 B)
    and the bf16 weight written back (2 B), plus the gradient-norm read (~2 B).
    """
    return stream_s(32.0 * params_per_gpu / shard, system, cal)

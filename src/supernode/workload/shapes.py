"""The matmuls one GPU runs per layer and micro-batch: their shapes after sharding.

Every GEMM is ``(m x k) @ (k x n)``, ``2 m n k`` FLOPs, forward pass, on one GPU; its
backward is two GEMMs of the same three dimensions permuted (input gradient and weight
gradient), so a shape-symmetric cost model charges the backward exactly twice the forward.
``m`` is tokens (the local sequence chunk ``micro_batch * seq_len / cp``), ``n`` and ``k``
are weight dimensions after tensor parallelism (Megatron column-parallel splits ``n``,
row-parallel ``k``). Shapes follow Megatron-Core:

* **attention**, MHA/GQA: fused QKV (``n = (a + 2 kv) d / t``), output projection
  (``k = a d_v / t``). **MLA** (DeepSeek-V2/V3): the query and joint KV down-projections
  are replicated on every TP rank (``n = q_lora`` and ``kv_lora + d_rope``), the
  up-projections are column-parallel, the output row-parallel.
* **dense MLP**: FC1 (``n = f / t``, twice for a gated MLP) and FC2 (``k = f / t``).
* **MoE MLP**: the router (``n = experts``, kept in BF16), then grouped expert GEMMs:
  each GPU holds ``experts / ep`` experts and runs them on the token copies routed to it.
  Expert tensor parallelism ``etp`` splits the expert width and gathers the tokens of the
  ``etp`` ranks, so one GPU multiplies ``m = mb s top_k etp / (t cp)`` copies in all, i.e.
  ``m_e = m ep / experts`` per local expert (balanced; ``token_imbalance`` scales the
  busiest rank). Shared experts run like a dense MLP of width ``shared x f_e`` over ``t``.
* **output layer**: ``n = V / t`` on the last stage, in BF16 (Transformer Engine runs only
  the transformer layers' linears in FP8).

All sizes broadcast over numpy arrays of plan fields.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from supernode.spec.plan import PlanArrays
from supernode.spec.workload import WorkloadSpec

GemmPrecision = Literal["layer", "bf16"]


@dataclass(frozen=True)
class Gemm:
    """``count`` GEMMs of ``(m x k) @ (k x n)`` per layer and micro-batch, forward.

    ``precision``: ``layer`` runs at the plan's matmul precision (FP8 with fp8), ``bf16``
    always in BF16. ``count`` may be fractional (an average over layers) or an array.
    """

    name: str
    m: Any
    n: Any
    k: Any
    count: Any = 1.0
    precision: GemmPrecision = "layer"

    @property
    def flops(self) -> Any:
        """Forward FLOPs of all ``count`` GEMMs (``2 m n k`` each)."""
        return 2.0 * np.asarray(self.m, dtype=float) * self.n * self.k * self.count


def local_tokens(w: WorkloadSpec, a: PlanArrays) -> Any:
    """Tokens of the local sequence chunk one GPU holds per micro-batch (``mb s / cp``)."""
    return a.micro_batch * (w.seq_len / a.cp)


def attention_gemms(w: WorkloadSpec, a: PlanArrays) -> list[Gemm]:
    """Projections of one attention block (see the module docstring)."""
    m, t, h = local_tokens(w, a), a.tp.astype(float), w.hidden
    heads = w.n_heads / t
    if w.mla is not None:
        x = w.mla
        out = [Gemm("kv_down", m, x.kv_lora_rank + x.qk_rope_head_dim, h),
               Gemm("kv_up", m, heads * (x.qk_nope_head_dim + x.v_head_dim), x.kv_lora_rank),
               Gemm("attn_out", m, h, heads * x.v_head_dim)]
        q_in = h
        if x.q_lora_rank is not None:
            out.append(Gemm("q_down", m, x.q_lora_rank, h))
            q_in = x.q_lora_rank
        out.append(Gemm("q_up", m, heads * (x.qk_nope_head_dim + x.qk_rope_head_dim), q_in))
        return out
    qkv = (w.n_heads + 2 * w.n_kv_heads) * w.qk_head_dim / t
    return [Gemm("qkv", m, qkv, h), Gemm("attn_out", m, h, heads * w.v_head_dim)]


def mlp_gemms(w: WorkloadSpec, a: PlanArrays, width: Any, tp: Any, m: Any = None,
              count: Any = 1.0, name: str = "mlp") -> list[Gemm]:
    """FC1 and FC2 of an MLP of inner ``width`` split ``tp`` ways, on ``m`` tokens."""
    m = local_tokens(w, a) if m is None else m
    gate = 2.0 if w.gated_mlp else 1.0
    f = np.asarray(width, dtype=float) / tp
    return [Gemm(f"{name}_fc1", m, gate * f, w.hidden, count),
            Gemm(f"{name}_fc2", m, w.hidden, f, count)]


def expert_tokens_per_gpu(w: WorkloadSpec, a: PlanArrays) -> Any:
    """Routed token copies one GPU's experts multiply per micro-batch (busiest rank)."""
    if w.moe is None:
        return np.zeros_like(a.tp, dtype=float)
    copies = local_tokens(w, a) * w.moe.top_k * a.etp / a.tp
    return copies * w.moe.token_imbalance


def moe_gemms(w: WorkloadSpec, a: PlanArrays) -> list[Gemm]:
    """Router, grouped routed-expert GEMMs and shared experts of one MoE layer."""
    assert w.moe is not None
    moe = w.moe
    m = local_tokens(w, a)
    local_experts = moe.experts / a.ep
    per_expert = expert_tokens_per_gpu(w, a) / local_experts
    out = [Gemm("router", m / a.tp, moe.experts, w.hidden, precision="bf16")]
    out += mlp_gemms(w, a, w.expert_ffn_hidden, a.etp, per_expert, local_experts, "expert")
    if moe.shared_experts:
        out += mlp_gemms(w, a, moe.shared_experts * w.expert_ffn_hidden, a.tp, m,
                         name="shared")
    return out


def layer_gemms(w: WorkloadSpec, a: PlanArrays, moe_layer: bool) -> list[Gemm]:
    """Every GEMM of one transformer layer (dense or MoE MLP) per micro-batch, forward."""
    mlp = moe_gemms(w, a) if (moe_layer and w.moe is not None) else \
        mlp_gemms(w, a, w.ffn_hidden, a.tp.astype(float))
    return attention_gemms(w, a) + mlp


def head_gemms(w: WorkloadSpec, a: PlanArrays) -> list[Gemm]:
    """The output layer (logits) on the last stage, per micro-batch, forward (BF16)."""
    return [Gemm("output", local_tokens(w, a), w.vocab / a.tp.astype(float), w.hidden,
                 precision="bf16")]

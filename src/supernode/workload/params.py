"""Exact parameter counts of a decoder-only transformer (dense, GQA, MLA, MoE).

Counts are element counts (parameters), Python ints. Matrix shapes follow the Megatron-LM
and Hugging Face implementations: attention Q/K/V/O projections (GQA shrinks K and V to
``kv_heads * head_dim``), a 2-matrix MLP ``h -> f -> h`` or a gated 3-matrix MLP
(SwiGLU, Shazeer 2020), one router ``h x E`` per MoE layer, two norms per block and a
final norm. DeepSeek-V3's multi-head latent attention follows its released
``modeling_deepseek.py`` (q_a/q_b, kv_a_with_mqa/kv_b projections and two latent norms).
"""

from __future__ import annotations

from dataclasses import dataclass

from supernode.spec.workload import WorkloadSpec


def _norm(w: WorkloadSpec, width: int) -> int:
    """Parameters of one norm over ``width`` elements: LayerNorm 2*width, RMSNorm width."""
    return 2 * width if w.norm == "layernorm" else width


def attention_matrix_params(w: WorkloadSpec) -> int:
    """Weight-matrix elements of one attention block (no biases, no norms).

    These are the parameters that take part in matmuls, so 2 FLOPs each per token.
    """
    h, a = w.hidden, w.n_heads
    if w.mla is not None:
        m = w.mla
        qk = m.qk_nope_head_dim + m.qk_rope_head_dim
        q = a * qk * (h if m.q_lora_rank is None else m.q_lora_rank)
        if m.q_lora_rank is not None:
            q += h * m.q_lora_rank  # q_a_proj
        kv = h * (m.kv_lora_rank + m.qk_rope_head_dim)  # kv_a_proj_with_mqa
        kv += m.kv_lora_rank * a * (m.qk_nope_head_dim + m.v_head_dim)  # kv_b_proj
        return q + kv + a * m.v_head_dim * h  # + o_proj
    d, kv_heads = w.qk_head_dim, w.n_kv_heads
    return h * a * d + 2 * h * kv_heads * d + a * d * h


def attention_params(w: WorkloadSpec) -> int:
    """All parameters of one attention block: matrices, biases, MLA latent norms.

    Excludes the pre-attention norm (counted in :func:`norm_params_per_layer`).
    """
    total = attention_matrix_params(w)
    if w.mla is not None:
        total += (w.mla.q_lora_rank or 0) + w.mla.kv_lora_rank  # q_a / kv_a RMSNorms
        return total
    if w.linear_bias:
        total += w.n_heads * w.qk_head_dim + 2 * w.n_kv_heads * w.qk_head_dim + w.hidden
    return total


def mlp_matrix_params(w: WorkloadSpec, ffn_hidden: int) -> int:
    """Weight-matrix elements of one MLP of inner width ``ffn_hidden``: 2hf, gated 3hf."""
    return (3 if w.gated_mlp else 2) * w.hidden * ffn_hidden


def mlp_params(w: WorkloadSpec, ffn_hidden: int) -> int:
    """All parameters of one MLP (matrices plus biases when ``linear_bias``)."""
    bias = ((2 if w.gated_mlp else 1) * ffn_hidden + w.hidden) if w.linear_bias else 0
    return mlp_matrix_params(w, ffn_hidden) + bias


def router_params(w: WorkloadSpec) -> int:
    """Parameters of one MoE router (a ``hidden x experts`` linear layer, no bias)."""
    return 0 if w.moe is None else w.hidden * w.moe.experts


def norm_params_per_layer(w: WorkloadSpec) -> int:
    """Parameters of the two pre-norms (attention, MLP) of one block."""
    return 2 * _norm(w, w.hidden)


@dataclass(frozen=True)
class ParamCounts:
    """Parameter counts of a workload, by component (elements)."""

    embedding: int
    position_embedding: int
    lm_head: int
    final_norm: int
    attention_per_layer: int
    norms_per_layer: int
    dense_mlp_per_layer: int
    expert_per_layer: int
    shared_experts_per_layer: int
    router_per_layer: int
    dense_layers: int
    moe_layers: int
    experts: int
    top_k: int

    @property
    def moe_mlp_per_layer(self) -> int:
        """All parameters of one MoE MLP: every expert, shared experts and the router."""
        return (self.experts * self.expert_per_layer + self.shared_experts_per_layer
                + self.router_per_layer)

    @property
    def moe_mlp_active_per_layer(self) -> int:
        """Parameters one token uses in a MoE MLP: top_k experts, shared experts, router."""
        return (self.top_k * self.expert_per_layer + self.shared_experts_per_layer
                + self.router_per_layer)

    @property
    def dense_layer(self) -> int:
        """Parameters of one dense block."""
        return self.attention_per_layer + self.norms_per_layer + self.dense_mlp_per_layer

    @property
    def moe_layer(self) -> int:
        """Parameters of one MoE block."""
        return self.attention_per_layer + self.norms_per_layer + self.moe_mlp_per_layer

    @property
    def non_layer(self) -> int:
        """Embeddings, output layer and final norm."""
        return self.embedding + self.position_embedding + self.lm_head + self.final_norm

    @property
    def total(self) -> int:
        """All parameters (tied embeddings counted once)."""
        return (self.dense_layers * self.dense_layer + self.moe_layers * self.moe_layer
                + self.non_layer)

    @property
    def active(self) -> int:
        """Parameters used per token: MoE layers count only top_k and shared experts."""
        active_moe = self.attention_per_layer + self.norms_per_layer + self.moe_mlp_active_per_layer
        return self.dense_layers * self.dense_layer + self.moe_layers * active_moe + self.non_layer

    @property
    def non_embedding(self) -> int:
        """All parameters except input/position embeddings and an untied output layer."""
        return self.total - self.embedding - self.position_embedding - self.lm_head


def count_params(w: WorkloadSpec) -> ParamCounts:
    """Count the parameters of ``w`` by component (see :class:`ParamCounts`)."""
    moe = w.moe
    return ParamCounts(
        embedding=w.vocab * w.hidden,
        position_embedding=w.seq_len * w.hidden if w.position_embedding == "learned" else 0,
        lm_head=0 if w.tied_embeddings else w.vocab * w.hidden,
        final_norm=_norm(w, w.hidden),
        attention_per_layer=attention_params(w),
        norms_per_layer=norm_params_per_layer(w),
        dense_mlp_per_layer=mlp_params(w, w.ffn_hidden),
        expert_per_layer=mlp_params(w, w.expert_ffn_hidden) if moe else 0,
        shared_experts_per_layer=moe.shared_experts * mlp_params(w, w.expert_ffn_hidden)
        if moe else 0,
        router_per_layer=router_params(w),
        dense_layers=w.dense_layers,
        moe_layers=w.moe_layers,
        experts=moe.experts if moe else 0,
        top_k=moe.top_k if moe else 0,
    )


def total_params(w: WorkloadSpec) -> int:
    """Total parameter count of ``w`` (elements)."""
    return count_params(w).total


def active_params(w: WorkloadSpec) -> int:
    """Parameters activated per token (elements); equals the total for a dense model."""
    return count_params(w).active


def matmul_params_per_token(w: WorkloadSpec) -> int:
    """Weight elements each token multiplies in one forward pass (average over layers).

    Attention and MLP matrices of every layer (MoE: top_k + shared experts + router)
    plus the output layer; excludes embeddings lookups, norms and biases. Each costs
    2 FLOPs per token in the forward pass.
    """
    c = count_params(w)
    dense = attention_matrix_params(w) + mlp_matrix_params(w, w.ffn_hidden)
    moe_mlp = 0
    if w.moe is not None:
        per_expert = mlp_matrix_params(w, w.expert_ffn_hidden)
        moe_mlp = (w.moe.top_k + w.moe.shared_experts) * per_expert + router_params(w)
    moe = attention_matrix_params(w) + moe_mlp
    return c.dense_layers * dense + c.moe_layers * moe + w.vocab * w.hidden

"""Schema of a training workload: a decoder-only transformer, dense or mixture-of-experts.

Sizes are counts (layers, heads, hidden width in elements, tokens); they carry no
physical unit. Attention is multi-head (MHA), grouped-query (GQA, ``kv_heads < heads``),
multi-query (``kv_heads: 1``) or DeepSeek's multi-head latent attention (``mla`` block),
with an explicit ``head_dim`` where it is not ``hidden / heads`` (Qwen3, GPT-OSS) and
optionally a sliding window on some layers. ``heads: null`` (not published) means heads of
the usual 128 dims (``hidden / 128``); attention FLOPs do not depend on the head count.
Cross-field rules (``heads % kv_heads == 0``, ``moe.top_k <= moe.experts`` ...) are checked
here; an error carries the dotted path of the field to change (``moe.top_k``).
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
from pydantic import Field, model_validator

from supernode.spec.base import StrictModel
from supernode.spec.model_errors import fail as _fail
from supernode.spec.model_errors import input_error_from_validation, validate_as
from supernode.spec.stack import Stack, StackSpec, resolve_stack

# Upper bounds of the sizes (counts), each far above any published model (Llama 3 405B:
# 126 layers, hidden 16,384, FFN 53,248, vocabulary 128,256; DeepSeek-V3: 256 experts) and
# low enough that products of them (parameters, FLOPs, bytes) stay exact in 64-bit
# integers: a typo or a hostile 1e30 is refused at load, not an overflow in the planner.
MAX_LAYERS = 2**14
MAX_WIDTH = 2**22          # hidden, ffn_hidden, expert_ffn_hidden, MLA ranks
MAX_HEADS = 2**16          # heads, kv_heads, head_dim and MLA per-head dims
MAX_VOCAB = 2**24
MAX_SEQ_LEN = 2**24        # tokens
MAX_EXPERTS = 2**16


class MoESpec(StrictModel):
    """Mixture-of-experts MLP replacing the dense MLP in some layers."""

    experts: int = Field(gt=0, le=MAX_EXPERTS, description="Routed experts per MoE layer.")
    top_k: int = Field(gt=0, le=MAX_EXPERTS, description="Routed experts each token is sent to.")
    shared_experts: int = Field(0, ge=0, le=MAX_EXPERTS,
                                description="Always-active shared experts per layer.")
    expert_ffn_hidden: int | None = Field(
        None, gt=0, le=MAX_WIDTH,
        description="Inner width of one expert MLP; null = the dense ffn_hidden.")
    capacity_factor: float | None = Field(
        None, gt=0, le=1024.0,
        description="Token capacity per expert relative to even load; null = dropless.")
    first_k_dense_layers: int = Field(
        0, ge=0, le=MAX_LAYERS,
        description="Leading layers with a dense MLP (DeepSeek first_k_dense_replace).")
    layer_frequency: int = Field(
        1, ge=1, le=MAX_LAYERS,
        description="After the dense prefix, layer i is MoE if i % layer_frequency == 0.")
    token_imbalance: float = Field(
        1.0, ge=1.0, le=64.0, description="Tokens of the busiest expert-parallel rank over the "
        "mean (1 = balanced, as benchmarks force it); the slowest rank sets the pace.")

    @model_validator(mode="after")
    def _check(self) -> MoESpec:
        if self.top_k > self.experts:
            raise _fail("top_k", f"top_k ({self.top_k}) must be <= experts ({self.experts})")
        return self


class MLASpec(StrictModel):
    """Multi-head latent attention (DeepSeek-V2/V3): low-rank Q and joint KV compression."""

    q_lora_rank: int | None = Field(
        None, gt=0, le=MAX_WIDTH,
        description="Rank of the query down-projection; null = full-rank query.")
    kv_lora_rank: int = Field(gt=0, le=MAX_WIDTH, description="Rank of the joint key/value latent.")
    qk_rope_head_dim: int = Field(ge=0, le=MAX_HEADS,
                                  description="Per-head dims carrying rotary position.")
    qk_nope_head_dim: int = Field(gt=0, le=MAX_HEADS,
                                  description="Per-head query/key dims without rotary.")
    v_head_dim: int = Field(gt=0, le=MAX_HEADS, description="Per-head value dims.")


class SlidingWindowSpec(StrictModel):
    """Local (sliding-window) causal attention on some layers (GPT-OSS, Gemma, Mistral)."""

    tokens: int = Field(gt=0, le=MAX_SEQ_LEN,
                        description="Keys each query attends to on a windowed layer.")
    every: int = Field(1, ge=1, le=MAX_LAYERS,
                       description="Layer i is windowed when i % every == 0 (1: all).")


#: Per-head dims assumed when ``heads`` is not published (the usual size since GPT-3).
DEFAULT_HEAD_DIM = 128


class WorkloadSpec(StrictModel):
    """A decoder-only transformer language model and its training sequence length."""

    name: str = Field(min_length=1, description="Short identifier, e.g. llama3-70b.")
    source: str | None = Field(None, description="Citation of the paper or config of the sizes.")
    layers: int = Field(gt=0, le=MAX_LAYERS, description="Transformer blocks.")
    hidden: int = Field(gt=0, le=MAX_WIDTH, description="Model width h (elements per token).")
    heads: int | None = Field(None, gt=0, le=MAX_HEADS, description="Query attention heads a; "
                              "null = not published: hidden / 128 heads of 128, to whole kv_heads "
                              "groups.")
    kv_heads: int | None = Field(
        None, gt=0, le=MAX_HEADS,
        description="Key/value heads (GQA groups); null = heads (MHA), 1 = MQA.")
    head_dim: int | None = Field(None, gt=0, le=MAX_HEADS,
                                 description="Dims per head; null = hidden / heads.")
    ffn_hidden: int = Field(gt=0, le=MAX_WIDTH, description="Inner width of the dense MLP.")
    vocab: int = Field(gt=0, le=MAX_VOCAB, description="Vocabulary size V (tokens).")
    seq_len: int = Field(gt=0, le=MAX_SEQ_LEN,
                         description="Training sequence length s (tokens).")
    gated_mlp: bool = Field(False, description="Gated MLP (SwiGLU/GeGLU): three weight matrices.")
    tied_embeddings: bool = Field(False, description="Output layer shares the input embedding.")
    position_embedding: Literal["rotary", "learned", "none"] = Field(
        "rotary", description="learned adds a seq_len x hidden table; rotary has no weights.")
    norm: Literal["layernorm", "rmsnorm"] = Field(
        "rmsnorm", description="layernorm has weight and bias (2h); rmsnorm weight only (h).")
    linear_bias: bool = Field(False, description="Every linear layer has a bias (GPT-2/3).")
    dropout: bool = Field(False, description="Dropout after attention/MLP (stores 1-byte masks).")
    moe: MoESpec | None = Field(None, description="Mixture-of-experts block; null = dense model.")
    mla: MLASpec | None = Field(None, description="Latent attention block; null = MHA/GQA.")
    sliding_window: SlidingWindowSpec | None = Field(
        None, description="Sliding-window attention on some layers; null = full causal.")
    stack: StackSpec | None = Field(
        None, description="Software stack (framework and overrides); null = the default "
                          "(megatron-core).")

    @model_validator(mode="before")
    @classmethod
    def _default_heads(cls, data: Any) -> Any:
        """``heads: null`` -> ``hidden / head_dim`` heads (head_dim 128 unless given),
        rounded to a whole number of the ``kv_heads`` groups when those are given (GQA
        needs ``heads`` a multiple of them; the projections are then ``heads x head_dim``
        wide, as on models whose heads times head size is not the hidden size)."""
        if not isinstance(data, dict) or data.get("heads") is not None:
            return data
        hidden, head_dim = data.get("hidden"), data.get("head_dim") or DEFAULT_HEAD_DIM
        if isinstance(hidden, int) and isinstance(head_dim, int) and head_dim > 0:
            groups = data.get("kv_heads") if data.get("mla") is None else None
            step = groups if isinstance(groups, int) and groups > 0 else 1
            if hidden % head_dim and step == 1:
                raise _fail("heads", f"not published (null) and hidden ({hidden}) is not a "
                                     f"multiple of {head_dim}-dim heads; give heads")
            heads = max(round(hidden / head_dim / step), 1) * step
            data = {**data, "heads": heads}
            data.setdefault("head_dim", head_dim)
        return data

    @model_validator(mode="after")
    def _check(self) -> WorkloadSpec:
        if self.heads is None:
            raise _fail("heads", "required (or null with hidden a multiple of head_dim)")
        kv = self.kv_heads if self.kv_heads is not None else self.heads
        if self.mla is not None and self.kv_heads is not None:
            raise _fail("kv_heads", "latent attention (mla) has no kv_heads; leave it null")
        if kv > self.heads or self.heads % kv:
            raise _fail("kv_heads", f"heads ({self.heads}) must be a multiple of kv_heads ({kv})")
        if self.head_dim is None and self.mla is None and self.hidden % self.heads:
            raise _fail("head_dim", f"hidden ({self.hidden}) is not divisible by heads "
                                    f"({self.heads}); give head_dim explicitly")
        if self.sliding_window is not None and self.sliding_window.every > self.layers:
            raise _fail("sliding_window.every", f"must be <= layers ({self.layers})")
        if self.moe is not None and self.moe.first_k_dense_layers >= self.layers:
            raise _fail("moe.first_k_dense_layers",
                        f"must be < layers ({self.layers}), or drop the moe block")
        return self

    @property
    def software(self) -> Stack:
        """The stack choices in force (framework defaults under the ``stack`` overrides)."""
        return resolve_stack(self.stack)

    # Resolved shapes: every reader uses these instead of re-deriving defaults.
    @property
    def n_heads(self) -> int:
        """Query attention heads: ``heads``, which a validated spec always has."""
        # _default_heads fills a null from hidden / head_dim and _check refuses one left
        assert self.heads is not None
        return self.heads

    @property
    def n_kv_heads(self) -> int:
        """Key/value heads (equals ``heads`` for MHA and for MLA after up-projection)."""
        if self.mla is not None or self.kv_heads is None:
            return self.n_heads
        return self.kv_heads

    @property
    def qk_head_dim(self) -> int:
        """Dims per head of queries and keys."""
        if self.mla is not None:
            return self.mla.qk_nope_head_dim + self.mla.qk_rope_head_dim
        return self.head_dim if self.head_dim is not None else self.hidden // self.n_heads

    @property
    def v_head_dim(self) -> int:
        """Dims per head of values (and of the attention output before projection)."""
        if self.mla is not None:
            return self.mla.v_head_dim
        return self.qk_head_dim

    @property
    def expert_ffn_hidden(self) -> int:
        """Inner width of one routed or shared expert (0 for a dense model)."""
        if self.moe is None:
            return 0
        return self.moe.expert_ffn_hidden or self.ffn_hidden

    @property
    def moe_layers(self) -> int:
        """Number of layers whose MLP is a mixture of experts."""
        count: int = moe_layers_in_range(self, 0, self.layers)  # an int for int bounds
        return count

    @property
    def dense_layers(self) -> int:
        """Number of layers with a dense MLP."""
        return self.layers - self.moe_layers

    @property
    def windowed_layer_share(self) -> float:
        """Share of layers with sliding-window attention (0 without a window)."""
        if self.sliding_window is None:
            return 0.0
        return len(range(0, self.layers, self.sliding_window.every)) / self.layers

    def attention_key_mix(self, seq_len: Any = None) -> list[tuple[float, Any]]:
        """(share of layers, mean keys per query) of full and windowed attention layers.

        A causal query at position ``i`` attends to ``i + 1`` keys: ``s / 2`` on average
        (the executed half of the square); on a windowed layer ``min(i + 1, W)``, whose
        mean over the sequence is ``W - W (W - 1) / (2 s)`` for ``W <= s``, capped at the
        causal ``s / 2`` (a window as long as the sequence is plain causal attention).
        """
        s = np.asarray(self.seq_len if seq_len is None else seq_len, dtype=float)
        share = self.windowed_layer_share
        out = [(1.0 - share, s / 2.0)] if share < 1.0 else []
        if self.sliding_window is not None:
            win = np.minimum(float(self.sliding_window.tokens), s)
            out.append((share, np.minimum(win - win * (win - 1.0) / (2.0 * s), s / 2.0)))
        return out

    def attended_keys(self, seq_len: Any = None) -> Any:
        """Mean keys one query attends to, averaged over layers (see attention_key_mix)."""
        return sum(share * keys for share, keys in self.attention_key_mix(seq_len))


def moe_layers_in_range(spec: WorkloadSpec, start: Any, stop: Any) -> Any:
    """Count MoE layers with index in ``[start, stop)``; numpy arrays broadcast.

    Layer ``i`` is MoE when ``i >= first_k_dense_layers`` and ``i % layer_frequency == 0``
    (the Hugging Face DeepSeek-V3 rule). Returns an int or an integer array.
    """
    if spec.moe is None:
        return np.zeros_like(np.asarray(stop)) if np.ndim(stop) else 0
    freq = spec.moe.layer_frequency
    lo = np.maximum(start, spec.moe.first_k_dense_layers)
    # multiples of freq in [lo, stop): floor((stop-1)/f) - floor((lo-1)/f)
    count = np.floor_divide(np.asarray(stop) - 1, freq) - np.floor_divide(lo - 1, freq)
    count = np.where(np.asarray(stop) > lo, count, 0)
    return int(count) if np.ndim(count) == 0 else count


def workload_from_data(data: Any, source: str | None = None) -> WorkloadSpec:
    """Validate parsed YAML/JSON data as a :class:`WorkloadSpec`; raise :class:`InputError`."""
    return validate_as(WorkloadSpec, data, "workload", source)


__all__ = ["MLASpec", "MoESpec", "SlidingWindowSpec", "WorkloadSpec", "input_error_from_validation",
           "moe_layers_in_range", "validate_as", "workload_from_data"]

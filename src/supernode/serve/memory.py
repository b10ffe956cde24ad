"""Memory of one serving GPU: weights, activations and the KV cache (bytes).

* **Weights** per GPU of the busiest pipeline stage: attention, dense MLP, shared experts
  and router split ``tp`` ways (replicated over attention-DP ranks), routed experts over
  the stage's ``tp * dp`` GPUs, ``layers / pp`` layers (rounded up), the embedding and the
  output layer split ``tp`` ways (both on one GPU when ``pp = 1``, the larger one when the
  pipeline puts them on different stages), BF16; parameter counts from
  :func:`supernode.workload.params.count_params` (the training side's).
* **KV cache** per token on one GPU: per layer ``2 kv_heads d`` elements (keys and
  values, GQA/MHA) over ``min(tp, kv_heads)`` ranks (heads replicated beyond that), or one
  MLA latent of ``kv_lora_rank + qk_rope_head_dim`` elements replicated on every TP rank
  (DeepSeek-V2 §2.1.2); times ``layers / pp`` (every layer's cache is allocated at full
  length: vLLM/TensorRT-LLM's uniform paged pool).
* **Activations**: the largest forward pass the engine runs, ``max_tokens`` per GPU: the
  residual stream and one layer's widest intermediates in BF16 (``4 h + 3 f / tp``
  elements) plus FP32 logits (``V / tp``) per token; an engine reserves this workspace
  up front (vLLM's profile run, TensorRT-LLM's ``max_num_tokens`` buffers).
* **Usable** memory: :attr:`supernode.estimate.system.SystemModel.usable_memory_bytes`
  (capacity less the runtime reserve, one truth with the training side).

KV tokens per GPU = (usable - weights - activations) / (KV bytes per token per GPU).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from supernode.serve.deploy import Deployments
from supernode.serve.precision import ELEMENT_BYTES, ServePrecision
from supernode.spec.workload import WorkloadSpec
from supernode.workload.params import count_params

#: Bytes per element of the embedding and output layer (kept in BF16 by every engine).
HEAD_BYTES = ELEMENT_BYTES["bf16"]


def stage_layers(w: WorkloadSpec, pp: Any) -> tuple[Any, Any]:
    """(dense, MoE) transformer layers on the busiest stage (mean mix, total rounded up)."""
    pp = np.asarray(pp, dtype=float)
    total = np.ceil(w.layers / pp)
    moe_share = w.moe_layers / w.layers
    return total * (1.0 - moe_share), total * moe_share


def weight_bytes_per_gpu(w: WorkloadSpec, d: Deployments, p: ServePrecision) -> Any:
    """Weight bytes on one GPU of the busiest stage (see the module docstring)."""
    c = count_params(w)
    n_dense, n_moe = stage_layers(w, d.pp)
    tp = d.tp.astype(float)
    shard = (tp * d.dp).astype(float)
    dense_bytes = p.weight_bytes if w.moe is None else p.other_bytes
    attention = (c.attention_per_layer + c.norms_per_layer) * (n_dense + n_moe) / tp
    dense_mlp = c.dense_mlp_per_layer * n_dense / tp
    moe_rest = (c.shared_experts_per_layer + c.router_per_layer) * n_moe / tp
    experts = c.experts * c.expert_per_layer * n_moe / shard
    head = np.where(d.pp > 1, max(c.embedding, c.lm_head), c.embedding + c.lm_head) / tp
    return ((attention + dense_mlp + moe_rest) * dense_bytes + experts * p.weight_bytes
            + head * HEAD_BYTES)


def kv_elements_per_token_layer(w: WorkloadSpec, tp: Any) -> Any:
    """Cached elements per token and layer on one GPU (see the module docstring)."""
    tp = np.asarray(tp, dtype=float)
    if w.mla is not None:
        return np.full_like(tp, float(w.mla.kv_lora_rank + w.mla.qk_rope_head_dim))
    kv = float(w.n_kv_heads)
    return 2.0 * kv * w.qk_head_dim / np.minimum(tp, kv)


def kv_bytes_per_token_per_gpu(w: WorkloadSpec, d: Deployments, p: ServePrecision) -> Any:
    """KV-cache bytes one token occupies on one GPU of the busiest stage."""
    n_dense, n_moe = stage_layers(w, d.pp)
    return kv_elements_per_token_layer(w, d.tp) * (n_dense + n_moe) * p.kv_bytes


def activation_bytes_per_gpu(w: WorkloadSpec, d: Deployments, max_tokens: Any) -> Any:
    """Workspace of the largest forward pass of ``max_tokens`` tokens per GPU (bytes)."""
    tp = d.tp.astype(float)
    width = w.ffn_hidden if w.moe is None else max(w.ffn_hidden, w.expert_ffn_hidden
                                                    * w.moe.top_k)
    per_token = 2.0 * (4.0 * w.hidden + 3.0 * width / tp) + 4.0 * w.vocab / tp
    return np.asarray(max_tokens, dtype=float) * per_token


def kv_tokens_per_gpu(usable_bytes: float, weights: Any, activations: Any,
                      kv_per_token: Any) -> Any:
    """Tokens of KV cache that fit on one GPU: free memory over bytes per token (may be
    negative: the weights and workspace alone do not fit)."""
    return (usable_bytes - weights - activations) / kv_per_token

"""Activation memory: bytes each GPU stores for the backward pass (Korthikanti et al. 2023).

Per layer and per micro-batch, following Korthikanti et al., "Reducing Activation
Recomputation in Large Transformer Models", MLSys'23, §4 and Table 2, generalised term by
term (``e`` bytes per activation element, 2 for 16-bit; 1-byte dropout masks):

* **replicated** across TP ranks unless sequence parallelism (SP) shards them by ``t``:
  the inputs of both norms, of the attention block and of the MLP (``4 e h`` per token),
  and the two dropout masks (``2 h``) -> ``10 s b h`` for GPT. MLA adds its latent
  vectors (``q_lora``, ``kv_lora``) here; a MoE layer adds the router probabilities
  (fp32, ``4 E``), the dispatched token copies and the expert outputs (``2 e h`` per
  routed copy, ``top_k * capacity_factor`` copies per token).
* **TP-sharded** by ``t``: Q, K, V and the attention output (``e (a d_qk + 2 kv d)`` +
  ``e a d_v``; GQA shrinks K and V), the MLP's first-linear outputs (``e f``, twice for a
  gated MLP) and second-linear input (``e f``) -> ``24 s b h / t`` for GPT (f = 4h).
* **attention core**, TP-sharded: softmax output, dropout mask and dropout output,
  ``(2e + 1) a s`` per token -> ``5 a s^2 b`` (``e a s`` without dropout). A fused
  (flash) kernel stores only the fp32 log-sum-exp (``4 a``); recomputing ``core_attn``
  stores nothing here.
* **recomputed modules** (Megatron-Core ``--recompute-modules``, :mod:`supernode.spec.
  recompute`) drop what they store: ``layernorm`` the norm outputs, ``mla_up_proj`` MLA's
  up-projected queries, keys and values, ``moe_act`` the experts' activation outputs,
  ``mlp`` / ``moe`` / ``shared_experts`` the block's inside (its input is kept).
* **full recompute** keeps only each layer's input, ``e s b h`` (``/t`` with SP), on the
  layers it covers (``--recompute-num-layers`` of each virtual stage, or all).

Context parallelism ``cp`` splits the sequence: ``s -> s / cp`` per GPU, while each query
still attends to all ``s`` keys (the non-flash core term is ``(s/cp) * s``).
All functions broadcast over numpy arrays of plan fields.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from supernode.errors import InputError
from supernode.spec.plan import PlanArrays, as_plan_arrays
from supernode.spec.recompute import is_full, recomputes
from supernode.spec.workload import WorkloadSpec

ACTIVATION_ELEMENT_BYTES = {"bf16": 2, "fp16": 2, "fp8": 2, "fp32": 4}
"""Bytes per stored activation element. fp8 training (Transformer Engine) keeps most
saved activations in bf16, so it is costed like bf16."""


def activation_element_bytes(precision: str, path: str = "precision") -> int:
    """Bytes per stored activation element for a precision name; InputError if unknown."""
    if precision not in ACTIVATION_ELEMENT_BYTES:
        raise InputError(path, f"unknown precision {precision!r}; allowed: "
                               f"{', '.join(ACTIVATION_ELEMENT_BYTES)}")
    return ACTIVATION_ELEMENT_BYTES[precision]


@dataclass(frozen=True)
class _TokenBytes:
    """Bytes one token leaves stored in one layer, by where they sit and which recomputed
    module (:mod:`supernode.spec.recompute`) would drop them. ``rep_*`` are replicated over
    TP ranks unless sequence parallelism shards them; ``shard_*`` are TP-sharded."""

    rep: float  # everything replicated
    shard: float  # everything TP-sharded, the attention core excluded
    norm_outputs: float  # rep: the two norms' outputs (layernorm)
    up_projected: float  # shard: MLA's up-projected queries, keys, values (mla_up_proj)
    act_routed: float  # shard: routed experts' activation outputs (moe_act)
    act_shared: float  # shard: shared experts' activation outputs (moe_act)
    mlp_internal: float  # shard: a dense MLP's inside, its input kept (mlp)
    moe_rep: float  # rep: router probabilities and dispatched copies (moe)
    moe_shard: float  # shard: routed and shared experts' inside (moe)
    shared_internal: float  # shard: the shared experts' inside (shared_experts)


def _token_bytes(w: WorkloadSpec, e: int, moe_layer: bool) -> _TokenBytes:
    """Per-token stored bytes of one dense or MoE layer (see the module docstring)."""
    h, a, mask = w.hidden, w.n_heads, (1 if w.dropout else 0)
    rep: float = 4 * e * h + 2 * mask * h  # 2 norm inputs, attention & MLP inputs, 2 dropout masks
    if w.mla is not None:
        rep += 2 * e * ((w.mla.q_lora_rank or 0) + w.mla.kv_lora_rank)  # latent + its norm
    kv = w.n_kv_heads
    qkv = e * (a * w.qk_head_dim + kv * w.qk_head_dim + kv * w.v_head_dim)
    shard: float = qkv + e * a * w.v_head_dim
    gate = 2 if w.gated_mlp else 1
    act_routed = act_shared = mlp = moe_rep = moe_shard = shared = 0.0
    if moe_layer and w.moe is not None:
        copies = w.moe.top_k * (w.moe.capacity_factor or 1.0) * w.moe.token_imbalance
        moe_rep = 4 * w.moe.experts + 2 * e * h * copies  # router probs, dispatched in, out
        f_e = w.expert_ffn_hidden
        routed = e * (gate + 1) * f_e * copies
        shared = e * (gate + 1) * f_e * w.moe.shared_experts
        moe_shard = routed + shared
        act_routed = e * f_e * copies  # activation outputs
        act_shared = e * f_e * w.moe.shared_experts
        rep += moe_rep
        shard += moe_shard
    else:
        mlp = e * (gate + 1) * w.ffn_hidden
        shard += mlp
    return _TokenBytes(rep, shard, 2 * e * h, qkv if w.mla is not None else 0.0, act_routed,
                       act_shared, mlp, moe_rep, moe_shard, shared)


def layer_activation_bytes(w: WorkloadSpec, plan: PlanArrays | Any, moe_layer: bool = False,
                           recompute: Any = None) -> np.ndarray:
    """Bytes one GPU stores for one layer and one micro-batch (Korthikanti Table 2, general).

    ``recompute`` overrides the plan's recompute mask (:mod:`supernode.spec.recompute`).
    Each recomputed module drops what it stores; ``moe`` and ``mlp`` keep only their input,
    the norm output already counted. Full recomputation keeps each layer's input, on the
    ``recompute_layers`` of each virtual stage it covers (all when 0): the mean over the
    stage's layers is returned.
    """
    a = as_plan_arrays(plan)
    e = activation_element_bytes(a.precision)
    code = a.recompute if recompute is None else np.asarray(recompute)
    t = a.tp.astype(float)
    tokens = a.micro_batch * (w.seq_len / a.cp)  # tokens of the local sequence chunk
    b = _token_bytes(w, e, moe_layer)

    def drop(module: str, amount: float) -> np.ndarray:
        return np.where(recomputes(code, module), amount, 0.0)

    rep = b.rep - drop("layernorm", b.norm_outputs) - drop("moe", b.moe_rep)
    shared_apart = recomputes(code, "shared_experts")  # its activation goes with it
    moe_inside = np.where(recomputes(code, "moe"), b.moe_shard,
                          drop("shared_experts", b.shared_internal)
                          + drop("moe_act", b.act_routed)
                          + np.where(shared_apart, 0.0, drop("moe_act", b.act_shared)))
    shard = (b.shard - drop("mla_up_proj", b.up_projected) - drop("mlp", b.mlp_internal)
             - moe_inside)
    rep_div = np.where(a.sp, t, 1.0)
    mask = 1 if w.dropout else 0
    core_stored = w.n_heads * w.seq_len * (e + mask * (1 + e))  # softmax (+ mask, dropout out)
    core = np.where(a.flash_attention, 4.0 * w.n_heads, core_stored)
    core = np.where(recomputes(code, "core_attn"), 0.0, core)
    layer = tokens * (rep / rep_div + (shard + core) / t)
    if not np.any(is_full(code)):
        return np.asarray(layer)
    full = tokens * e * w.hidden / rep_div  # checkpointed layer input only
    kept = tokens * (b.rep / rep_div + (b.shard + np.where(a.flash_attention, 4.0 * w.n_heads,
                                                            core_stored)) / t)
    share = full_recompute_share(w, a)
    return np.asarray(np.where(is_full(code), share * full + (1.0 - share) * kept, layer))


def full_recompute_share(w: WorkloadSpec, plan: PlanArrays | Any) -> np.ndarray:
    """Share of a stage's layers that full recomputation covers: ``recompute_layers`` of
    each virtual stage's layers (Megatron's block method), all of them when 0."""
    from supernode.workload.stages import chunk_slots

    a = as_plan_arrays(plan)
    chunk = np.maximum(chunk_slots(w, a.pp, a.vpp, a.pp_layout), 1)
    n = np.where(a.recompute_layers > 0, np.minimum(a.recompute_layers, chunk), chunk)
    return np.asarray(n / chunk)


def korthikanti_layer_bytes(seq_len: Any, micro_batch: Any, hidden: Any, heads: Any, tp: Any,
                            recompute: str, sequence_parallel: bool) -> Any:
    """Korthikanti et al. (MLSys'23) Table 2 closed form, bytes per layer (16-bit, dropout).

    none: ``sbh(10 + 24/t + 5as/(ht))``, SP: ``sbh/t (34 + 5as/h)``, selective:
    ``sbh(10 + 24/t)`` or ``34 sbh/t`` with SP, full: ``2 sbh``. Table 2 has one full-
    recompute row; with SP the stored layer input is the sequence-sharded tensor, so this
    returns ``2 sbh / t`` there (Megatron keeps the checkpoint in the SP region).
    """
    s, b, h, a, t = (np.asarray(x, dtype=float) for x in (seq_len, micro_batch, hidden, heads, tp))
    sbh = s * b * h
    if recompute == "full":
        return 2.0 * sbh / (t if sequence_parallel else 1.0)
    core = 0.0 if recompute == "selective" else 5.0 * a * s / h
    if sequence_parallel:
        return sbh / t * (34.0 + core)
    return sbh * (10.0 + 24.0 / t + core / t)


def in_flight_layer_microbatches(w: WorkloadSpec, plan: PlanArrays | Any,
                                 stage: str = "first") -> np.ndarray:
    """Layer x micro-batch activation sets the first (or last) pipeline GPU holds at peak.

    1F1B (Narayanan et al. SC'21): the first stage holds ``min(p, m)`` micro-batches of its
    ``l/p`` layers (~``l`` layers' worth); the last holds one. Interleaved with ``v``
    chunks: rank 0 runs ``2(p-1) + (v-1)p + 1`` chunk forwards before its first backward
    (Megatron schedule), i.e. ``l (1 + (p-1)/(p v))`` layers' worth (Korthikanti §4.2.3);
    the last rank ``(v-1)p + 1``. Capped by the ``v m`` chunks in a step.
    """
    from supernode.workload.stages import chunk_slots

    a = as_plan_arrays(plan)
    p, v, m = a.pp, a.vpp, np.maximum(a.microbatches, 1)
    chunk = chunk_slots(w, p, v, a.pp_layout)  # slots per virtual stage (busiest)
    if stage == "first":
        chunks = np.where(v == 1, np.minimum(p, m), np.minimum(v * p + p - 1, v * m))
    else:
        chunks = np.where(v == 1, 1, np.minimum((v - 1) * p + 1, v * m))
    held: np.ndarray = chunk * chunks
    return held


def predict_activation_memory(case: dict[str, Any]) -> float:
    """Predict ``measured.bytes_per_layer`` of an ``activation_memory`` validation case.

    Fields: seq_len, micro_batch, hidden, heads, tp, recompute, sequence_parallel,
    precision; optional ffn_hidden (default 4 h), kv_heads, gated_mlp, dropout (default
    true, as in the source). Attention without a fused kernel, as in Korthikanti Table 2.
    """
    for key in ("tp", "micro_batch", "seq_len"):
        value = case.get(key)
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise InputError(key, f"must be an integer >= 1, got {value!r}")
    try:
        w = WorkloadSpec(name="case", layers=1, hidden=case["hidden"], heads=case["heads"],
                         kv_heads=case.get("kv_heads"),
                         ffn_hidden=case.get("ffn_hidden") or 4 * case["hidden"], vocab=1,
                         seq_len=case["seq_len"], gated_mlp=bool(case.get("gated_mlp", False)),
                         dropout=case.get("dropout", True) is not False)
        plan = PlanArrays.from_columns(
            precision=case["precision"], tp=case["tp"], micro_batch=case["micro_batch"],
            global_batch_sequences=case["micro_batch"], recompute=case["recompute"],
            sequence_parallel=bool(case["sequence_parallel"]), flash_attention=False)
    except KeyError as exc:
        raise InputError(str(exc.args[0]), "required field of an activation_memory case") from None
    except (TypeError, ValueError) as exc:
        if isinstance(exc, InputError):
            raise
        raise InputError("", f"bad activation_memory case: {exc}") from None
    activation_element_bytes(plan.precision)
    return float(layer_activation_bytes(w, plan))

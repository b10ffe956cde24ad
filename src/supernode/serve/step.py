"""Seconds of one serving forward pass per GPU: prefill and decode, vectorised.

Both run the step model's kernels (:mod:`supernode.estimate.compute`'s
:func:`~supernode.estimate.compute.layer_time`, the training forward pass: every GEMM of
:mod:`supernode.workload.shapes` at its measured ceiling and HBM roofline, the fused
attention core, the streamed element-wise work), on the shapes of one pass:

* **prefill** of ``n`` prompts of ``isl`` tokens per attention-DP rank: the layer forward
  at sequence ``isl`` and micro-batch ``n``, causal attention core included;
* **decode** of ``b`` sequences at context ``c``: the layer forward at sequence 1 and
  micro-batch ``b`` (GEMMs with ``m = b``: the roofline makes small batches bandwidth-bound
  on their weights), its attention core replaced by decode attention: each sequence's
  query over its ``c`` cached keys (``min(c, window)`` on windowed layers), no faster than
  reading those keys' cache at ``decode_memory_eta`` of HBM bandwidth nor than their FLOPs
  at the BF16 GEMM ceiling (FlashMLA/FlashInfer decode kernels are matmuls over the cache);
  the weight reads of the GEMMs run at the same achieved share.

A MoE layer's routed experts run at the deployment's main precision and its other GEMMs
at ``other`` (:mod:`supernode.serve.precision`). The kernel model has no 4-bit operand,
so an FP4 GEMM is priced as the FP8 GEMM of the same FLOPs at the part's FP4 ceiling over
``k / 2`` (its weight bytes halved: ``(2m x k/2) @ (k/2 x n)``). Communication
(:mod:`supernode.serve.comm`) is added per layer at ``comm_exposed``; each pass pays
``iteration_overhead_s``, each MoE layer that exchanges tokens between ranks (expert
parallelism, or expert TP across attention-DP ranks) ``moe_layer_overhead_s`` (token
permutation, the dispatch/combine kernels' fixed latency and synchronisation across the
ranks); the busiest expert-parallel rank carries ``moe_token_imbalance`` times the mean
routed tokens. A pipeline of ``pp`` stages runs its layers in sequence for one
micro-batch of ``b / pp`` sequences while the others fill the other stages.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from supernode.estimate.compute import layer_time
from supernode.estimate.kernels import gemm_forward_s, stream_s
from supernode.estimate.system import SystemModel
from supernode.serve.calibration import ServeConstants
from supernode.serve.comm import ep_alltoall_s, tp_allreduce_s
from supernode.serve.deploy import Deployments
from supernode.serve.memory import kv_elements_per_token_layer, stage_layers
from supernode.serve.precision import ServePrecision
from supernode.spec.workload import WorkloadSpec
from supernode.workload.shapes import Gemm, head_gemms, layer_gemms


def with_length(w: WorkloadSpec, seq_len: int) -> WorkloadSpec:
    """The workload's shapes at sequence length ``seq_len`` (no re-validation)."""
    return w.model_copy(update={"seq_len": int(max(seq_len, 1))})


def price_gemms(gemms: list[Gemm], system: SystemModel, c: ServeConstants,
                precision: str) -> Any:
    """Forward seconds of ``gemms`` at ``precision`` (FP4 as in the module docstring)."""
    if not gemms:
        return 0.0
    if precision != "fp4":
        return gemm_forward_s(gemms, system, c.kernel, precision)
    rates = dict(system.matmul_flops_by_precision)
    rates["fp8"] = system.matmul_flops("fp4")
    fp4 = replace(system, matmul_flops_by_precision=rates)
    halved = [replace(g, m=2.0 * np.asarray(g.m, dtype=float), k=g.k / 2.0)
              if g.precision == "layer" else g for g in gemms]
    return gemm_forward_s(halved, fp4, c.kernel, "fp8")


def kernel_precision(precision: str) -> str:
    """The precision the step model's layer pass runs at for ``precision`` (it has no
    FP4: an FP4 layer is run at FP8 and its dominant GEMMs re-priced)."""
    return "fp8" if precision == "fp4" else precision


def _main_gemms(gemms: list[Gemm], moe_layer: bool) -> list[Gemm]:
    return [g for g in gemms if g.name.startswith("expert_")] if moe_layer else gemms


def layer_linear_s(w: WorkloadSpec, d: Deployments, system: SystemModel, c: ServeConstants,
                   p: ServePrecision, micro_batch: Any, moe_layer: bool) -> tuple[Any, Any]:
    """(forward seconds without the attention core, attention-core seconds) of one layer
    on one GPU: the step model's layer forward at the other precision, its dominant GEMMs
    re-priced at the main precision where the two differ."""
    moe = moe_layer and w.moe is not None
    if moe and w.moe is not None and w.moe.token_imbalance < c.moe_token_imbalance:
        # the busiest EP rank carries the imbalance; one EP rank (all experts local) none
        moe_spec = w.moe.model_copy(update={"token_imbalance": c.moe_token_imbalance})
        skewed = layer_linear_s(w.model_copy(update={"moe": moe_spec}), d, system, c, p,
                                micro_batch, True)
        if bool(np.all(d.ep > 1)):
            return skewed
        even = layer_linear_s(w, d, system, replace(c, moe_token_imbalance=1.0), p,
                              micro_batch, True)
        return (np.where(d.ep > 1, skewed[0], even[0]), np.where(d.ep > 1, skewed[1], even[1]))
    base = kernel_precision(p.other)
    a = d.plan_arrays(micro_batch, base)
    t = layer_time(w, a, system, c.kernel, moe)
    linear = t.forward_s - t.core_forward_s
    if p.main != base:
        main = _main_gemms(layer_gemms(w, a, moe), moe_layer)
        linear = (linear - gemm_forward_s(main, system, c.kernel, base)
                  + price_gemms(main, system, c, p.main))
    if moe:  # the fixed cost of exchanging tokens between ranks (none inside one TP group)
        exchanged = (d.ep > 1) | (d.etp > d.tp)
        linear = linear + np.where(exchanged, c.moe_layer_overhead_s, 0.0)
    return linear, t.core_forward_s


def decode_attention_s(w: WorkloadSpec, d: Deployments, system: SystemModel,
                       c: ServeConstants, p: ServePrecision, batch: Any, context: Any) -> Any:
    """Seconds of one layer's decode attention for ``batch`` sequences at ``context``
    cached tokens each (mean over full and windowed layers), one GPU."""
    ctx = np.asarray(context, dtype=float)
    keys = ctx
    if w.sliding_window is not None:
        share = w.windowed_layer_share
        keys = (1.0 - share) * ctx + share * np.minimum(ctx, float(w.sliding_window.tokens))
    b = np.asarray(batch, dtype=float)
    heads = w.n_heads / d.tp.astype(float)
    if w.mla is not None:
        latent = float(w.mla.kv_lora_rank + w.mla.qk_rope_head_dim)
        per_key = 2.0 * latent + 2.0 * w.mla.kv_lora_rank  # absorbed MLA: scores + values
    else:
        per_key = 2.0 * (w.qk_head_dim + w.v_head_dim)
    flops = b * keys * heads * per_key
    read = b * keys * kv_elements_per_token_layer(w, d.tp) * p.kv_bytes
    eta = c.decode_memory_eta / c.kernel.memory_eta
    memory = stream_s(read, system, c.kernel) / eta
    compute = flops / (system.matmul_flops("bf16") * c.kernel.gemm_sustained)
    return np.maximum(memory, compute)


def pipeline_layers_s(w: WorkloadSpec, shaped: WorkloadSpec, d: Deployments,
                      system: SystemModel, c: ServeConstants, kernel: ServeConstants,
                      p: ServePrecision, micro_batch: Any, tokens: Any,
                      attention_s: Any | None) -> Any:
    """Seconds of one pass through every stage's layers of one instance: each dense and
    MoE layer's forward (``shaped``: the workload at the pass's length, priced with
    ``kernel``) plus its exposed TP all-reduce of ``tokens`` tokens, and the MoE layers'
    expert exchange. ``attention_s``: the attention seconds of a layer (decode), or None
    for the layer forward's own attention core (prefill)."""
    n_dense, n_moe = stage_layers(w, d.pp)
    comm, a2a = layer_comm_s(w, d, system, c, p, tokens)

    def layer(moe_layer: bool) -> Any:
        linear, core = layer_linear_s(shaped, d, system, kernel, p, micro_batch, moe_layer)
        return linear + (core if attention_s is None else attention_s) + comm

    stage = n_dense * layer(False)
    if w.moe is not None:
        stage = stage + n_moe * (layer(True) + a2a)
    return d.pp * stage


def layer_comm_s(w: WorkloadSpec, d: Deployments, system: SystemModel, c: ServeConstants,
                 p: ServePrecision, tokens: Any) -> tuple[Any, Any]:
    """Exposed communication seconds of one layer's pass of ``tokens`` tokens: the TP
    all-reduce (every layer) and the expert all-to-all (MoE layers; 0 for a dense model),
    each at ``comm_exposed`` of its issued time."""
    comm = c.comm_exposed * tp_allreduce_s(w, d, system.fabric, tokens)
    if w.moe is None:
        return comm, 0.0
    return comm, c.comm_exposed * ep_alltoall_s(w, d, system.fabric, p, tokens)


def decode_comm_s(w: WorkloadSpec, d: Deployments, system: SystemModel, c: ServeConstants,
                  p: ServePrecision) -> Any:
    """Exposed communication seconds inside one decode step (:func:`decode_step_s`): every
    stage's layers' TP all-reduces and MoE layers' expert exchanges of the step's
    micro-batch."""
    mb = np.maximum(d.batch / d.pp, 1.0)
    n_dense, n_moe = stage_layers(w, d.pp)
    comm, a2a = layer_comm_s(w, d, system, c, p, mb)
    return d.pp * ((n_dense + n_moe) * comm + n_moe * a2a)


def _decode_kernel(c: ServeConstants) -> ServeConstants:
    """Constants whose HBM share is the decode step's (weight reads of small GEMMs)."""
    return replace(c, kernel=c.kernel.replace(memory_eta=c.decode_memory_eta))


def decode_step_s(w: WorkloadSpec, d: Deployments, system: SystemModel, c: ServeConstants,
                  p: ServePrecision, context: Any) -> Any:
    """Seconds between two tokens of every sequence of one attention-DP rank (the decode
    step of ``d.batch`` sequences at ``context`` tokens), one instance."""
    mb = np.maximum(d.batch / d.pp, 1.0)
    k = _decode_kernel(c)
    one = with_length(w, 1)
    attn = decode_attention_s(w, d, system, c, p, mb, context)
    layers = pipeline_layers_s(w, one, d, system, c, k, p, mb, mb, attn)
    head = price_gemms(head_gemms(one, d.plan_arrays(mb, kernel_precision(p.other))),
                       system, k, "bf16")
    return layers + head + c.iteration_overhead_s


def prefill_pass_s(w: WorkloadSpec, d: Deployments, system: SystemModel, c: ServeConstants,
                   p: ServePrecision, isl: float, prompts: Any) -> Any:
    """Seconds of one prefill pass of ``prompts`` prompts of ``isl`` tokens per attention-DP
    rank through every stage of one instance (the time to their first token)."""
    prompts = np.asarray(prompts, dtype=float)
    long = with_length(w, int(round(isl)))
    tokens = prompts * long.seq_len
    layers = pipeline_layers_s(w, long, d, system, c, c, p, prompts, tokens, None)
    last = d.plan_arrays(prompts, kernel_precision(p.other))
    head = price_gemms(head_gemms(with_length(w, 1), last), system, c, "bf16")
    return layers + head + c.iteration_overhead_s

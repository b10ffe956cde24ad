"""Steady-state continuous batching of one deployment: throughput, TTFT and TPOT.

Per attention-DP rank, ``b`` sequences decode together (continuous batching: a finished
sequence's slot is refilled at once) at the mean context ``isl + osl / 2``; prompts are
prefilled in chunked passes of ``prefill_chunk_tokens`` (``max(chunk // isl, 1)``
prompts a pass) mixed into the decode iterations. Over one request's life of ``osl``
steps the rank prefills ``b`` new prompts, so

* ``TPOT = t_decode(b) + b t_prefill / (prompts osl)`` (the prefill work spread over the
  steps; a pipeline of ``pp`` stages keeps ``pp`` passes in flight, ``t_prefill / pp``),
* output tokens/s per rank ``= b / TPOT`` (each request yields ``osl`` tokens in ``osl``
  steps, its first included), ``TTFT = t_prefill + t_decode(b)`` (its pass plus the
  iteration it waits for),
* a decode-only pool (disaggregated, ``phase: decode``): ``TPOT = t_decode(b)``; a
  prefill-only pool: input tokens/s ``= prompts isl pp / t_prefill``.

The batch is bounded by the KV cache: ``b (isl + osl) <= KV tokens per GPU`` (a
no-eviction scheduler reserves each sequence's peak, TensorRT-LLM's default). With a
concurrency the batch is the requests in flight per rank; with a request rate the
smallest batch that keeps up (Little's law, ``rate = b / (TTFT + osl TPOT)``); offline,
the batch the caller chose.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from supernode.estimate.system import SystemModel
from supernode.serve.calibration import ServeConstants
from supernode.serve.deploy import Deployments
from supernode.serve.memory import (
    activation_bytes_per_gpu,
    kv_bytes_per_token_per_gpu,
    kv_tokens_per_gpu,
    weight_bytes_per_gpu,
)
from supernode.serve.precision import ServePrecision
from supernode.serve.step import decode_step_s, prefill_pass_s
from supernode.serve.traffic import Traffic
from supernode.spec.workload import WorkloadSpec


@dataclass(frozen=True)
class Served:
    """Per deployment (arrays): memory, capacity and the serving figures (SI, per GPU
    throughputs over the instance's GPUs)."""

    weights_bytes: Any
    activation_bytes: Any
    kv_bytes_per_token: Any
    kv_tokens: Any
    max_batch: Any
    fits: Any
    tpot_s: Any
    ttft_s: Any
    decode_step_s: Any
    prefill_pass_s: Any
    prompts_per_pass: Any
    output_tokens_per_s_per_gpu: Any
    input_tokens_per_s_per_gpu: Any

    @property
    def tokens_per_s_per_user(self) -> Any:
        """Output tokens per second one request sees while it decodes (1 / TPOT)."""
        return 1.0 / self.tpot_s


def prompts_per_pass(isl: float, chunk: float) -> float:
    """Prompts of ``isl`` tokens one chunked prefill pass holds (at least one)."""
    return float(max(np.floor(chunk / max(isl, 1.0)), 1.0))


def serve(w: WorkloadSpec, d: Deployments, system: SystemModel, c: ServeConstants,
          p: ServePrecision, traffic: Traffic) -> Served:
    """Serve ``traffic`` on each deployment of ``d`` (its ``batch`` per DP rank)."""
    prompts = prompts_per_pass(traffic.isl, c.prefill_chunk_tokens)
    tokens = np.maximum(np.maximum(prompts * traffic.isl, c.prefill_chunk_tokens), d.batch)
    if traffic.phase == "decode":
        tokens = d.batch.astype(float)
    weights = weight_bytes_per_gpu(w, d, p)
    act = activation_bytes_per_gpu(w, d, tokens)
    per_token = kv_bytes_per_token_per_gpu(w, d, p)
    kv = kv_tokens_per_gpu(system.usable_memory_bytes, weights, act, per_token)
    context = traffic.decode_context if traffic.phase != "prefill" else traffic.isl
    max_batch = np.floor(np.maximum(kv, 0.0) / max(traffic.peak_context, 1.0))
    if traffic.phase == "prefill":
        fits = kv >= prompts * traffic.isl
    else:
        fits = (kv > 0) & (d.batch <= max_batch)
    t_dec = decode_step_s(w, d, system, c, p, context) if traffic.phase != "prefill" \
        else np.zeros(d.batch.shape)
    t_pf = prefill_pass_s(w, d, system, c, p, traffic.isl, prompts) \
        if traffic.phase != "decode" else np.zeros(d.batch.shape)
    per_rank_gpus = (d.tp * d.pp).astype(float)
    if traffic.phase == "decode":
        tpot = t_dec
    elif traffic.phase == "prefill":
        tpot = np.full(d.batch.shape, np.inf)
    else:
        osl = max(traffic.osl or 1.0, 1.0)
        tpot = t_dec + d.batch * t_pf / (prompts * d.pp * osl)
    ttft = t_pf + t_dec
    out = np.where(traffic.phase == "prefill", 0.0, d.batch / tpot / per_rank_gpus)
    inp = prompts * traffic.isl * d.pp / np.where(t_pf > 0, t_pf, np.inf) / per_rank_gpus
    if traffic.phase == "both":
        inp = out * traffic.isl / max(traffic.osl or 1.0, 1.0)
    return Served(weights, act, per_token, kv, max_batch, fits, tpot, ttft, t_dec, t_pf,
                  np.full(d.batch.shape, prompts), out, inp)

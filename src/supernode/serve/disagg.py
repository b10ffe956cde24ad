"""Disaggregated serving: a prefill pool and a decode pool with their own layouts.

The prefill pool runs prompts only (input tokens/s per GPU ``P``, TTFT its pass), the decode
pool decodes only (output tokens/s per GPU ``D``, its own batch, no prefill in its steps:
TPOT is the bare decode step). Balanced, each request's ``isl`` prompt tokens and ``osl``
output tokens need ``isl / P + osl / D`` GPU-seconds, so the pair serves
``1 / (1 / D + (isl / osl) / P)`` output tokens/s per GPU, with ``f = (isl / P) /
(isl / P + osl / D)`` of the GPUs prefilling (rounded to whole instances when reported).

The KV cache of each prompt moves from its prefill instance to a decode instance:
``isl x`` KV bytes per token of the whole model (every layer, every shard), each prefill
GPU sending its shard in parallel, priced as a point-to-point transfer by the collective
model on the tier the two instances' GPUs span (NVLink inside the scale-up domain, the NICs
beyond). It adds to TTFT, and a prefill pass cannot finish faster than its prompts' KV
leaves over the link (contention on the prefill GPUs' links).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from supernode.collectives import collective_time_s
from supernode.estimate.comm import group_fabric
from supernode.estimate.system import SystemModel
from supernode.serve.calibration import ServeConstants
from supernode.serve.memory import kv_bytes_per_token_per_gpu
from supernode.serve.precision import ServePrecision
from supernode.serve.search import Evaluated, evaluate
from supernode.serve.traffic import Traffic
from supernode.spec.workload import WorkloadSpec


def kv_transfer_s(w: WorkloadSpec, prefill: Evaluated, system: SystemModel,
                  p: ServePrecision, isl: float, decode_gpus: int) -> Any:
    """Seconds to move one prefill pass's prompts' KV cache to a decode instance of
    ``decode_gpus`` GPUs, per prefill row (see the module docstring)."""
    d = prefill.deployments
    per_gpu = kv_bytes_per_token_per_gpu(w, d, p) * isl * prefill.served.prompts_per_pass
    out = np.zeros(d.tp.shape)
    for g in np.unique(d.gpus):
        span = int(g) + int(decode_gpus)
        view = group_fabric(system.fabric, 1, min(span, system.gpus))
        mask = d.gpus == g
        out[mask] = np.asarray(collective_time_s("p2p", per_gpu[mask], 2, view)[0],
                               dtype=float)
    return out


def best_disaggregated(w: WorkloadSpec, system: SystemModel, c: ServeConstants,
                       p: ServePrecision, traffic: Traffic, gpus: int) -> dict[str, Any] | None:
    """The best prefill/decode pool pair under the targets, or None when none meets them."""
    osl = max(traffic.osl or 1.0, 1.0)
    pre = evaluate(w, system, c, p, replace(traffic, phase="prefill", tpot_s=None,
                                            concurrency=None, request_rate=None), gpus)
    dec = evaluate(w, system, c, p, replace(traffic, phase="decode", ttft_s=None,
                                            concurrency=None, request_rate=None), gpus)
    pf_ok = np.flatnonzero(np.asarray(pre.served.fits, dtype=bool) & (pre.deployments.batch == 1))
    dc_ok = np.flatnonzero(dec.meets)
    if pf_ok.size == 0 or dc_ok.size == 0:
        return None
    pre_rate = pre.served.input_tokens_per_s_per_gpu[pf_ok]  # per GPU of an instance
    best: dict[str, Any] | None = None
    for g in np.unique(dec.deployments.gpus[dc_ok]):
        cols = dc_ok[dec.deployments.gpus[dc_ok] == g]
        transfer = kv_transfer_s(w, pre, system, p, traffic.isl, int(g))[pf_ok]
        pass_s = pre.served.prefill_pass_s[pf_ok]
        slowed = pre_rate * pass_s / np.maximum(pass_s, transfer)
        ttft = pass_s + transfer
        dec_rate = dec.served.output_tokens_per_s_per_gpu[cols]
        per_gpu = 1.0 / (1.0 / dec_rate[None, :] + (traffic.isl / osl) / slowed[:, None])
        ttft_all = ttft[:, None] + dec.served.decode_step_s[cols][None, :]
        ok = np.ones(per_gpu.shape, dtype=bool)
        if traffic.ttft_s:
            ok &= ttft_all <= traffic.ttft_s
        if not ok.any():
            continue
        flat = int(np.argmax(np.where(ok, per_gpu, -np.inf)))
        i, j = np.unravel_index(flat, per_gpu.shape)
        if best is None or per_gpu[i, j] > best["output_tokens_per_s_per_gpu"]:
            share = (traffic.isl / slowed[i]) / (traffic.isl / slowed[i] + osl / dec_rate[j])
            a, b = int(pf_ok[i]), int(cols[j])
            pd, dd = pre.deployments, dec.deployments
            best = {
                "output_tokens_per_s_per_gpu": float(per_gpu[i, j]),
                "tokens_per_s_per_user": float(dec.per_user[b]),
                "ttft_ms": float(ttft_all[i, j] * 1e3),
                "tpot_ms": float(dec.served.tpot_s[b] * 1e3),
                "kv_transfer_ms": float(transfer[i] * 1e3),
                "prefill_gpu_share": float(share),
                "prefill_gpus": int(max(round(share * gpus / pd.gpus[a]), 1) * pd.gpus[a]),
                "decode_gpus": int(max(round((1 - share) * gpus / dd.gpus[b]), 1) * dd.gpus[b]),
                "prefill": {"tp": int(pd.tp[a]), "pp": int(pd.pp[a]), "dp": int(pd.dp[a]),
                            "ep": int(pd.ep[a]), "prompts_per_pass":
                                int(pre.served.prompts_per_pass[a])},
                "decode": {"tp": int(dd.tp[b]), "pp": int(dd.pp[b]), "dp": int(dd.dp[b]),
                           "ep": int(dd.ep[b]), "batch_per_dp_rank": int(dd.batch[b])},
            }
    return best

"""Disaggregated serving: a prefill pool and a decode pool with their own layouts.

The prefill pool runs prompts only (input tokens/s per GPU ``P``, TTFT its pass), the decode
pool decodes only (output tokens/s per GPU ``D``, its own batch, no prefill in its steps:
TPOT is the bare decode step). Balanced, each request's ``isl`` prompt tokens and ``osl``
output tokens need ``isl / P + osl / D`` GPU-seconds, so the pair serves
``1 / (1 / D + (isl / osl) / P)`` output tokens/s per GPU, with ``f = (isl / P) /
(isl / P + osl / D)`` of the GPUs prefilling. Pools are whole instances that fit in the
cluster together (:func:`whole_pools`): the figure is the rate of the best such pair, so a
decode instance that fills the cluster leaves no room for prefill and is not a pair.

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
    pre_gpus = np.asarray(pre.deployments.gpus, dtype=float)[pf_ok]
    best: dict[str, Any] | None = None
    for g in np.unique(dec.deployments.gpus[dc_ok]):
        cols = dc_ok[dec.deployments.gpus[dc_ok] == g]
        transfer = kv_transfer_s(w, pre, system, p, traffic.isl, int(g))[pf_ok]
        pass_s = pre.served.prefill_pass_s[pf_ok]
        slowed = pre_rate * pass_s / np.maximum(pass_s, transfer)
        ttft = pass_s + transfer
        dec_rate = dec.served.output_tokens_per_s_per_gpu[cols]
        per_gpu, n_pre, n_dec = whole_pools(slowed, pre_gpus, dec_rate, float(g),
                                            traffic.isl / osl, gpus)
        ttft_all = ttft[:, None] + dec.served.decode_step_s[cols][None, :]
        ok = n_dec > 0
        if traffic.ttft_s:
            ok &= ttft_all <= traffic.ttft_s
        if not ok.any():
            continue
        flat = int(np.argmax(np.where(ok, per_gpu, -np.inf)))
        i, j = np.unravel_index(flat, per_gpu.shape)
        if best is None or per_gpu[i, j] > best["output_tokens_per_s_per_gpu"]:
            a, b = int(pf_ok[i]), int(cols[j])
            pd, dd = pre.deployments, dec.deployments
            prefill_gpus = int(n_pre[i, j]) * int(pd.gpus[a])
            decode_gpus = int(n_dec[i, j]) * int(dd.gpus[b])
            best = {
                "output_tokens_per_s_per_gpu": float(per_gpu[i, j]),
                "tokens_per_s_per_user": float(dec.per_user[b]),
                "ttft_ms": float(ttft_all[i, j] * 1e3),
                "tpot_ms": float(dec.served.tpot_s[b] * 1e3),
                "kv_transfer_ms": float(transfer[i] * 1e3),
                "prefill_gpu_share": prefill_gpus / (prefill_gpus + decode_gpus),
                "prefill_gpus": prefill_gpus,
                "decode_gpus": decode_gpus,
                "prefill": {"tp": int(pd.tp[a]), "pp": int(pd.pp[a]), "dp": int(pd.dp[a]),
                            "ep": int(pd.ep[a]), "prompts_per_pass":
                                int(pre.served.prompts_per_pass[a])},
                "decode": {"tp": int(dd.tp[b]), "pp": int(dd.pp[b]), "dp": int(dd.dp[b]),
                           "ep": int(dd.ep[b]), "batch_per_dp_rank": int(dd.batch[b])},
            }
    return best


def whole_pools(prefill_rate: Any, prefill_gpus: Any, decode_rate: Any, decode_gpus: float,
                isl_per_osl: float, gpus: int) -> tuple[Any, Any, Any]:
    """Output tokens/s per GPU of the best whole-instance pools on ``gpus`` GPUs, and the
    instance counts (prefill rows x decode columns; 0 decode instances: no pair fits).

    ``n_d`` decode instances of ``decode_gpus`` GPUs decode ``n_d g_d D`` tokens/s;
    ``n_p`` prefill instances of ``g_p`` GPUs feed ``n_p g_p P / (isl / osl)``; the pair
    serves the smaller over the ``n_p g_p + n_d g_d`` GPUs it holds, which must fit in
    ``gpus``. For each ``n_d`` the prefill count is the whole number on either side of the
    balance (``n_p g_p P = n_d g_d D isl / osl``) that fits.
    """
    p_rate = np.asarray(prefill_rate, dtype=float)[:, None, None]
    g_p = np.asarray(prefill_gpus, dtype=float)[:, None, None]
    d_rate = np.asarray(decode_rate, dtype=float)[None, :, None]
    n_d = np.arange(1, max(int(gpus // decode_gpus), 1) + 1, dtype=float)[None, None, :]
    room = np.floor((gpus - n_d * decode_gpus) / g_p)  # prefill instances that fit
    balance = n_d * decode_gpus * d_rate * isl_per_osl / np.maximum(g_p * p_rate, 1e-300)
    best = np.full(np.broadcast_shapes(p_rate.shape, d_rate.shape, n_d.shape), -np.inf)
    counts = np.zeros_like(best)
    for n_p in (np.floor(balance), np.ceil(balance)):
        n_p = np.minimum(np.maximum(n_p, 1.0), room)
        served = np.minimum(n_d * decode_gpus * d_rate, n_p * g_p * p_rate / isl_per_osl)
        held = np.maximum(n_p * g_p + n_d * decode_gpus, 1.0)
        rate = np.where(n_p >= 1.0, served / held, -np.inf)
        better = rate > best
        best, counts = np.where(better, rate, best), np.where(better, n_p, counts)
    k = np.argmax(best, axis=2)[..., None]
    rate = np.take_along_axis(best, k, axis=2)[..., 0]
    fits = np.isfinite(rate)
    n_pre = np.where(fits, np.take_along_axis(counts, k, axis=2)[..., 0], 0).astype(int)
    n_dec = np.where(fits, (k[..., 0] + 1), 0).astype(int)
    return np.where(fits, rate, 0.0), n_pre, n_dec

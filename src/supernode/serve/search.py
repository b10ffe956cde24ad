"""Search serving deployments of a model on a cluster against latency targets.

Every layout of :mod:`supernode.serve.candidates` on the cluster's GPUs (TP inside the
scale-up domain), each with the batches its KV cache allows, is served
(:func:`supernode.serve.throughput.serve`) in one vectorised pass; with a concurrency the
batch is the requests in flight per attention-DP rank, with a request rate the smallest
that keeps up. A deployment meets the targets when it fits and its TTFT and TPOT are within
them. Ranked by output tokens/s per GPU, each layout at its best batch; the Pareto frontier
of tokens/s per GPU against tokens/s per user (1 / TPOT) is taken over every batch that
fits, targets aside. Disaggregated prefill/decode pools (:mod:`supernode.serve.disagg`)
are compared and chosen only where they serve more per GPU.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from supernode.estimate.system import SystemModel
from supernode.serve.calibration import ServeConstants
from supernode.serve.candidates import layouts, with_batches
from supernode.serve.deploy import Deployments
from supernode.serve.precision import ServePrecision
from supernode.serve.throughput import Served, serve
from supernode.serve.traffic import Traffic
from supernode.spec.workload import WorkloadSpec


@dataclass(frozen=True)
class Evaluated:
    """Every (layout, batch) tried, what it serves, and whether it meets the targets."""

    deployments: Deployments
    served: Served
    meets: np.ndarray
    per_gpu: np.ndarray
    per_user: np.ndarray
    instances: np.ndarray
    limited_by_target: np.ndarray


def evaluate(w: WorkloadSpec, system: SystemModel, c: ServeConstants, p: ServePrecision,
             traffic: Traffic, gpus: int) -> Evaluated:
    """Serve ``traffic`` on every layout of ``gpus`` GPUs at every batch it allows."""
    lay = layouts(w, gpus, max_tp=max(system.scale_up_size, 1))
    probe = serve(w, lay, system, c, p, traffic)
    limit = probe.max_batch
    instances = gpus // lay.gpus
    if traffic.concurrency:
        per_rank = np.floor(traffic.concurrency / np.maximum(instances * lay.dp, 1))
        limit = np.minimum(limit, np.maximum(per_rank, 1))
    d = with_batches(lay, limit, None)
    r = serve(w, d, system, c, p, traffic)
    instances = gpus // d.gpus
    used = (instances * d.gpus).astype(float) / gpus
    per_gpu = r.output_tokens_per_s_per_gpu * used
    fits = np.asarray(r.fits, dtype=bool)
    target_ok = np.ones(fits.shape, dtype=bool)
    if traffic.tpot_s:
        target_ok &= r.tpot_s <= traffic.tpot_s
    if traffic.ttft_s:
        target_ok &= r.ttft_s <= traffic.ttft_s
    meets = fits & target_ok
    if traffic.request_rate:
        rate = per_gpu * gpus / max(traffic.osl or 1.0, 1.0)
        keeps_up = rate >= traffic.request_rate
        meets &= keeps_up
        per_gpu = np.minimum(per_gpu, traffic.request_rate * (traffic.osl or 1.0) / gpus)
    return Evaluated(d, r, meets, per_gpu, r.tokens_per_s_per_user, instances,
                     fits & ~target_ok)


def best_per_layout(e: Evaluated) -> np.ndarray:
    """Index of each layout's best row that meets the targets (the highest tokens/s per
    GPU; among equals, as with a request rate served, the fastest per user), best first."""
    d = e.deployments
    key = d.tp * 10**9 + d.pp * 10**6 + d.dp * 10**3 + d.ep
    score = np.where(e.meets, e.per_gpu, -np.inf)
    user = np.where(np.isfinite(e.per_user), e.per_user, 0.0)
    order = np.lexsort((-user, -score, key))  # ties (a rate served): the fastest per user
    first = np.ones(order.size, dtype=bool)
    first[1:] = key[order][1:] != key[order][:-1]
    chosen = order[first]
    chosen = chosen[np.isfinite(score[chosen])]
    return chosen[np.lexsort((-user[chosen], -score[chosen]))]


def pareto(e: Evaluated) -> np.ndarray:
    """Indices of the rows that fit and no other fitting row beats on both tokens/s per GPU
    and tokens/s per user, by tokens/s per user ascending."""
    fits = np.flatnonzero(np.asarray(e.served.fits, dtype=bool) & np.isfinite(e.per_user))
    if fits.size == 0:
        return fits
    order = fits[np.lexsort((-e.per_gpu[fits], -e.per_user[fits]))]
    best = -np.inf
    keep = []
    for i in order:  # by user speed descending: keep what raises the per-GPU figure
        if e.per_gpu[i] > best:
            keep.append(i)
            best = e.per_gpu[i]
    return np.asarray(keep[::-1], dtype=np.int64)


def row(e: Evaluated, i: int) -> dict[str, Any]:
    """One deployment as a JSON-ready dict (SI in the names' units)."""
    d, r = e.deployments, e.served
    return {
        "tp": int(d.tp[i]), "pp": int(d.pp[i]), "dp": int(d.dp[i]), "ep": int(d.ep[i]),
        "batch_per_dp_rank": int(d.batch[i]), "gpus_per_instance": int(d.gpus[i]),
        "instances": int(e.instances[i]),
        "output_tokens_per_s_per_gpu": float(e.per_gpu[i]),
        "tokens_per_s_per_user": float(e.per_user[i]),
        "ttft_ms": float(r.ttft_s[i] * 1e3), "tpot_ms": float(r.tpot_s[i] * 1e3),
        "weights_gbyte_per_gpu": float(r.weights_bytes[i] / 1e9),
        "kv_tokens_per_gpu": float(max(r.kv_tokens[i], 0.0)),
        "kv_batch_limit": int(r.max_batch[i]),
    }


def why_lost(e: Evaluated, i: int, best: int) -> str:
    """Why deployment ``i`` serves fewer tokens/s per GPU than ``best`` (one clause):
    fewer sequences in flight per GPU (held by its KV cache or by the targets), or a slower
    step at as many."""
    d, r = e.deployments, e.served
    gap = 1.0 - e.per_gpu[i] / e.per_gpu[best]
    per_gpu = d.batch / (d.tp * d.pp)  # sequences in flight per GPU
    if gap < 0.005:
        return (f"as many tokens/s per GPU, slower per user: TPOT {r.tpot_s[i] * 1e3:.1f} ms "
                f"against {r.tpot_s[best] * 1e3:.1f} ms")
    if per_gpu[i] < per_gpu[best] and d.batch[i] >= r.max_batch[i]:
        why = (f"its KV cache holds {int(r.max_batch[i]):,} sequences per rank "
               f"({per_gpu[i]:,.1f} per GPU against {per_gpu[best]:,.1f}; "
               f"{r.weights_bytes[i] / 1e9:.1f} GB of weights per GPU)")
    elif per_gpu[i] < per_gpu[best] and r.tpot_s[i] <= r.tpot_s[best] * 1.05:
        why = (f"the latency targets cap it at {int(d.batch[i]):,} sequences per rank "
               f"({per_gpu[i]:,.1f} per GPU against {per_gpu[best]:,.1f})")
    else:
        why = (f"a slower step: TPOT {r.tpot_s[i] * 1e3:.1f} ms against "
               f"{r.tpot_s[best] * 1e3:.1f} ms with {per_gpu[i]:,.1f} sequences per GPU "
               f"against {per_gpu[best]:,.1f}")
    return f"{gap:.0%} fewer tokens/s per GPU: {why}"


def infeasible_reason(e: Evaluated) -> str:
    """Why nothing meets the targets (the closest miss)."""
    r = e.served
    fits = np.asarray(r.fits, dtype=bool)
    if not fits.any():
        lightest = int(np.argmin(r.weights_bytes))
        return (f"no layout fits: the lightest holds {r.weights_bytes[lightest] / 1e9:.1f} GB "
                f"of weights per GPU with no room for one sequence's KV cache")
    fastest = int(np.argmin(np.where(fits, r.tpot_s, np.inf)))
    first = int(np.argmin(np.where(fits, r.ttft_s, np.inf)))
    return (f"no deployment meets the targets: the lowest TPOT is "
            f"{r.tpot_s[fastest] * 1e3:.1f} ms, the lowest TTFT {r.ttft_s[first] * 1e3:.1f} ms")

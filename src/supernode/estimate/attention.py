"""Seconds of the attention core of one layer on one GPU, as the kernels really run it.

The executed FLOPs are those of :func:`supernode.estimate.compute.attention_core_flops`
(``mb s / cp`` local queries, ``s / 2`` causal keys each or the window's, ``a / tp``
heads): context parallelism always splits the work ``cp`` ways. What it changes is the
*calls* the kernel runs, hence their rate (:func:`~supernode.estimate.kernels.
attention_rate`, measured by length, head size and mask):

* no CP, ``all_gather`` and ``a2a``: one causal call over the whole sequence's keys (the
  all-gather variant attends each local chunk to all keys before it; Ulysses attends the
  whole sequence with ``1 / cp`` of the heads).
* a ring (``p2p``, and the ring level of ``a2a+p2p``) of ``r`` ranks, each holding ``n``
  tokens in two zig-zag chunks (Transformer Engine ``AttnFuncWithCPAndKVP2P``): one causal
  call of length ``n`` on its own keys (``1 / r`` of the work), then ``r - 1`` non-causal
  calls on received chunks, half of them all ``n`` queries over the first chunk of ``n / 2``
  keys, half the second query chunk (``n / 2``) over all ``n`` keys (each half the work of
  an ``n x n`` block). Short rings run long, efficient calls; long rings short ones.
* a sliding-window layer: one causal call as long as twice its mean keys per query (the
  window, in the kernel's terms); with CP the window is not split further.

PyTorch's context_parallel (a stack's ``context_parallel: torch``) runs the ring's calls
with either rotate method, and merges each round's partial output in eager fp32 ops
(:func:`cp_merge_s`, the bytes of :func:`~supernode.workload.cp_exchange.
torch_merge_bytes` at HBM speed).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from supernode.estimate.attention_kernels import DEFAULT_KERNEL
from supernode.estimate.calibration import Calibration
from supernode.estimate.kernels import attention_s, stream_s
from supernode.estimate.system import SystemModel
from supernode.spec.plan import PlanArrays
from supernode.spec.workload import WorkloadSpec
from supernode.workload.cp_exchange import cp_ring_size, torch_merge_bytes
from supernode.workload.shapes import local_tokens
from supernode.workload.traffic import attention_kv_heads, torch_cp


def attention_core_s(w: WorkloadSpec, a: PlanArrays, system: SystemModel,
                     kernel: str = DEFAULT_KERNEL) -> tuple[Any, Any]:
    """(forward, backward) seconds of one layer's attention core (mean over full and
    windowed layers) per micro-batch on one GPU, with ``kernel``'s measured rates."""
    m = local_tokens(w, a)
    heads = w.n_heads / a.tp.astype(float)
    d = w.qk_head_dim
    s = float(w.seq_len)
    ring = np.maximum(cp_ring_size(a, torch_cp(w)), 1).astype(float)
    # tokens one ring rank holds: the sequence over the ring (an all-to-all level gathers
    # its group's tokens and splits the heads instead)
    n = s / ring
    forward: Any = 0.0
    backward: Any = 0.0
    for share, keys in w.attention_key_mix():
        flops = 2.0 * m * keys * heads * (w.qk_head_dim + w.v_head_dim)
        windowed = bool(np.all(np.asarray(keys) < s / 2.0))
        if windowed:
            f, b = attention_s(flops, system, d, 2.0 * np.asarray(keys), True, kernel)
        else:
            own = flops / ring
            rest = (flops - own) / 2.0
            f0, b0 = attention_s(own, system, d, n, True, kernel)
            f1, b1 = attention_s(rest, system, d, n / 2.0, False, kernel)
            f2, b2 = attention_s(rest, system, d, n, False, kernel)
            f, b = f0 + f1 + f2, b0 + b1 + b2
        forward, backward = forward + share * f, backward + share * b
    return forward, backward


def cp_merge_s(w: WorkloadSpec, a: PlanArrays, system: SystemModel, cal: Calibration
               ) -> tuple[Any, Any]:
    """(forward, backward) seconds per layer and micro-batch on one GPU of the eager fp32
    merges and accumulations of PyTorch's context-parallel attention (0 on other stacks
    and without CP): :func:`~supernode.workload.cp_exchange.torch_merge_bytes` of the
    rank's output and K elements (the key/value heads the attention sees, ``/ tp``) at
    HBM speed."""
    if not torch_cp(w):
        return 0.0, 0.0
    m = local_tokens(w, a)
    tp = a.tp.astype(float)
    out = m * w.n_heads / tp * w.v_head_dim
    kv = m * attention_kv_heads(w) / tp * w.qk_head_dim
    forward, backward = torch_merge_bytes(out, kv, a.cp)
    return stream_s(forward, system, cal), stream_s(backward, system, cal)

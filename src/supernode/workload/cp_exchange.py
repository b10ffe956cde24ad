"""The context-parallel exchange: what each ``cp_comm_type`` moves and what of it hides.

One rule, read by the analytic estimate (:mod:`supernode.estimate.step`,
:mod:`supernode.estimate.attention`) and by the flow simulator (:mod:`supernode.netsim.
passes`). Megatron-Core's ``--cp-comm-type`` runs Transformer Engine's context-parallel
attention (TE ``attention.py``: ``AttnFuncWithCPAndKVP2P``, ``AttnFuncWithCPAndKVAllGather``,
``AttnFuncWithCPAndQKVOA2A``; Megatron-LM ``docs/source/api-guide/context_parallel.rst``).
The sequence is cut into ``2 cp`` chunks and rank ``i`` holds chunks ``i`` and
``2 cp - 1 - i`` (zig-zag load balancing: every rank does the same causal work; torchtitan's
ring attention balances round-robin to the same effect). Per layer and micro-batch, with
``kv`` the bytes of the rank's local K and V (``s / cp`` tokens, ``kv_heads / tp`` heads):

* ``p2p`` (ring pass-KV, Megatron-Core's default): forward ``cp - 1`` hops of ``kv``, each
  overlapped with the attention step on the previously received chunk; backward ``cp - 1``
  hops of K, V and their gradients (``2 kv``). The hops hide under the attention core but
  its last step (``(cp - 1) / cp`` of it): nothing is received during the last step.
* ``all_gather``: forward an all-gather of K and V (``cp kv`` gathered); backward gathers
  them again (each rank keeps only its chunk) and reduce-scatters dK, dV (``cp kv``). On the
  critical path (the attention waits for the whole sequence's keys).
* ``a2a`` (DeepSpeed-Ulysses): forward all-to-alls of Q, K and V before the attention
  (sequence-split to head-split) and of the output after it; backward the same four for
  the gradients. Heads must divide: ``cp`` divides ``kv_heads / tp``. Exposed.
* ``a2a+p2p`` (hierarchical): the all-to-all inside groups of :func:`cp_a2a_size` ranks
  (TE: "a2a within low-level CP groups (e.g., via NVLink), p2p between high-level CP groups
  (e.g., via IBLink)"), the ring over the ``cp / a2a`` groups; the all-to-alls exposed, the
  ring hidden as for ``p2p``.

Message sizes follow nccl-tests (gathered buffer for all_gather / reduce_scatter, per-rank
send buffer for all_to_all, the sent tensor for p2p).
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from supernode.spec.plan_arrays import CP_COMM_CODES, DEFAULT_CP_COMM_TYPE

__all__ = ["CP_COMM_CODES", "DEFAULT_CP_COMM_TYPE", "cp_a2a_size", "cp_exchange", "cp_ring_size",
           "ring_hidden_share"]

#: GPUs of one NVLink host the hierarchical all-to-all stays in (an assumption: Megatron's
#: ``--hierarchical-context-parallel-sizes`` is set by the user; NVIDIA's examples put the
#: first level on one 8-GPU host).
HIERARCHICAL_A2A_GPUS = 8


def cp_a2a_size(a: Any) -> Any:
    """Ranks of the all-to-all level of the CP exchange: ``cp`` for ``a2a``, 1 for ``p2p``
    and ``all_gather``, for ``a2a+p2p`` the largest divisor of ``cp`` whose ``tp`` copies
    fit :data:`HIERARCHICAL_A2A_GPUS` (arrays broadcast over plans)."""
    cp = np.asarray(a.cp)
    code = np.asarray(a.cp_comm)
    if not np.any(code >= CP_COMM_CODES["a2a"]):  # rings and all-gathers only (the search)
        return np.ones_like(cp)
    inner = np.ones_like(cp)
    for d in range(2, HIERARCHICAL_A2A_GPUS + 1):
        inner = np.where((cp % d == 0) & (d * np.asarray(a.tp) <= HIERARCHICAL_A2A_GPUS),
                         d, inner)
    return np.where(code == CP_COMM_CODES["a2a"], cp,
                    np.where(code == CP_COMM_CODES["a2a+p2p"], inner, 1))


def cp_ring_size(a: Any) -> Any:
    """Ranks of the ring level (ring pass-KV): ``cp / a2a`` for ``p2p`` and ``a2a+p2p``, 1
    for ``all_gather`` and ``a2a`` (no ring)."""
    ring = np.asarray(a.cp) // np.maximum(cp_a2a_size(a), 1)
    return np.where(np.asarray(a.cp_comm) == CP_COMM_CODES["all_gather"], 1, ring)


def ring_hidden_share(a: Any) -> Any:
    """Share of the attention core the ring hops hide under: ``(r - 1) / r`` for a ring of
    ``r`` ranks (each hop runs beside one attention step, the last step has none)."""
    r = np.maximum(cp_ring_size(a), 1).astype(float)
    return (r - 1.0) / r


Phase = Literal["forward", "backward"]
Kind = Literal["all_gather", "reduce_scatter", "all_to_all", "p2p"]


def cp_exchange(kv: Any, q: Any, out: Any, a: Any) -> list[tuple[Phase, Kind, Any, Any, Any, bool]]:
    """The CP exchange of one layer and micro-batch on one GPU, by ``cp_comm_type``.

    ``kv``, ``q``, ``out``: bytes of the rank's local K+V, Q and attention output (its
    ``s / cp`` tokens, its ``/ tp`` heads). Returns ``(phase, kind, message_bytes,
    calls_per_layer, group_size, hidden)`` entries; ``hidden``: runs beside the attention
    core (the ring), else on the critical path. Calls are 0 where a plan does not use
    that entry.
    """
    code = np.asarray(a.cp_comm)
    on = np.asarray(a.cp) > 1
    ring = cp_ring_size(a)
    inner = cp_a2a_size(a)
    hops = np.where(on, ring - 1, 0)
    gather = on & (code == CP_COMM_CODES["all_gather"])
    a2a = on & (inner > 1)
    cp = np.asarray(a.cp)
    return [
        ("forward", "p2p", kv, hops, ring, True),
        ("backward", "p2p", 2 * kv, hops, ring, True),
        ("forward", "all_gather", cp * kv, gather * 1, cp, False),
        ("backward", "all_gather", cp * kv, gather * 1, cp, False),
        ("backward", "reduce_scatter", cp * kv, gather * 1, cp, False),
        # Q, K+V and the output forward; their gradients backward
        ("forward", "all_to_all", q + kv + out, a2a * 1, inner, False),
        ("backward", "all_to_all", q + kv + out, a2a * 1, inner, False),
    ]

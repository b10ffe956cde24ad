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

PyTorch's experimental ``context_parallel`` (a stack's ``context_parallel: torch``;
``torch/distributed/tensor/experimental/_attention.py``, read at pytorch/pytorch
0123248a: ``_templated_ring_attention``, ``_templated_ring_attention_backward``,
``_SDPAMerger``, ``_AllGatherRotater``, ``_AllToAllRotater``) runs ``cp`` rounds of one
flash-attention call each whatever the rotate method (round 0 causal on the local
round-robin chunks, then the same halves as the ring above), so its calls are the ring's
(:func:`cp_ring_size` with ``torch``). Its exchange (:func:`cp_exchange` with ``torch``):

* ``all_gather`` (the ``ALL_GATHER`` rotater, torchtitan's default rotate method): K and V
  gathered once per pass (``cp kv``), issued before round 0 and waited at round 1, so it
  runs beside round 0 (``1 / cp`` of the core) and again in the backward;
* ``p2p`` (the ``ALL_TO_ALL`` rotater, ``permute_tensor``): ``cp - 1`` hops of ``kv`` per
  pass, each beside one round;
* both: the backward passes the dK, dV accumulators round the ring in fp32
  (``convert_to_f32``: ``2 kv`` bytes per send) through ``permute_tensor`` after every
  round, ``cp`` sends; each is waited one round later, the last after the loop (exposed).

It has no all-to-all (Ulysses) exchange: ``a2a`` and ``a2a+p2p`` keep Transformer Engine's
rule. Its rounds also merge the partial outputs in eager fp32 ops
(:func:`torch_merge_bytes`).
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from supernode.spec.plan_arrays import CP_COMM_CODES, DEFAULT_CP_COMM_TYPE

__all__ = ["CP_COMM_CODES", "DEFAULT_CP_COMM_TYPE", "cp_a2a_size", "cp_exchange", "cp_ring_size",
           "hidden_shares", "ring_hidden_share", "torch_exposed_s", "torch_hidden_shares",
           "torch_merge_bytes"]

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


def cp_ring_size(a: Any, torch: bool = False) -> Any:
    """Ranks of the ring level (ring pass-KV): ``cp / a2a`` for ``p2p`` and ``a2a+p2p``, 1
    for ``all_gather`` and ``a2a`` (no ring); with ``torch`` (PyTorch's context_parallel)
    ``all_gather`` runs the ring's ``cp`` rounds too."""
    ring = np.asarray(a.cp) // np.maximum(cp_a2a_size(a), 1)
    if torch:
        return ring
    return np.where(np.asarray(a.cp_comm) == CP_COMM_CODES["all_gather"], 1, ring)


def ring_hidden_share(a: Any) -> Any:
    """Share of the attention core the ring hops hide under: ``(r - 1) / r`` for a ring of
    ``r`` ranks (each hop runs beside one attention step, the last step has none)."""
    r = np.maximum(cp_ring_size(a), 1).astype(float)
    return (r - 1.0) / r


Phase = Literal["forward", "backward"]
Kind = Literal["all_gather", "reduce_scatter", "all_to_all", "p2p"]


def cp_exchange(kv: Any, q: Any, out: Any, a: Any, torch: bool = False
                ) -> list[tuple[Phase, Kind, Any, Any, Any, bool]]:
    """The CP exchange of one layer and micro-batch on one GPU, by ``cp_comm_type``.

    ``kv``, ``q``, ``out``: bytes of the rank's local K+V, Q and attention output (its
    ``s / cp`` tokens, its ``/ tp`` heads, 16-bit). Returns ``(phase, kind, message_bytes,
    calls_per_layer, group_size, hidden)`` entries; ``hidden``: runs beside the attention
    core (the ring, or PyTorch's rounds: :func:`torch_hidden_shares`), else on the critical
    path. Calls are 0 where a plan does not use that entry. ``torch``: PyTorch's
    context_parallel runs the ``p2p`` and ``all_gather`` plans (module doc).
    """
    code = np.asarray(a.cp_comm)
    on = np.asarray(a.cp) > 1
    cp = np.asarray(a.cp)
    entries = _te_exchange(kv, q, out, a, on & ~_torch_runs(a, torch))
    mine = _torch_runs(a, torch) & on
    hops = np.where(mine & (code == CP_COMM_CODES["p2p"]), cp - 1, 0)
    gather = mine & (code == CP_COMM_CODES["all_gather"])
    return entries + [
        ("forward", "p2p", kv, hops, cp, True),
        ("backward", "p2p", kv, hops, cp, True),
        ("forward", "all_gather", cp * kv, gather * 1, cp, True),
        ("backward", "all_gather", cp * kv, gather * 1, cp, True),
        # dK, dV in fp32 (twice the 16-bit bytes): cp - 1 sends beside rounds 1..cp-1,
        # the last waited after the loop
        ("backward", "p2p", 2 * kv, np.where(mine, cp - 1, 0), cp, True),
        ("backward", "p2p", 2 * kv, mine * 1, cp, False),
    ]


def _torch_runs(a: Any, torch: bool) -> Any:
    """Where PyTorch's context_parallel runs the plan's exchange (``p2p``, ``all_gather``)."""
    code = np.asarray(a.cp_comm)
    return np.asarray(torch) & ((code == CP_COMM_CODES["p2p"])
                                | (code == CP_COMM_CODES["all_gather"]))


def torch_hidden_shares(a: Any) -> tuple[Any, Any]:
    """Shares of the forward and of the backward attention core that PyTorch's hidden CP
    exchange runs beside: forward ``1 / cp`` with the all-gather rotater (round 0 only),
    ``(cp - 1) / cp`` with the all-to-all one (a hop beside each round but the last);
    backward the whole core (the gather or hops and the dK/dV sends share its rounds)."""
    cp = np.maximum(np.asarray(a.cp), 1).astype(float)
    gather = np.asarray(a.cp_comm) == CP_COMM_CODES["all_gather"]
    return np.where(gather, 1.0 / cp, (cp - 1.0) / cp), np.ones_like(cp)


def hidden_shares(a: Any, torch: bool = False) -> tuple[Any, Any]:
    """Shares of the forward and of the backward attention core that the hidden CP exchange
    runs beside, in both engines: the ring's :func:`ring_hidden_share` for both passes, or
    with ``torch`` (PyTorch's context_parallel) :func:`torch_hidden_shares`."""
    if torch:
        return torch_hidden_shares(a)
    share = ring_hidden_share(a)
    return share, share


def torch_exposed_s(ring_f: Any, ring_b: Any, serial_s: Any, core_f: Any, core_b: Any,
                    a: Any) -> Any:
    """Exposed seconds of PyTorch's context-parallel exchange per step: the critical-path
    part (the last dK/dV send) and, per pass, the hidden part beyond the share of that
    pass's attention core it runs beside (:func:`torch_hidden_shares`). ``ring_f``,
    ``ring_b``: issued seconds of the hidden forward and backward entries; ``core_f``:
    every forward run of the core (with recomputation's), ``core_b`` the backward's."""
    share_f, share_b = torch_hidden_shares(a)
    return (serial_s + np.maximum(ring_f - share_f * core_f, 0.0)
            + np.maximum(ring_b - share_b * core_b, 0.0))


def torch_merge_bytes(out_elements: Any, kv_elements: Any, cp: Any) -> tuple[Any, Any]:
    """HBM bytes PyTorch's context-parallel attention moves outside its kernels per layer
    and micro-batch on the busiest rank (forward, backward), counted from its source
    (module doc; ``convert_to_f32``). ``out_elements``: the rank's attention output (and
    query) elements; ``kv_elements``: those of its K (equally V).

    Forward: ``key.contiguous()`` / ``value.contiguous()`` (``8 K``), a 16-bit to fp32
    copy of round 0's output and an fp32 to 16-bit copy of the result (``12 O``), per later
    round an fp32 copy of the block's output and the merge ``out - sigmoid(lse_b - lse) *
    (out - out_b)`` in three eager ops (``38 O``) and the ``torch.cat`` of K, V sent on
    (``8 K``, rounds 0..cp-2); the last rank merges every round in full, the busiest
    (rank ``r`` merges ``r`` rounds in full, the others over half its queries, ``19 O``
    and an ``8 O`` re-``cat``). Backward: the fp32 zero accumulators (``4 O + 8 K``),
    round 0's accumulation and ``cat`` (``10 O + 36 K``), per later round the fp32 ``cat``
    sent on (``16 K``) and the K, V ``cat`` (``8 K``) and either (a round over half the
    keys) dK, dV accumulated into half a chunk and re-``cat`` (``26 K``) with dQ
    accumulated (``10 O``), or (over half the queries) dK, dV accumulated (``20 K``) and
    dQ into half a chunk and re-``cat`` (``13 O``): the busier kind in every round, the
    last or the first rank; then the casts back (``6 O + 12 K``) and the ``contiguous``
    copies (``8 K``). The log-sum-exp updates (``n x heads`` fp32, 1/head_dim of these)
    are left out. Zero where ``cp`` is 1."""
    o = np.asarray(out_elements, dtype=float)
    k = np.asarray(kv_elements, dtype=float)
    cp = np.asarray(cp, dtype=float)
    later = np.maximum(cp - 1.0, 0.0)
    on = cp > 1
    forward = o * (12.0 + 38.0 * later) + k * 8.0 * cp
    per_round = 24.0 * k + np.maximum(26.0 * k + 10.0 * o, 20.0 * k + 13.0 * o)
    backward = o * 20.0 + k * 64.0 + later * per_round
    return np.where(on, forward, 0.0), np.where(on, backward, 0.0)


def _te_exchange(kv: Any, q: Any, out: Any, a: Any, on: Any
                 ) -> list[tuple[Phase, Kind, Any, Any, Any, bool]]:
    """Transformer Engine's exchange (module doc), on the plans ``on`` selects."""
    code = np.asarray(a.cp_comm)
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

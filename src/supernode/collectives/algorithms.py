"""Flat α-β collective algorithms: ring, double binary tree, halving-doubling, p2p.

Every function takes ``(op, message_bytes, ranks, fabric, tables)`` as numpy arrays
(bytes, rank counts) and returns seconds, ``inf`` where the algorithm does not serve
``op``. Each protocol (LL128, Simple; :mod:`~supernode.collectives.efficiency`) is costed
and the fastest kept, as NCCL's tuner does (``src/graph/tuning.cc``).

Multi-tier rings follow NCCL's topology-aware rings: a ring crosses each tier-``(j-1)``
group boundary once per channel, and NCCL runs one channel per NIC, so the traffic
leaving a group is spread over the ``inner`` ranks' links of that tier. Latency counts
each hop at its own tier (NCCL ``nInterSteps``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

from supernode.collectives.busbw import busbw_factor
from supernode.collectives.efficiency import PROTOCOLS, EfficiencyTable
from supernode.collectives.fabric import Fabric
from supernode.collectives.levels import Level, bottleneck_s, job_levels

RING_OPS = frozenset({"all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce"})
HALVING_DOUBLING_OPS = frozenset({"all_reduce", "all_gather", "reduce_scatter"})


def as_arrays(message_bytes, ranks) -> tuple[np.ndarray, np.ndarray]:
    """Broadcast ``message_bytes`` (float bytes) and ``ranks`` (int64) to one shape."""
    s = np.asarray(message_bytes, dtype=float)
    n = np.asarray(ranks, dtype=np.int64)
    s, n = np.broadcast_arrays(s, n)
    return s, n


def best_protocol_s(cost: Callable[[str], np.ndarray],
                    protocols: tuple[str, ...] = PROTOCOLS) -> np.ndarray:
    """Elementwise minimum of ``cost(protocol)`` over protocols (seconds)."""
    return np.minimum.reduce([np.asarray(cost(p), dtype=float) for p in protocols])


def _inapplicable(s: np.ndarray) -> np.ndarray:
    return np.full(s.shape, np.inf)


def ring_parts(op: str, s: np.ndarray, n: np.ndarray, levels: list[Level],
               protocol: str) -> tuple[np.ndarray, np.ndarray]:
    """Latency and bandwidth seconds of a ring under one protocol.

    Latency ``k · Σ_j hops_j · α_j`` with ``k = 2`` for all_reduce (reduce-scatter then
    all-gather), else 1. Bandwidth ``max_j (W/inner_j + S_half_j) / (B_j η_j)`` with
    ``W = factor(n) · S`` the per-rank wire bytes.
    """
    k = 2 if op == "all_reduce" else 1
    lat = k * sum(level.chain_hops * level.alpha_s for level in levels)
    wire = np.asarray(busbw_factor(op, n)) * s
    bw = bottleneck_s(levels, lambda lv: lv.transfer_s(wire / lv.inner, protocol))
    return lat, bw


def ring_time_s(op: str, message_bytes, ranks, fabric: Fabric,
                tables: Mapping[str, EfficiencyTable]) -> np.ndarray:
    """Ring (Thakur et al. 2005; NCCL rings), seconds.

    all_reduce ``2(n-1)α + 2(n-1)/n · S/B``; all_gather and reduce_scatter
    ``(n-1)α + (n-1)/n · S/B``; broadcast and reduce (pipelined chain) ``(n-1)α + S/B``;
    with ``B`` the bottleneck tier's effective rate (see the module docstring).
    """
    s, n = as_arrays(message_bytes, ranks)
    if op not in RING_OPS:
        return _inapplicable(s)
    levels = job_levels(fabric, n, tables)
    t = best_protocol_s(lambda p: sum(ring_parts(op, s, n, levels, p)))
    return np.where(n > 1, t, 0.0)


def tree_parts(s: np.ndarray, n: np.ndarray, levels: list[Level], protocol: str,
               chain_innermost: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Latency and bandwidth seconds of NCCL's double binary tree all-reduce.

    NCCL chains the ranks of the innermost group (``chain_innermost``) and builds two
    complementary binary trees across the ``m_j`` groups of each outer tier (Sanders,
    Speck & Träff 2009): latency ``2[(n_0 - 1)α_0 + Σ_j ceil(log2 m_j)·α_j]``. Each tree
    carries ``S/2``; a group is inner node of one tree and leaf of the other, so it sends
    ``2S`` spread over its ``inner`` links; a chained rank sends ``2S`` too (NCCL's tree
    algbw is half its bus bandwidth). With two members (``m_j = 2``) both trees are one
    edge and each member sends ``S``: why NCCL's 2-node tree beats the network-bound ring.
    """
    lat = np.zeros(s.shape)
    sent = {}
    for level in levels:
        members = level.size if level.index == 0 else -(-level.size // level.inner)
        if level.index == 0 and chain_innermost:
            lat = lat + (members - 1) * level.alpha_s
        else:
            lat = lat + np.ceil(np.log2(np.maximum(members, 1))) * level.alpha_s
        sent[level.index] = np.where(members > 2, 2.0, 1.0) * s
    bw = bottleneck_s(levels, lambda lv: lv.transfer_s(sent[lv.index] / lv.inner, protocol))
    return 2.0 * lat, bw


def tree_time_s(op: str, message_bytes, ranks, fabric: Fabric,
                tables: Mapping[str, EfficiencyTable]) -> np.ndarray:
    """Double binary tree all-reduce, ≈ ``2·log2(n)·α + 2·S/B`` across groups (seconds)."""
    s, n = as_arrays(message_bytes, ranks)
    if op != "all_reduce":
        return _inapplicable(s)
    levels = job_levels(fabric, n, tables)
    t = best_protocol_s(lambda p: sum(tree_parts(s, n, levels, p)))
    return np.where(n > 1, t, 0.0)


def halving_doubling_time_s(op: str, message_bytes, ranks, fabric: Fabric,
                            tables: Mapping[str, EfficiencyTable]) -> np.ndarray:
    """Recursive halving / doubling (Thakur, Rabenseifner & Gropp 2005), seconds.

    Reduce-scatter by recursive halving, all-gather by recursive doubling, all-reduce both:
    ``log2(n)`` steps each, step ``k`` exchanging ``S/2^(k+1)`` with the partner at
    distance ``2^k`` (nearest first, so the big exchanges stay on the fast tier) over
    that rank's own link: ``Σ_k α_j(k) + S/2^(k+1) / B_j(k)`` per phase. A non-power-of-two
    ``n`` adds one exchange of ``S`` per phase at the outermost tier used.
    """
    s, n = as_arrays(message_bytes, ranks)
    if op not in HALVING_DOUBLING_OPS:
        return _inapplicable(s)
    phases = 2 if op == "all_reduce" else 1
    levels = job_levels(fabric, n, tables)
    steps = np.floor(np.log2(np.maximum(n, 1))).astype(np.int64)
    top = np.asarray(fabric.tier_index_for_group(n))

    def cost(protocol: str) -> np.ndarray:
        total = np.zeros(s.shape)
        for k in range(int(steps.max(initial=0))):
            level = levels[fabric.tier_index_for_group(2 ** (k + 1))]
            step = level.alpha_s + level.transfer_s(s / 2 ** (k + 1), protocol)
            total = total + np.where(k < steps, step, 0.0)
        extra = np.choose(top, [lv.alpha_s + lv.transfer_s(s, protocol) for lv in levels])
        return phases * (total + np.where(n > 2 ** steps, extra, 0.0))

    return np.where(n > 1, best_protocol_s(cost), 0.0)


def p2p_time_s(op: str, message_bytes, ranks, fabric: Fabric,
               tables: Mapping[str, EfficiencyTable]) -> np.ndarray:
    """Point-to-point send/recv of ``S`` bytes between ranks ``ranks - 1`` apart: α + S/B.

    ``ranks`` is the span of the pair (2: neighbours), which fixes the tier crossed; the
    transfer uses one rank's link of that tier (seconds).
    """
    s, n = as_arrays(message_bytes, ranks)
    if op != "p2p":
        return _inapplicable(s)
    levels = job_levels(fabric, n, tables)
    top = np.asarray(fabric.tier_index_for_group(n))
    t = best_protocol_s(lambda p: np.choose(
        top, [lv.alpha_s + lv.transfer_s(s, p) for lv in levels]))
    return np.where(n > 1, t, 0.0)

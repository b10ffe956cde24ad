"""Test oracle: closed-form times of the flow realisations on an idle, non-blocking fabric.

``bandwidth_bytes_per_s`` is one rank's injection rate on the tier used (per direction),
``latency_s`` the one-way latency α of one step. These are the textbook α-β forms the
simulator reproduces at line rate (``tests/test_netsim_collectives.py``); the general
check, on every algorithm and tier, is the differential test against
:mod:`supernode.collectives` (``tests/test_collectives_differential.py``).
"""

from __future__ import annotations

import math

from supernode.collectives.trees import tree_sends


def ring_time_s(op: str, n: int, message_bytes: float, bandwidth_bytes_per_s: float,
                latency_s: float) -> float:
    """Ring: all-reduce ``2(n-1)(α + S/(nB))``; all-gather / reduce-scatter
    ``(n-1)(α + S/(nB))``; broadcast / reduce ``(n-1)α + S/B`` (seconds)."""
    if n < 2:
        return 0.0
    if op in ("broadcast", "reduce"):
        return (n - 1) * latency_s + message_bytes / bandwidth_bytes_per_s
    steps = 2 * (n - 1) if op == "all_reduce" else n - 1
    return steps * (latency_s + message_bytes / n / bandwidth_bytes_per_s)


def tree_time_s(n: int, message_bytes: float, bandwidth_bytes_per_s: float,
                latency_s: float) -> float:
    """NCCL's double binary tree all-reduce over ``n`` one-rank nodes:
    ``2 floor(log2 n) α + (S/2) d / B`` with ``d`` the most sends of one node over both
    trees (to its parent and to each child: 4 for most ``n > 3``, 2 for ``n = 2``)."""
    if n < 2:
        return 0.0
    out = float(tree_sends(n).max())
    depth = math.floor(math.log2(n))
    return 2 * depth * latency_s + message_bytes / 2 * out / bandwidth_bytes_per_s


def halving_doubling_time_s(op: str, n: int, message_bytes: float,
                            bandwidth_bytes_per_s: float, latency_s: float) -> float:
    """Recursive halving/doubling: ``Σ_k (α + S/2^(k+1)/B)`` per half (seconds); a rank
    count that is not a power of two adds ``α + S/B`` before and after."""
    if n < 2:
        return 0.0
    levels = math.floor(math.log2(n))
    half = sum(latency_s + message_bytes / 2 ** (k + 1) / bandwidth_bytes_per_s
               for k in range(levels))
    fold = latency_s + message_bytes / bandwidth_bytes_per_s if n > 2**levels else 0.0
    if op == "all_reduce":
        return 2 * half + 2 * fold
    return half + fold


def hierarchical_time_s(n: int, g0: int, message_bytes: float, inner_bytes_per_s: float,
                        inner_latency_s: float, outer_bytes_per_s: float,
                        outer_latency_s: float) -> float:
    """Two-level all-reduce: ring RS and AG of ``S`` over ``g0`` ranks inside a domain,
    the faster of ring and halving-doubling all-reduce of ``S/g0`` over ``n/g0`` domains
    along each rail (seconds)."""
    inside = 2 * ring_time_s("reduce_scatter", g0, message_bytes, inner_bytes_per_s,
                             inner_latency_s)
    m = n // g0
    across = min(ring_time_s("all_reduce", m, message_bytes / g0, outer_bytes_per_s,
                             outer_latency_s),
                 halving_doubling_time_s("all_reduce", m, message_bytes / g0,
                                         outer_bytes_per_s, outer_latency_s))
    return inside + across


def direct_all_to_all_time_s(n: int, message_bytes: float, bandwidth_bytes_per_s: float,
                             latency_s: float) -> float:
    """Direct all-to-all on a non-blocking fabric: ``α + (n-1)/n · S/B`` (seconds): every
    send is posted at once, one step of latency."""
    if n < 2:
        return 0.0
    return latency_s + (n - 1) / n * message_bytes / bandwidth_bytes_per_s


def oversubscribed_all_to_all_time_s(n: int, per_leaf: int, message_bytes: float,
                                     bandwidth_bytes_per_s: float, oversubscription: float,
                                     latency_s: float) -> float:
    """Direct all-to-all over ranks spread ``per_leaf`` to a leaf whose uplinks carry
    ``1/oversubscription`` of its down bandwidth, with ideal load balance (spraying):
    ``α + max((n-1)/n, o (n - k)/n) · S/B`` (seconds)."""
    nic = (n - 1) / n
    uplink = oversubscription * (n - per_leaf) / n
    return latency_s + max(nic, uplink) * message_bytes / bandwidth_bytes_per_s


def in_switch_time_s(n: int, message_bytes: float, bandwidth_bytes_per_s: float,
                     latency_s: float) -> float:
    """In-network all-reduce (NVLS): ``α + S(n+1)/n / B``: each rank sends its buffer to the
    switch plus its reduced shard back for multicast, and receives as much."""
    return latency_s + message_bytes * (n + 1) / n / bandwidth_bytes_per_s

"""Cost of a plan's collectives on the fabric: which tiers each rank group spans.

Ranks are laid out in Megatron-LM order, tensor-parallel innermost: ``tp, cp, dp, pp``
(Megatron-Core's default ``tp-cp-ep-dp-pp``), experts carved out of ``dp * cp`` right
after ``tp``. A group of ``n`` ranks at stride ``s`` puts ``min(n, G_j / s)`` members
inside each tier-``j`` group of ``G_j`` consecutive ranks, so a TP group of 8 on 8-GPU
domains stays on NVLink while a DP group at stride 8 crosses the scale-out fabric with
one member (and one NIC) per domain. The group's own :class:`Fabric` is built from
those counts and handed to :func:`supernode.collectives.collective_time_s`.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np

from supernode.collectives import Fabric, collective_time_s
from supernode.collectives.fabric import with_group_size as _with_group
from supernode.spec.plan import PlanArrays
from supernode.workload.traffic import CollectiveCall


def group_stride(dim: str, a: PlanArrays) -> np.ndarray:
    """Rank stride between consecutive members of a ``dim`` group (Megatron order)."""
    strides = {
        "tp": np.ones_like(a.tp),
        "cp": a.tp,
        "ep": a.tp,
        "dp": a.tp,  # gradients reduce over the dp x cp ranks, cp inside dp
        "dp_expert": a.tp * a.ep,
        "pp": a.tp * a.cp * a.dp,
    }
    return strides[dim]


@lru_cache(maxsize=4096)
def group_fabric(fabric: Fabric, stride: int, size: int) -> Fabric:
    """The fabric seen by ``size`` ranks spaced ``stride`` apart (members per tier)."""
    tiers = []
    previous = 1
    for tier in fabric.tiers:
        members = min(size, max(1, tier.group_size // stride)) if stride < tier.group_size \
            else 1
        if tier is fabric.tiers[-1]:
            members = size
        if members > previous:
            if members % previous:  # uneven split: keep only the slower tier (conservative)
                tiers = []
            tiers.append(_with_group(tier, members))
            previous = members
        if previous >= size:
            break
    if not tiers:  # a single rank: any tier, zero cost
        tiers.append(_with_group(fabric.tiers[0], 1))
    return Fabric(tuple(tiers))


def _group_keys(stride: np.ndarray, size: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Unique (stride, size) pairs and each plan's index into them (fast 1-D unique)."""
    key = stride.astype(np.int64) * (1 << 32) + size.astype(np.int64)
    unique, inverse = np.unique(key.ravel(), return_inverse=True)
    return np.stack([unique >> 32, unique & ((1 << 32) - 1)], axis=-1), inverse


def call_time_s(call: CollectiveCall, a: PlanArrays, fabric: Fabric
                ) -> tuple[Any, Any, np.ndarray]:
    """Seconds of one call and per step, and the index of the slowest tier crossed.

    All three are arrays over plans; the tier index points into ``fabric.tiers``.
    """
    shape = np.broadcast(a.tp, np.asarray(call.calls_per_step)).shape
    stride = np.broadcast_to(group_stride(call.dim, a), shape)
    size = np.broadcast_to(np.asarray(call.group_size), shape)
    message = np.broadcast_to(np.asarray(call.message_bytes, dtype=float), shape).ravel()
    calls = np.broadcast_to(np.asarray(call.calls_per_step), shape)
    names = [t.name for t in fabric.tiers]
    pairs, inverse = _group_keys(stride, size)
    one = np.zeros(message.shape)
    tier = np.zeros(message.shape, dtype=np.int64)
    active = ((calls > 0) & (size > 1)).ravel()
    op = call.kind
    for index, (s, n) in enumerate(pairs):
        chosen = inverse == index
        sub = group_fabric(fabric, int(s), int(max(n, 1)))
        if op == "p2p":  # a ring or pipeline hop: bounded by the slowest tier it crosses
            sub, n = Fabric((_with_group(sub.tiers[-1], 2),)), 2
        tier[chosen] = names.index(sub.tiers[-1].name)
        work = chosen & active
        if work.any():
            one[work], _ = collective_time_s(op, message[work], int(n), sub)
    one = one.reshape(shape)
    return one, one * calls, tier.reshape(shape)

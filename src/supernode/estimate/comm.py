"""Cost of a plan's collectives on the fabric: which tiers each rank group spans.

Ranks are laid out in Megatron-Core's default order ``tp-cp-ep-dp-pp``: tensor-parallel
innermost, then context, data and pipeline parallelism. Expert layers re-split each
stage's ``tp * cp * dp`` consecutive ranks as ``etp x ep x edp`` (expert tensor
parallelism innermost, then expert parallelism, then expert data parallelism), so an EP
group of ``ep`` ranks at stride ``etp`` stays inside the scale-up domain whenever
``etp * ep`` fits in it, even across TP groups. A group of ``n`` ranks at stride ``s``
puts ``min(n, G_j / s)`` members inside each tier-``j`` group of ``G_j`` consecutive
ranks, so a TP group of 8 on 8-GPU domains stays on NVLink while a DP group at stride 8
crosses the scale-out fabric with one member (and one NIC) per domain. Where the group
size does not divide a tier's (32- or 64-rank groups on 72-GPU racks), some groups
straddle the boundary and cross the next tier with uneven parts (8 + 24): every group of
a dimension runs at once, so the worst one binds, and that is the group's view
(:func:`supernode.collectives.group_view`). The view is handed to
:func:`supernode.collectives.collective_time_s`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from supernode.collectives import Fabric, collective_time_s, group_view
from supernode.collectives.fabric import with_group_size as _with_group
from supernode.spec.plan import PlanArrays
from supernode.workload.dispatch import deepep_byte_ratio
from supernode.workload.traffic import CollectiveCall


def group_stride(dim: str, a: PlanArrays) -> np.ndarray:
    """Rank stride between consecutive members of a ``dim`` group (Megatron-Core order).

    ``dp`` is the gradient group of dense parameters (the ``dp x cp`` ranks, cp inside
    dp: contiguous at stride ``tp``); ``etp``, ``ep`` and ``dp_expert`` are the expert
    decomposition ``etp x ep x edp`` of the stage's ranks.
    """
    strides: dict[str, np.ndarray] = {
        "tp": np.ones_like(a.tp),
        "cp": a.tp,
        "dp": a.tp,
        "pp": a.tp * a.cp * a.dp,
        "etp": np.ones_like(a.tp),
        "ep": a.etp,
        "dp_expert": a.etp * a.ep,
    }
    return strides[dim]


def call_stride(call: CollectiveCall, a: PlanArrays) -> np.ndarray:
    """Rank stride between consecutive members of ``call``'s group: the dimension's
    (:func:`group_stride`), except the ring level of a hierarchical CP exchange, whose
    ``group_size`` ranks are ``cp / group_size`` CP ranks apart (the all-to-all level
    inside)."""
    stride = group_stride(call.dim, a)
    if call.dim == "cp" and call.kind == "p2p":
        stride = stride * (np.asarray(a.cp) // np.maximum(np.asarray(call.group_size), 1))
    return stride


def group_fabric(fabric: Fabric, stride: int, size: int) -> Fabric:
    """The fabric seen by ``size`` ranks spaced ``stride`` apart (members per tier)."""
    return factored_group_fabric(fabric, ((int(stride), int(size)),))


def factored_group_fabric(fabric: Fabric, factors: tuple[tuple[int, int], ...]) -> Fabric:
    """The fabric seen by a group of nested strided factors ``((stride, size), ...)``.

    Alignment decides the tiers: where the groups of a dimension do not split evenly at a
    tier boundary (32-rank groups on 72-GPU racks), some straddle it, and since every group
    runs the same collective at once the slowest binds: the view's tiers are those the
    worst group crosses, with its uneven parts (:func:`supernode.collectives.group_view`).
    """
    return group_view(fabric, tuple((int(s), int(n)) for s, n in factors))


def _group_keys(stride: np.ndarray, size: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Unique (stride, size) pairs and each plan's index into them (fast 1-D unique)."""
    key = stride.astype(np.int64) * (1 << 32) + size.astype(np.int64)
    unique, inverse = np.unique(key.ravel(), return_inverse=True)
    return np.stack([unique >> 32, unique & ((1 << 32) - 1)], axis=-1), inverse.reshape(key.shape)


def call_time_s(call: CollectiveCall, a: PlanArrays, fabric: Fabric
                ) -> tuple[Any, Any, np.ndarray]:
    """Seconds of one call and per step, and the index of the slowest tier crossed.

    All three are arrays over plans (broadcast with the call's fields, not materialised
    beyond them); the tier index points into ``fabric.tiers``. The one-call time is
    given wherever the group has more than one rank, even where the call count is 0.
    """
    stride, size = np.broadcast_arrays(np.asarray(call_stride(call, a)),
                                       np.asarray(call.group_size))
    pairs, inverse = _group_keys(stride, size)
    groups = [(group_fabric(fabric, int(s), int(max(n, 1))), int(n)) for s, n in pairs]
    return grouped_call_time_s(call, inverse, groups, fabric)


def grouped_call_time_s(call: CollectiveCall, keys: np.ndarray,
                        groups: list[tuple[Fabric, int]], fabric: Fabric
                        ) -> tuple[Any, Any, np.ndarray]:
    """:func:`call_time_s` for plans whose group is ``groups[keys]`` (seconds, tier index).

    ``keys`` (int array broadcast with the plans) picks, per plan, one ``(sub-fabric,
    ranks)`` of ``groups``: the fabric the group sees and its member count. Collective
    times are computed once per element of the broadcast of ``keys`` and the message
    (skipping plans that do not make the call when plans are listed one by one), then
    scaled by the call count.
    """
    keys = np.asarray(keys)
    message = np.asarray(call.message_bytes, dtype=float)
    calls = np.asarray(call.calls_per_step)
    shape = np.broadcast_shapes(keys.shape, message.shape)
    active = np.flatnonzero(_made_somewhere(calls, shape).ravel())
    active_keys = np.broadcast_to(keys, shape).ravel()[active]
    # every distinct (group, message size) of the active elements, sorted by group then size
    sizes, size_of = np.unique(np.broadcast_to(message, shape).ravel()[active],
                               return_inverse=True)
    radix = max(sizes.size, 1)
    pairs, pair_of = np.unique(active_keys * radix + size_of, return_inverse=True)
    pair_group, pair_size = np.divmod(pairs, radix)
    bounds = np.searchsorted(pair_group, np.arange(len(groups) + 1))
    pair_time = np.zeros(pairs.shape)
    names = [t.name for t in fabric.tiers]
    tier_of = np.zeros(len(groups), dtype=np.int64)
    for index, (sub, n) in enumerate(groups):
        if call.kind == "p2p":  # a ring or pipeline hop: bounded by the slowest tier crossed
            sub, ranks = Fabric((_with_group(sub.tiers[-1], 2),)), 2
        else:
            ranks = n
        tier_of[index] = names.index(sub.tiers[-1].name)
        first, last = bounds[index], bounds[index + 1]
        if n > 1 and last > first:  # the group's distinct sizes, ascending: each once
            pair_time[first:last] = collective_time_s(
                call.kind, sizes[pair_size[first:last]] * dispatch_ratio(call, sub, n),
                ranks, sub)[0]
    flat = np.zeros(int(np.prod(shape)))
    flat[active] = pair_time[pair_of.ravel()]
    one = flat.reshape(shape)
    per_step = one * calls
    return one, per_step, tier_of[keys]


def dispatch_ratio(call: CollectiveCall, view: Fabric, ranks: int) -> float:
    """Bytes an expert dispatch moves over the group ``view`` of ``ranks`` ranks, as a
    share of the alltoall dispatcher's (1 for every other call).

    The stack's dispatcher decides (:attr:`CollectiveCall.routing`); where it leaves the
    choice open a tuned run uses DeepEP once the group leaves the scale-up domain (Megatron-
    Core's MoE guide: the flex dispatcher with DeepEP for cross-node EP) and the alltoall
    dispatcher inside it. DeepEP's copies across the boundary of the view's parts are the
    distinct remote scale-up domains a token reaches (the group's members inside the
    view's innermost tier form a part: :func:`~supernode.workload.dispatch.
    deepep_byte_ratio`); the ratio scales the whole message (the NVLink forwarding inside
    a domain is not the binding tier once the group leaves it).
    """
    if call.routing is None:
        return 1.0
    experts, top_k, dispatcher = call.routing
    crosses = len(view.tiers) > 1
    if dispatcher is None:
        dispatcher = "deepep" if crosses else "alltoall"
    if dispatcher != "deepep":
        return 1.0
    part = view.tiers[0].group_size if crosses else ranks  # members per scale-up domain
    return deepep_byte_ratio(experts, top_k, ranks, part)


def _made_somewhere(calls: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Elements (of ``shape``) worth costing: where the call is made when ``calls`` has
    that very shape (plans listed one by one); everywhere when ``calls`` spans more axes
    than the message (a grid: the message is small, reducing the counts would not be)."""
    if calls.shape == shape:
        return calls > 0
    return np.ones(shape, dtype=bool)

"""Rank layout of a plan: which ranks form each parallel group, for any rank order.

Ranks are numbered so that consecutive ranks share the fastest tiers (GPUs of one NVLink
domain, then of one leaf group...). A *rank order* says which dimension varies fastest
(innermost first); Megatron-Core's default is ``tp-cp-ep-dp-pp``. In an order, dimension
``d`` has stride ``prod(sizes of the dimensions before d)``. A group is a tuple of nested
*factors* ``(stride, size)``: the dense gradient group is the ``dp x cp`` ranks (one
factor when ``cp`` and ``dp`` are adjacent, two otherwise).

Expert layers re-split one pipeline stage's ``tp * cp * dp`` ranks, taken in the order's
numbering, as ``etp x ep x edp`` (Megatron-Core's expert rank generator: expert tensor
parallelism innermost, then expert parallelism, then expert data parallelism), so EP may
span tensor-parallel ranks and stays inside the scale-up domain first. For the Megatron
order every group reduces to :func:`supernode.estimate.comm.group_stride`.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np

from supernode.collectives import Fabric
from supernode.estimate.comm import factored_group_fabric, grouped_call_time_s
from supernode.spec.plan import MEGATRON_ORDER, PlanArrays
from supernode.workload.traffic import CollectiveCall

Factors = tuple[tuple[int, int], ...]
#: Collective dimensions whose group the step model costs.
CALL_DIMS = ("tp", "cp", "pp", "dp", "dp_expert", "ep", "etp")


def normalise(factors: list[tuple[int, int]]) -> Factors:
    """Drop size-1 factors, sort by stride and merge contiguous neighbours."""
    kept = sorted((int(s), int(n)) for s, n in factors if n > 1)
    merged: list[tuple[int, int]] = []
    for s, n in kept:
        if merged and merged[-1][0] * merged[-1][1] == s:
            merged[-1] = (merged[-1][0], merged[-1][1] * n)
        else:
            merged.append((s, n))
    return tuple(merged)


def split_inner(factors: Factors, count: int) -> tuple[Factors, Factors] | None:
    """Split a group into its innermost ``count`` ranks and the rest (None if uneven)."""
    inner: list[tuple[int, int]] = []
    outer: list[tuple[int, int]] = []
    left = count
    for s, n in factors:
        if left == 1:
            outer.append((s, n))
        elif n <= left:
            if left % n:
                return None
            inner.append((s, n))
            left //= n
        else:
            if n % left:
                return None
            inner.append((s, left))
            outer.append((s * left, n // left))
            left = 1
    if left != 1:
        return None
    return normalise(inner), normalise(outer)


def dim_strides(sizes: dict[str, int], order: tuple[str, ...]) -> dict[str, int]:
    """Rank stride of each of tp, cp, dp, pp under ``order`` (innermost first)."""
    out, stride = {}, 1
    for dim in order:
        out[dim] = stride
        stride *= int(sizes[dim])
    return out


@lru_cache(maxsize=65536)
def group_factors(tp: int, cp: int, dp: int, pp: int, ep: int = 1, etp: int | None = None,
                  order: tuple[str, ...] = MEGATRON_ORDER) -> dict[str, Factors] | None:
    """Factors of every collective group of a layout (None if ``etp x ep`` cannot be
    carved from the stage's ranks).

    ``pp`` is the group of two neighbouring stages (a pipeline hop, as the step model
    costs it, also when ``pp == 1``); size-1 groups are ``((stride, 1),)``: no cost.
    Cached: callers must not mutate the result.
    """
    etp = tp if etp is None else etp
    sizes = {"tp": tp, "cp": cp, "dp": dp, "pp": pp}
    st = dim_strides(sizes, order)
    stage = normalise([(st[d], sizes[d]) for d in order if d != "pp"])
    carved = split_inner(stage, etp)
    if carved is None:
        return None
    etp_f, rest = carved
    carved = split_inner(rest, ep)
    if carved is None:
        return None
    ep_f, edp_f = carved
    out = {
        "tp": normalise([(st["tp"], tp)]),
        "cp": normalise([(st["cp"], cp)]),
        "pp": ((st["pp"], 2),),
        "dp": normalise([(st["cp"], cp), (st["dp"], dp)]),
        "dp_expert": edp_f,
        "ep": ep_f,
        "etp": etp_f,
    }
    return {dim: f or ((st.get(dim, 1), 1),) for dim, f in out.items()}


def group_size(factors: Factors) -> int:
    """Ranks in a group of nested factors."""
    size = 1
    for _, n in factors:
        size *= n
    return size


class FactorCallTime:
    """Collective costs of plans whose groups are given as factors (``call_time`` hook of
    :func:`~supernode.estimate.step.step_arrays`).

    ``factors[i]`` is the :func:`group_factors` result of plan (layout) ``i``; ``axis``
    and ``ndim`` place the layout index on the plan arrays' grid (a single plan: 0-d).
    Each call dimension's groups are interned to a small integer key and costed once per
    distinct group and message by :func:`~supernode.estimate.comm.grouped_call_time_s`.
    """

    def __init__(self, factors: list[dict[str, Factors]], fabric: Fabric, axis: int = 0,
                 ndim: int = 1) -> None:
        self.keys: dict[str, np.ndarray] = {}
        self.groups: dict[str, list[tuple[Fabric, int]]] = {}
        shape = [1] * ndim
        if ndim:
            shape[axis] = len(factors)
        for dim in CALL_DIMS:
            index: dict[Factors, int] = {}
            keys = np.array([index.setdefault(f[dim], len(index)) for f in factors],
                            dtype=np.int64)
            self.keys[dim] = keys.reshape(shape) if ndim else keys.reshape(())
            self.groups[dim] = [(factored_group_fabric(fabric, f), group_size(f))
                                for f in index]

    def __call__(self, call: CollectiveCall, a: PlanArrays, fabric: Fabric
                 ) -> tuple[Any, Any, np.ndarray]:
        """Seconds of one call and per step, and the slowest tier index (arrays)."""
        return grouped_call_time_s(call, self.keys[call.dim], self.groups[call.dim], fabric)

"""How a plan's parallel dimensions are laid onto the fabric's tiers (rank orders).

Ranks are numbered so that consecutive ranks share the fastest tiers (GPUs of one
NVLink domain, then of one leaf group...). A *rank order* says which dimension varies
fastest: Megatron-LM's default is ``tp, cp, dp, pp`` (tensor-parallel innermost, its
``--order tp-cp-ep-dp-pp``); the planner also tries the other orders of ``cp, dp, pp``
after ``tp``, so that, e.g., pipeline stages can share a 72-GPU domain while data
parallelism crosses the scale-out fabric (seed 000 §2.3: heaviest traffic on the
fastest links).

In an order, dimension ``d`` has stride ``prod(sizes of the dimensions before d)``. A
group is a tuple of nested *factors* ``(stride, size)``: the gradient group is the
``dp x cp`` ranks (one factor when ``cp`` and ``dp`` are adjacent, two otherwise);
expert parallelism takes the innermost ``ep`` ranks of that group and expert data
parallelism the rest (Megatron-Core's ``tp-ep-dp`` expert layout). For the Megatron
order every group reduces to :func:`supernode.estimate.comm.group_stride`.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from supernode.collectives import Fabric
from supernode.estimate.comm import factored_group_fabric

Factors = tuple[tuple[int, int], ...]

#: Megatron-LM's default rank order, innermost first.
MEGATRON_ORDER = ("tp", "cp", "dp", "pp")
#: Collective dimensions whose group the step model costs.
CALL_DIMS = ("tp", "cp", "pp", "dp", "dp_expert", "ep")


@dataclass(frozen=True)
class Layout:
    """One parallel layout: sizes of every dimension and the rank order (innermost first)."""

    tp: int
    pp: int
    dp: int
    cp: int
    ep: int
    order: tuple[str, ...] = MEGATRON_ORDER

    @property
    def order_name(self) -> str:
        """The order as Megatron writes it, dimensions of size 1 left out: ``tp-dp-pp``."""
        return "-".join(d for d in self.order if d == "tp" or self.size(d) > 1)

    @property
    def megatron_equivalent(self) -> bool:
        """True when the order groups ranks exactly as Megatron's default does."""
        return self.order_name == Layout(self.tp, self.pp, self.dp, self.cp, self.ep
                                         ).order_name

    def size(self, dim: str) -> int:
        """Size of dimension ``dim`` (tp, cp, dp or pp)."""
        return int(getattr(self, dim))


def effective_orders(tp: int, cp: int, dp: int, pp: int, search: bool = True
                     ) -> list[tuple[str, ...]]:
    """Distinct rank orders of a layout: ``tp`` first, then every order of the other
    dimensions larger than 1 (dimensions of size 1 do not change any group).

    Orders are returned as full 4-tuples, the Megatron order first when present.
    """
    if not search:
        return [MEGATRON_ORDER]
    sizes = {"cp": cp, "dp": dp, "pp": pp}
    active = [d for d in ("cp", "dp", "pp") if sizes[d] > 1]
    out: list[tuple[str, ...]] = []
    for perm in itertools.permutations(active):
        idle = [d for d in ("cp", "dp", "pp") if d not in perm]
        order = ("tp", *perm, *idle)
        if order not in out:
            out.append(order)
    out.sort(key=lambda o: _restricted(o, sizes) != _restricted(MEGATRON_ORDER, sizes))
    return out


def _restricted(order: tuple[str, ...], sizes: dict[str, int]) -> tuple[str, ...]:
    return tuple(d for d in order if d != "tp" and sizes[d] > 1)


def strides(layout: Layout) -> dict[str, int]:
    """Rank stride of each of tp, cp, dp, pp under the layout's order."""
    out, stride = {}, 1
    for dim in layout.order:
        out[dim] = stride
        stride *= layout.size(dim)
    return out


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


def _split_inner(factors: Factors, count: int) -> tuple[Factors, Factors] | None:
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


def group_factors(layout: Layout) -> dict[str, Factors] | None:
    """Factors of every collective group of a layout (None if EP cannot be carved).

    ``pp`` is the group of two neighbouring stages (a pipeline hop, as the step model
    costs it, also when ``pp == 1``); size-1 groups are ``((stride, 1),)``: no cost.
    """
    st = strides(layout)
    dp_cp = normalise([(st["cp"], layout.cp), (st["dp"], layout.dp)])
    split = _split_inner(dp_cp, layout.ep)
    if split is None:
        return None
    ep, dp_expert = split
    out = {
        "tp": normalise([(st["tp"], layout.tp)]),
        "cp": normalise([(st["cp"], layout.cp)]),
        "pp": ((st["pp"], 2),),
        "dp": dp_cp,
        "dp_expert": dp_expert,
        "ep": ep,
    }
    return {dim: factors or ((st.get(dim, 1), 1),) for dim, factors in out.items()}


def group_size(factors: Factors) -> int:
    """Ranks in a group of nested factors."""
    size = 1
    for _, n in factors:
        size *= n
    return size


def sub_fabric(fabric: Fabric, factors: Factors) -> Fabric:
    """The fabric a group sees (cached)."""
    return factored_group_fabric(fabric, factors)


def slowest_tier(fabric: Fabric, factors: Factors) -> int:
    """Index into ``fabric.tiers`` of the slowest tier the group crosses (0 if one rank)."""
    if group_size(factors) <= 1:
        return 0
    name = sub_fabric(fabric, factors).tiers[-1].name
    return [t.name for t in fabric.tiers].index(name)


def rail_aligned(factors: Factors, host_size: int) -> bool:
    """True when the group's members on different hosts share their local GPU index.

    On a rail-optimised fabric such groups stay on one rail (NIC ``r`` of every host on
    leaf ``r``); others need NCCL's PXN hop over NVLink first (not costed separately).
    """
    return all(s % host_size == 0 or s * n <= host_size for s, n in factors if n > 1)

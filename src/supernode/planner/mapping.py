"""How a plan's parallel dimensions are laid onto the fabric's tiers (rank orders).

Ranks are numbered so that consecutive ranks share the fastest tiers (GPUs of one
NVLink domain, then of one leaf group...). A *rank order* says which dimension varies
fastest: Megatron-Core's default is ``tp, cp, dp, pp`` (tensor-parallel innermost, its
``--order tp-cp-ep-dp-pp``); the planner also tries the other orders of ``cp, dp, pp``
after ``tp``, so that, e.g., pipeline stages can share a 72-GPU domain while data
parallelism crosses the scale-out fabric (seed 000 §2.3: heaviest traffic on the
fastest links). The groups of a layout come from :mod:`supernode.estimate.layout`
(expert layers: Megatron-Core's ``etp x ep x edp`` split of each stage's ranks, EP
inside the scale-up domain first), the same rule the estimate uses.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from supernode.collectives import Fabric
from supernode.estimate.comm import factored_group_fabric
from supernode.estimate.layout import CALL_DIMS, Factors, group_size, normalise
from supernode.estimate.layout import group_factors as _group_factors
from supernode.spec.plan import MEGATRON_ORDER

__all__ = ["CALL_DIMS", "MEGATRON_ORDER", "Factors", "Layout", "effective_orders",
           "group_factors", "group_size", "normalise", "rail_aligned", "slowest_tier",
           "strides", "sub_fabric"]


@dataclass(frozen=True)
class Layout:
    """One parallel layout: sizes of every dimension and the rank order (innermost first)."""

    tp: int
    pp: int
    dp: int
    cp: int
    ep: int
    order: tuple[str, ...] = MEGATRON_ORDER
    etp: int | None = None

    @property
    def expert_tp(self) -> int:
        """Expert tensor-parallel size (Megatron's default: the TP size)."""
        return self.tp if self.etp is None else self.etp

    @property
    def order_name(self) -> str:
        """The order as Megatron writes it, dimensions of size 1 left out: ``tp-dp-pp``."""
        return "-".join(d for d in self.order if d == "tp" or self.size(d) > 1)

    @property
    def megatron_equivalent(self) -> bool:
        """True when the order groups ranks exactly as Megatron's default does."""
        return self.order_name == Layout(self.tp, self.pp, self.dp, self.cp, self.ep,
                                         etp=self.etp).order_name

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


def group_factors(layout: Layout) -> dict[str, Factors] | None:
    """Factors of every collective group of a layout (None if etp x ep cannot be carved).

    See :func:`supernode.estimate.layout.group_factors`.
    """
    return _group_factors(layout.tp, layout.cp, layout.dp, layout.pp, layout.ep,
                          layout.expert_tp, tuple(layout.order))


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

"""Rank order: the simulator numbers a job's ranks tp -> cp -> dp -> pp (Megatron's order);
a plan laid out in another order (the planner's ``rank_order``) is honoured by renumbering
the job's accelerators (:func:`reorder`)."""

from __future__ import annotations

import numpy as np

from supernode.spec.plan import ParallelPlan

MEGATRON_ORDER = ("tp", "cp", "dp", "pp")


def reorder(accelerators: np.ndarray, plan: ParallelPlan, order: tuple[str, ...]
            ) -> np.ndarray:
    """Accelerators indexed by Megatron rank for a job laid out in rank ``order``
    (innermost first): the simulator numbers ranks tp -> cp -> dp -> pp."""
    if tuple(order) == MEGATRON_ORDER:
        return accelerators
    sizes = {"tp": plan.tp, "cp": plan.cp, "dp": plan.dp, "pp": plan.pp}
    t, c, d, s = np.meshgrid(*(np.arange(sizes[k]) for k in MEGATRON_ORDER), indexing="ij")
    coords = {"tp": t, "cp": c, "dp": d, "pp": s}
    position, stride = np.zeros_like(t), 1
    for dim in order:
        position += coords[dim] * stride
        stride *= sizes[dim]
    megatron = t + plan.tp * (c + plan.cp * (d + plan.dp * s))
    out = np.empty_like(accelerators)
    out[megatron.ravel()] = accelerators[position.ravel()]
    return out



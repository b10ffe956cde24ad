"""The seeds' sizing arithmetic: how many cards a training run needs, how much memory
its model states take, and the ranges the seeds give (seed 000 §1.1, §2.2; seed 001 §2.2;
seed 003 §3.1, §5.1), used by :mod:`supernode.planner.sizing`."""

from __future__ import annotations

from typing import TypedDict

from supernode.spec.workload import WorkloadSpec
from supernode.workload.memory import state_bytes
from supernode.workload.params import total_params

SECONDS_PER_DAY = 86_400.0
#: Seed 003 §3.1: utilisation 0.4-0.6 (communication and synchronisation eat the rest).
UTILIZATION_RANGE = (0.4, 0.6)
DEFAULT_UTILIZATION = 0.5
#: Seed 003 §3.1 / seed 000 §1.1: model states are 4-6x the weights.
STATE_MULTIPLE_RANGE = (4.0, 6.0)
#: Seed 000 §2.2: the peak need is 2-3x the average synchronisation bandwidth.
PEAK_FACTOR_RANGE = (2.0, 3.0)
#: Seed 003 §5.1: keep 20-30% headroom.
DEFAULT_HEADROOM = 0.25
#: Seed 001 §2.2: a supernode of tens of TB/s inside needs at least 4-6 x 400G links out.
SEED_MIN_LINKS = (4, 6)
#: Phases grow by whole scale-out units when one is at most this share of the need.
UNIT_SHARE_FOR_PHASES = 0.25
#: Share of the step the scale-out traffic may take (the seeds' 20% line).
COMM_BUDGET_SHARE = 0.20


def cards_needed(total_flops: float, peak_flops: float, days: float, utilization: float
                 ) -> float:
    """Seed 003 §3.1: total FLOPs / (per-card FLOP/s x days x 86,400 x utilisation)."""
    return total_flops / (peak_flops * days * SECONDS_PER_DAY * utilization)


class MemoryNeed(TypedDict):
    """:func:`memory_need`'s answer."""

    params: float
    weights_bytes: float
    seed_range_bytes: list[float]
    model_states_bytes: float
    bytes_per_param: float


def memory_need(w: WorkloadSpec, precision: str = "bf16") -> MemoryNeed:
    """Model-state memory (bytes): weights, the seed's 4-6x range, the toolkit's exact."""
    params = float(total_params(w))
    wb, gb, kb = state_bytes(precision)
    weights = params * wb
    return {"params": params, "weights_bytes": weights,
            "seed_range_bytes": [weights * m for m in STATE_MULTIPLE_RANGE],
            "model_states_bytes": params * (wb + gb + kb),
            "bytes_per_param": float(wb + gb + kb)}

"""Board power and GPU energy of one estimated step, at the system's power cap.

An accelerator draws its busy board power while computing (compute and the optimizer
step) and its waiting power otherwise (exposed communication, bubbles, fixed overheads):
:func:`supernode.catalog.power.board_power_w`, the planner's and the facility's model too.
Under a cap below TDP the busy power is the cap, reached at the DVFS curve's sustained
clock (:meth:`supernode.estimate.system.SystemModel.at_power_limit`), and the step is
longer. GPU board energy only: hosts, network and cooling are the facility model's.
"""

from __future__ import annotations

from typing import Any

from supernode.catalog.power import board_power_w, power_assumptions
from supernode.estimate.system import SystemModel

#: Breakdown parts during which the accelerator computes (draws its busy power).
BUSY_PARTS = ("compute", "optimizer")


def busy_seconds(breakdown_s: dict[str, float]) -> float:
    """Seconds of a step the accelerator computes (``BUSY_PARTS`` of the breakdown)."""
    return sum(float(breakdown_s.get(k, 0.0)) for k in BUSY_PARTS)


def step_power(system: SystemModel, breakdown_s: dict[str, float], tokens_per_step: float
               ) -> dict[str, Any]:
    """Power and energy fields of one step (W, J, s): the cap and its sustained clock,
    busy and waiting board power, the step's average, GPU energy per step and per token."""
    busy_w, waiting_w = board_power_w(system.tdp_w, system.power_limit_w)
    step = sum(float(v) for v in breakdown_s.values())
    busy = min(busy_seconds(breakdown_s), step)
    energy = system.gpus * (busy_w * busy + waiting_w * (step - busy))
    tdp = float(system.tdp_w or power_assumptions().fallback_tdp_w)
    return {
        "tdp_w": tdp,
        "tdp_source": "catalog" if system.tdp_w else "fallback (power.yaml)",
        "power_limit_w": system.power_limit_w,
        "capped": system.power_limit_w is not None and system.power_limit_w < tdp,
        "sustained_clock_ratio": system.clock_ratio,
        "busy_power_w": busy_w,
        "waiting_power_w": waiting_w,
        "busy_s": busy,
        "average_power_w": energy / (system.gpus * step) if step > 0 else waiting_w,
        "energy_per_step_j": energy,
        "energy_per_token_j": energy / tokens_per_step if tokens_per_step > 0 else 0.0,
        "source": power_assumptions().source,
        "dvfs_source": power_assumptions().dvfs.source,
    }

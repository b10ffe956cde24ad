"""What a placement run takes and gives: its options, its jobs, its record.

Plain data, shared by the engine (:mod:`supernode.scheduler.engine`), the metrics
(:mod:`supernode.scheduler.metrics`) and the worker processes of
:func:`supernode.scheduler.schedule` (all picklable).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

#: Event kinds of the engine's heap, in the order ties at one instant are handled.
FINISH, DRAIN, ARRIVE, RECHECK = 0, 1, 2, 3


@dataclass(frozen=True)
class EngineOptions:
    """Knobs of the simulation (times in seconds)."""

    backfill_depth: int = 256
    stretch: bool = True
    preempt_after_s: float = 600.0
    checkpoint_interval_s: float = 1800.0
    restart_s: float = 300.0
    max_victim_trials: int = 64
    #: How job TP sizes are chosen (:data:`supernode.scheduler.shapes.SHAPE_RULES`) and
    #: how a split placement is priced (:data:`supernode.scheduler.slowdown.PRICINGS`).
    shapes: str = "memory-tp"
    pricing: str = "per-group"


@dataclass(frozen=True)
class JobTable:
    """The jobs of a run (arrays in submit order): times in s, shapes, priorities."""

    submit_s: np.ndarray
    duration_s: np.ndarray
    gpus: np.ndarray
    tp: np.ndarray
    model: np.ndarray
    priority: np.ndarray

    def __len__(self) -> int:
        return len(self.submit_s)


@dataclass
class RunRecord:
    """Everything a run produced (arrays per job and per run segment)."""

    policy: str
    first_start_s: np.ndarray
    end_s: np.ndarray
    preemptions: np.ndarray
    segments: dict[str, np.ndarray]
    timeline: dict[str, np.ndarray]
    busy_gpu_s: float
    fragmented_gpu_s: float
    reserved_gpu_s: float
    restart_gpu_s: float
    immediate_loss_gpu_s: float
    wall_time_s: float
    cpu_time_s: float
    stretch: bool = True
    notes: list[str] = field(default_factory=list)

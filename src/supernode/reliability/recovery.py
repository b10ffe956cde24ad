"""Recovery paths and their times: restart from checkpoint, or isolate and shrink.

Restart on healthy capacity (seed 001 §4.1: "the scheduler rebuilds the job on a healthy
supernode and loads the latest snapshot"): detection + diagnosis, then a healthy host for
every one lost (a spare, or wait for the repair), then rescheduling + checkpoint load +
warm-up. A software failure restarts in place: detection + load + warm-up. Isolate and
shrink (seed 000 §4.3: "isolate the failed card, rebuild the communication domain with the
rest"): detection + rebuilding the communicator, the job running with fewer data-parallel
replicas until a spare tray joins. The recovery-time objective is seed 001's 10 minutes.

Defaults are ASSUMPTIONS of a well-run fleet, each a parameter: detection in about a minute
(heartbeat/health-check agents, as ByteDance MegaScale, NSDI'24, describes), a couple of
minutes of automated diagnosis, a minute to reschedule onto a warm spare, three minutes of
process start, NCCL communicator set-up and data-loader warm-up.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TypedDict

#: Seed 001 §4.1: one recovery within 10 minutes.
RTO_OBJECTIVE_S = 600.0


@dataclass(frozen=True)
class RecoveryTimes:
    """Seconds of each recovery step (see the module docstring for the defaults)."""

    detection_s: float = 60.0
    diagnosis_s: float = 120.0
    reschedule_s: float = 60.0
    warmup_s: float = 180.0
    shrink_s: float = 60.0
    failover_s: float = 1.0

    def to_dict(self) -> dict[str, float]:
        """JSON-ready dict."""
        return asdict(self)


def restart_parts(times: RecoveryTimes, load_s: float, hardware: bool) -> tuple[float, float]:
    """(before capacity is needed, after it is there) seconds of a restart from checkpoint."""
    if not hardware:
        return times.detection_s, load_s + times.warmup_s
    return times.detection_s + times.diagnosis_s, times.reschedule_s + load_s + times.warmup_s


class RecoveryObjective(TypedDict):
    """:func:`recovery_objective`'s answer (seconds)."""

    paths_s: dict[str, float]
    rto_s: float
    objective_s: float
    meets_objective: bool
    checkpoint_load_s: float
    note: str


def recovery_objective(times: RecoveryTimes, load_s: float) -> RecoveryObjective:
    """Time to resume after one failure, per path, against the 10-minute objective."""
    paths = {"restart_hardware": sum(restart_parts(times, load_s, True)),
             "restart_software": sum(restart_parts(times, load_s, False)),
             "shrink": times.detection_s + times.shrink_s}
    worst = max(paths["restart_hardware"], paths["restart_software"])
    return {"paths_s": paths, "rto_s": worst, "objective_s": RTO_OBJECTIVE_S,
            "meets_objective": worst <= RTO_OBJECTIVE_S, "checkpoint_load_s": load_s,
            "note": "with a spare host ready; waiting for a repair comes on top (see the "
                    "Monte Carlo's spare wait)"}

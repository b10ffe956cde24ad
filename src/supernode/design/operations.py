"""The operations half of the review, after the plan is simulated: reliability (its one
recovery policy), facility (with the power-cap trade:
:func:`~supernode.design.facility.facility_results`, which ``supernode facility`` calls
too), monitoring (the pack labelled by the cooling topology), the scheduling replay and
the exported files — each stage reading the one cooling topology
(:func:`supernode.facility.cluster_cooling`) and the reviewed plan."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from supernode.design.artefacts import design_artefacts
from supernode.design.facility import FacilityJob, facility_results
from supernode.design.monitoring import cooled_config, monitoring_summary
from supernode.design.reliability import run_reliability
from supernode.design.scheduling import run_scheduling
from supernode.facility import cluster_cooling
from supernode.monitor.pack import build_pack
from supernode.spec.plan import ParallelPlan
from supernode.spec.resolved import Cluster


@dataclass(frozen=True)
class Reviewed:
    """What the stages after the simulation read: the plan under review and its results."""

    workload: Any
    target: Any
    view: dict[str, Any] | None
    plan: ParallelPlan | None
    sim: dict[str, Any] | None


#: The review's note when the scheduling replay was switched off.
NOT_REPLAYED = "scheduling not replayed (--no-schedule)"


def run_operations(inputs: Any, cluster: Cluster, topo: Any, reviewed: Reviewed,
                   prometheus: tuple[Any, int], clock: Callable[[str], None],
                   scheduling: Any = None) -> dict[str, Any]:
    """Reliability, facility, monitoring, scheduling (``scheduling``: the replay running
    beside, or None to run it here) and artefacts stages of the review of ``inputs`` (a
    :class:`~supernode.design.pipeline.DesignInput`: its seed and reliability horizon);
    ``clock(stage)`` is told as each stage starts. The stages' results by short name."""
    workload, target, view, plan, sim = (reviewed.workload, reviewed.target, reviewed.view,
                                         reviewed.plan, reviewed.sim)
    clock("reliability")
    rel = alt = None
    cooling = cluster_cooling(cluster, topo)
    if plan is not None:
        rel, alt = run_reliability(cluster, workload, plan, inputs.seed,
                                   inputs.reliability_days, inputs.reliability_runs, cooling)
    clock("facility")
    job = None
    if view is not None and plan is not None:
        job = FacilityJob(workload, plan, target.system, view["breakdown_s"],
                          sim["step_time_s"] if sim else view["step_time_s"])
    fac = facility_results(cluster, topo, job)
    clock("monitoring")
    pack = build_pack(cluster, cooled_config(cooling))
    monitoring = monitoring_summary(cluster, pack, cooling)
    clock("scheduling")
    scheduling, sched_note = (run_scheduling(cluster, inputs.seed, scheduling)
                              if inputs.schedule else (None, NOT_REPLAYED))
    clock("artefacts")
    files, artefacts = design_artefacts(cluster, pack, *prometheus)
    return {"rel": rel, "alt": alt, "fac": fac, "monitoring": monitoring,
            "scheduling": scheduling, "sched_note": sched_note, "files": files,
            "artefacts": artefacts}

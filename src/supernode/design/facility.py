"""The review's facility stage as one function, shared with ``supernode facility``.

:func:`facility_results` is ``results.json`` -> ``facility``: the facility report of the
cluster (:func:`supernode.facility.facility_report`: power, feeds, distribution, energy,
cooling, floor, cabling) at the planned job's utilisation, and the power-cap trade of the
plan (:func:`supernode.design.power_cap.power_cap_trade`). The job (:class:`FacilityJob`)
is the plan, the system it runs on, its estimated time breakdown and the step time the
energy is priced at (the simulated one when the review simulated); without one the
facility is sized at TDP alone and has no power-cap table. The review and the
``facility`` command both call it, so the command gives the review's figures exactly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from supernode.design.plans import busy_share
from supernode.design.power_cap import power_cap_trade
from supernode.estimate.system import SystemModel
from supernode.facility import WorkloadUse, facility_report
from supernode.spec.plan import ParallelPlan
from supernode.spec.resolved import Cluster
from supernode.spec.workload import WorkloadSpec
from supernode.topology.metrics import TopologyReport


@dataclass(frozen=True)
class FacilityJob:
    """The job the facility is sized for: its workload, plan and system, the estimate's
    time breakdown (s per part) and the step time (s) the energy is priced at."""

    workload: WorkloadSpec
    plan: ParallelPlan
    system: SystemModel
    breakdown_s: dict[str, float]
    step_time_s: float

    def use(self) -> WorkloadUse:
        """How the job uses the accelerators: busy share of the step, step time (s) and
        tokens per step (the plan's global batch times the sequence length)."""
        return WorkloadUse(busy_share(self.breakdown_s), self.step_time_s,
                           self.plan.global_batch_sequences * self.workload.seq_len)


def facility_results(cluster: Cluster, topo: TopologyReport,
                     job: FacilityJob | None) -> dict[str, Any]:
    """``results.json`` -> ``facility`` of ``cluster`` for ``job`` (None: at TDP, no
    power-cap trade): the facility report's keys (W, J, kg, m, L/min) and ``power_cap``
    (None without a job or without a published TDP, which has no cap to price:
    catalog/power.py refuses one)."""
    fac = facility_report(cluster, topo, job.use() if job is not None else None).to_dict()
    fac["power_cap"] = (power_cap_trade(cluster, topo, job.workload, job.plan, job.system)
                        if job is not None and cluster.accelerator.tdp_w else None)
    return fac

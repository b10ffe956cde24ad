"""The facility report of a cluster: power, cooling, floor and cabling in one result.

:func:`facility_report` reads the resolved cluster, its topology report and (optionally)
how the planned workload uses the accelerators (:class:`WorkloadUse`: busy share, step
time, tokens per step, from the planner's best plan). It never runs a model itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from supernode.cluster.cooling import CoolingTopology, cooling_topology
from supernode.facility.cabling import cabling_plan
from supernode.facility.cooling import cooling_plan
from supernode.facility.floor import floor_plan
from supernode.facility.power import distribution, energy, feeds, power_budget
from supernode.facility.racks import rack_plan
from supernode.spec.cluster import FacilitySpec
from supernode.spec.resolved import Cluster
from supernode.topology.metrics import TopologyReport


@dataclass(frozen=True)
class WorkloadUse:
    """How a plan uses the machine: accelerators' busy share of the step, step time (s),
    tokens per step."""

    busy_share: float
    step_time_s: float
    tokens_per_step: float


@dataclass(frozen=True)
class FacilityReport:
    """Power, cooling, floor and cabling of one cluster (SI units; flows in L/min)."""

    racks: dict[str, Any]
    power: dict[str, Any]
    feeds: dict[str, Any]
    distribution: dict[str, Any]
    energy: dict[str, Any]
    cooling: dict[str, Any]
    floor: dict[str, Any]
    cabling: dict[str, Any]
    facility_stated: dict[str, Any]
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict with stable keys (docs/facility.md)."""
        return {"racks": self.racks, "power": self.power, "feeds": self.feeds,
                "distribution": self.distribution, "energy": self.energy,
                "cooling": self.cooling, "floor": self.floor, "cabling": self.cabling,
                "facility_stated": self.facility_stated, "notes": self.notes}


def _racks_per_cdu(cluster: Cluster) -> int | None:
    rel = cluster.spec.reliability
    return rel.racks_per_cdu if rel is not None else None


def cluster_cooling(cluster: Cluster, topo: TopologyReport) -> CoolingTopology:
    """The cluster's cooling topology (CDUs, spares, racks per CDU) as the facility sizes
    it at TDP: the one the reliability model and the monitoring pack are given."""
    facility = cluster.spec.facility or FacilitySpec()
    plan = rack_plan(cluster, topo)
    rack_w = power_budget(cluster, topo, plan, None)["rack"]["total_w"]
    cdu = cooling_plan(rack_w, plan.compute_racks, 0.0, cluster.spec.racks, facility,
                       _racks_per_cdu(cluster))["cdu"]
    return cooling_topology(cdu["cooled_racks"], cdu["liquid_heat_total_w"],
                            cdu["capacity_w"], cdu["redundancy"], _racks_per_cdu(cluster))


def facility_report(cluster: Cluster, topo: TopologyReport,
                    use: WorkloadUse | None = None) -> FacilityReport:
    """Size the power chain, cooling loop, floor and cabling of ``cluster``."""
    facility = cluster.spec.facility or FacilitySpec()
    notes = []
    if cluster.spec.facility is None:
        notes.append("no facility block: defaults used (docs/facility.md); state yours")
    plan = rack_plan(cluster, topo)
    notes += plan.notes
    power = power_budget(cluster, topo, plan, use.busy_share if use else None)
    rack_w = power["rack"]["total_w"]
    floor = floor_plan(cluster, plan, facility.racks_per_row, facility.aisle_clearance_m,
                       facility.floor_rating_kg_per_m2)
    racks = cluster.spec.racks
    return FacilityReport(
        racks={"hosts_per_rack": plan.hosts_per_rack,
               "switch_trays_per_rack": plan.switch_trays_per_rack,
               "compute_racks": plan.compute_racks, "network_racks": plan.network_racks,
               "racks": plan.racks, "racks_per_supernode": plan.racks_per_supernode,
               "fabric_switches": plan.fabric_switches, "cooling": plan.cooling},
        power=power,
        feeds=feeds(power["cluster_at_tdp_w"], facility),
        distribution=distribution(rack_w, racks.power_distribution if racks else None),
        energy=energy(power["cluster_at_workload_w"], use.step_time_s if use else None,
                      use.tokens_per_step if use else None, facility),
        cooling=cooling_plan(rack_w, plan.compute_racks, power["fabric"]["total_w"], racks,
                             facility, _racks_per_cdu(cluster)),
        floor=floor,
        cabling=cabling_plan(cluster, topo, plan, floor["row_length_m"],
                             racks.width_m if racks else 0.6),
        facility_stated=facility.model_dump(),
        notes=notes,
    )

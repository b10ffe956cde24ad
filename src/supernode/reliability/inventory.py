"""What a job spans: units of each failing component, by where they sit, from the topology.

Counts come from the closed-form topology report (:func:`supernode.topology.topology_report`:
switches, links, cables and transceivers per tier) and the cluster's hosts and racks; nothing
is counted twice. A job using part of the cluster spans its own accelerators, hosts and
NICs, and its share (``job_gpus / cluster GPUs``) of the switches, cables and CDUs.

Locations name the topology tier a unit sits on (``scale_up_l1``, ``leaf``, ``spine``...),
so the blast radius can tell a NIC-to-leaf transceiver (the host loses a rail) from a
leaf-to-spine one (the fabric loses an uplink).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from supernode.cluster.cooling import CoolingTopology
from supernode.spec.resolved import Cluster
from supernode.topology import topology_report
from supernode.topology.graph import FABRIC_TIERS, SCALE_UP_TIERS, cable_medium

#: Racks one coolant distribution unit serves when the cluster does not say. ASSUMPTION:
#: an in-row CDU of about 1 MW (Vertiv/CoolIT class) serves ~8 racks of 120 kW.
DEFAULT_RACKS_PER_CDU = 8
LIQUID_COOLING = ("liquid", "hybrid", "immersion")
_SWITCH_COMPONENT = {"leaf": "leaf_switch", "spine": "spine_switch", "core": "core_switch",
                     "scale_up_l1": "nvswitch", "scale_up_l2": "nvswitch"}


@dataclass(frozen=True)
class Units:
    """``count`` units of ``component`` at ``location`` (a tier, or ``host``/``rack``)."""

    component: str
    location: str
    count: float


@dataclass(frozen=True)
class Inventory:
    """Every failing unit a job spans, and the layout facts the blast radius needs."""

    job_gpus: int
    cluster_gpus: int
    gpus_per_host: int
    hosts: int
    units: tuple[Units, ...]
    hosts_per_rack: int | None
    racks_per_cdu: int
    #: Racks one CDU failure stops (0: a spare CDU on the loop takes its share).
    cdu_failure_racks: int = 0
    cdu_source: str = "reliability default"

    def count(self, component: str) -> float:
        """Units of ``component`` over all locations."""
        return sum(u.count for u in self.units if u.component == component)

    def components(self) -> list[str]:
        """Components present (count > 0), in inventory order."""
        return list(dict.fromkeys(u.component for u in self.units if u.count > 0))


def _racks(cluster: Cluster, hosts: int) -> tuple[int | None, float]:
    """Hosts per rack and liquid-cooled racks (0 when air-cooled or not stated)."""
    racks = cluster.spec.racks
    if racks is None:
        return None, 0.0
    cooled = racks.cooling in LIQUID_COOLING
    return racks.hosts_per_rack, (math.ceil(hosts / racks.hosts_per_rack) if cooled else 0.0)


def cluster_inventory(cluster: Cluster, job_gpus: int | None = None,
                      racks_per_cdu: int | None = None,
                      cooling: CoolingTopology | None = None) -> Inventory:
    """Units of every component that a job of ``job_gpus`` (default: all) GPUs spans.

    ``cooling``: the cluster's cooling topology
    (:func:`supernode.facility.cluster_cooling`, the facility's CDUs: every installed CDU
    can fail, and one failure stops the racks it serves only when no spare is on the
    loop); None: :data:`DEFAULT_RACKS_PER_CDU` (or ``racks_per_cdu``) with no spare."""
    report = topology_report(cluster)
    total = cluster.accelerators
    job = job_gpus or total
    share = job / total
    per_host = cluster.host.accelerators_per_host
    hosts = math.ceil(job / per_host)
    units = [Units("gpu", "accelerator", job), Units("hbm", "accelerator", job),
             Units("software", "accelerator", job), Units("host", "host", hosts),
             Units("psu", "host", hosts), Units("nic", "host", hosts * cluster.host.nic_count)]
    for tier in SCALE_UP_TIERS + FABRIC_TIERS:
        # a scale-up switch chip whose links are all board traces sits on the GPU baseboard
        # (HGX): the fleet statistics count its failures with the GPUs, like baseboard NVLink
        on_board = tier in SCALE_UP_TIERS and not report.cables.get(tier)
        if report.switches.get(tier) and not on_board:
            units.append(Units(_SWITCH_COMPONENT[tier], tier, report.switches[tier] * share))
    for tier, cables in report.cables.items():
        optics = report.optical_transceivers.get(tier, 0)
        medium = cable_medium(_medium(cluster, tier), tier)
        if optics:
            units.append(Units("transceiver", tier, optics * share))
        elif cables and medium == "copper":
            kind = "nvlink" if tier in SCALE_UP_TIERS else "fabric_cable"
            units.append(Units(kind, tier, cables * share))
    per_rack, cooled_racks = _racks(cluster, math.ceil(total / per_host))
    if cooling is not None:
        per_cdu, stops, source = (cooling.racks_per_cdu, cooling.failure_stops_racks,
                                  "facility cooling topology")
        cdus = float(cooling.installed)
    else:
        per_cdu = racks_per_cdu or DEFAULT_RACKS_PER_CDU
        stops, source = per_cdu, "reliability default (no spare CDU)"
        cdus = math.ceil(cooled_racks / per_cdu) if cooled_racks else 0
    if cooled_racks and cdus:
        units.append(Units("cdu", "rack", cdus * share))
    return Inventory(job, total, per_host, hosts, tuple(u for u in units if u.count > 0),
                     per_rack, per_cdu, stops, source)


def _medium(cluster: Cluster, tier: str) -> str:
    if tier in SCALE_UP_TIERS:
        return cluster.scale_up.medium
    return cluster.scale_out.medium if cluster.scale_out else "optical"


def interruption_rates(inventory: Inventory, rates: dict) -> dict[tuple[str, str], float]:
    """Failures per second of each (component, location) of ``inventory`` at ``rates``."""
    return {(u.component, u.location): u.count * rates[u.component].rate_per_unit_s
            for u in inventory.units}

"""How the cluster fills racks: compute racks, network racks, what each holds.

The cluster file's ``racks`` block says how many hosts and scale-up switch trays a rack
holds (refused at load when they cannot fit); without it, hosts are packed by height (the
host's from the cluster file, else the host catalog: :mod:`supernode.facility.hosts`) and
the assumption is reported. Fabric switches (leaf, spine, core) go to network racks of
``layout.switches_per_network_rack`` each.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from supernode.facility.data import facility_data
from supernode.facility.hosts import host_rack_units
from supernode.spec.resolved import Cluster
from supernode.topology.metrics import TopologyReport

#: Switch tiers of the scale-out fabric (housed in network racks).
FABRIC_SWITCH_TIERS = ("leaf", "spine", "core")
#: Switch tiers of the scale-up domain (housed in compute racks or on the host board).
SCALE_UP_SWITCH_TIERS = ("scale_up_l1", "scale_up_l2")


@dataclass(frozen=True)
class RackPlan:
    """Counts of racks and of what one compute rack holds."""

    hosts_per_rack: int
    switch_trays_per_rack: int
    compute_racks: int
    network_racks: int
    scale_up_chips_per_rack: float
    scale_up_chips_on_host: float
    fabric_switches: int
    racks_per_supernode: float
    cooling: str | None
    notes: list[str] = field(default_factory=list)

    @property
    def racks(self) -> int:
        """All racks: compute and network."""
        return self.compute_racks + self.network_racks


def rack_plan(cluster: Cluster, topo: TopologyReport) -> RackPlan:
    """Racks of ``cluster`` from its ``racks`` block (or packed by height, noted)."""
    spec = cluster.spec.racks
    notes: list[str] = []
    units = facility_data()["weight"]["rack_units"]
    height, source = host_rack_units(cluster)
    if spec is not None:
        # a stated packing is checked at load (cluster/consistency.py, catalogued heights)
        per_rack, trays, cooling = spec.hosts_per_rack, spec.switch_trays_per_rack, spec.cooling
    else:
        per_rack = max(1, units // height)
        trays, cooling = 0, None
        notes.append(f"no racks block: {per_rack} hosts of {height}U ({source}) per rack "
                     f"assumed (a {units}U rack); state racks.hosts_per_rack")
    compute = math.ceil(cluster.hosts / per_rack)
    chips = sum(topo.switches.get(t, 0) for t in SCALE_UP_SWITCH_TIERS)
    fabric = sum(topo.switches.get(t, 0) for t in FABRIC_SWITCH_TIERS)
    per_network_rack = facility_data()["layout"]["switches_per_network_rack"]
    hosts_per_domain = max(cluster.scale_up.size / cluster.host.accelerators_per_host, 1.0)
    on_trays = trays > 0
    return RackPlan(
        hosts_per_rack=per_rack, switch_trays_per_rack=trays, compute_racks=compute,
        network_racks=math.ceil(fabric / per_network_rack) if fabric else 0,
        scale_up_chips_per_rack=chips / compute if on_trays else 0.0,
        scale_up_chips_on_host=0.0 if on_trays else chips / max(cluster.hosts, 1),
        fabric_switches=fabric, racks_per_supernode=hosts_per_domain / per_rack,
        cooling=cooling, notes=notes,
    )

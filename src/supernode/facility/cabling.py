"""Cabling: fibre cores per rack, transceivers, and copper against its reach.

Fibre cores per rack are the optical scale-out links leaving a compute rack times the
fibres per link (parallel optics; ``cabling.fibres_per_link``). Copper reach falls with
the lane rate (seed 001 §5: about 1-2 m at 200 G per lane); a scale-up domain of several
racks on copper, or a copper scale-out run longer than the reach, needs optics. Runs are
estimated from the floor plan: within a rack ~ its height; across racks of one domain the
row distance; rack to network rack half a row plus the vertical run.
"""

from __future__ import annotations

import math
from typing import Any

from supernode.facility.data import facility_data, lookup_by_speed
from supernode.facility.racks import RackPlan
from supernode.spec.resolved import Cluster
from supernode.topology.metrics import TopologyReport

#: Height of cable run inside one rack, m (a 48U rack is ~2.2 m; trays sit within it).
IN_RACK_RUN_M = 1.0


def copper_reach_m(gbit_per_s: float) -> float:
    """Passive copper reach (m) of a port at ``gbit_per_s`` from its lane rate."""
    data = facility_data()["cabling"]
    lane = lookup_by_speed(data["lane_gbit_per_s"], gbit_per_s)
    return lookup_by_speed(data["copper_reach_m"], lane)


def cabling_plan(cluster: Cluster, topo: TopologyReport, plan: RackPlan,
                 row_length_m: float, width_m: float) -> dict[str, Any]:
    """Fibre cores, transceivers, cables per tier, and copper runs against their reach."""
    data = facility_data()["cabling"]
    vertical = facility_data()["layout"]["vertical_run_m"]
    out = cluster.scale_out
    nic_gbit = cluster.host.nic_bandwidth_bytes_per_s * 8 / 1e9
    links_per_rack = min(plan.hosts_per_rack, cluster.hosts) * cluster.host.nic_count if out \
        else 0
    optical_out = out is not None and out.medium in ("optical", "mixed")
    cores = links_per_rack * lookup_by_speed(data["fibres_per_link"], nic_gbit) \
        if optical_out else 0
    up = cluster.scale_up
    up_gbit = up.link_bandwidth_bytes_per_s * 8 / 1e9
    racks_per_domain = math.ceil(plan.racks_per_supernode)
    up_run = IN_RACK_RUN_M if racks_per_domain <= 1 else (
        (racks_per_domain - 1) * width_m + vertical)
    out_run = row_length_m / 2 + vertical if out else None
    return {
        "scale_out_links_per_rack": links_per_rack,
        "fibre_cores_per_rack": cores,
        "structured_cabling_cores": data["structured_cabling_cores"],
        # modules, a twin-port OSFP cage's counted once (the ends: two per optical cable)
        "transceivers": dict(topo.optical_modules),
        "transceivers_total": sum(topo.optical_modules.values()),
        "transceiver_ends": dict(topo.optical_transceivers),
        "cables": dict(topo.cables), "cables_total": sum(topo.cables.values()),
        "scale_up": {"medium": up.medium, "racks_per_domain": racks_per_domain,
                     "run_m": up_run, "copper_reach_m": copper_reach_m(up_gbit)
                     if up.kind != "none" else None},
        "scale_out": {"medium": out.medium if out else None, "run_m": out_run,
                      "copper_reach_m": copper_reach_m(nic_gbit) if out else None},
    }

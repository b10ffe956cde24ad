"""The power chain: per host, rack, supernode and cluster, feeds with N+X, energy and cost.

Host power is summed from parts (accelerator TDP, CPUs, NICs, other units, on-board
switch chips, a base for memory, storage and board), plus fans and pumps and the PSU loss
(``power.*`` in ``data/facility/facility.yaml``), unless the cluster file states
``host.power_kw``. At the planned workload's utilisation the accelerators draw TDP (or
their power cap, ``host.accelerator_power_limit_w``) while busy and a share of TDP (at most
the cap) while waiting (:func:`supernode.catalog.power.board_power_w`, the
planner's energy model too); everything else is taken at its rating (conservative).
Feeds are sized for the peak plus ``power.design_headroom`` (seed 001 §3.1: ~10 %), each
able to carry the load with ``feed_redundancy`` of them lost (N+X).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from supernode.catalog.power import board_power_w, power_assumptions
from supernode.facility.data import facility_data, rack_class
from supernode.facility.racks import RackPlan
from supernode.spec.cluster import FacilitySpec
from supernode.spec.resolved import Cluster, Switch
from supernode.topology.metrics import TopologyReport

KW = 1e3
J_PER_KWH = 3.6e6


@dataclass(frozen=True)
class HostPower:
    """Power of one host by part, W; ``total_w`` at the wall (stated or summed)."""

    parts_w: dict[str, float]
    total_w: float
    accelerator_w: float
    source: str


def switch_power_w(switch: Switch, pj_per_bit: float) -> float:
    """A switch's power: its catalog figure, else ``pj_per_bit`` x ports x port rate (W)."""
    if switch.power_w:
        return float(switch.power_w)
    return switch.radix * switch.port_bandwidth_bytes_per_s * 8 * pj_per_bit * 1e-12


def transceiver_w(gbit_per_s: float) -> float:
    """Power of one pluggable transceiver at ``gbit_per_s`` (energy per bit, W)."""
    return gbit_per_s * 1e9 * facility_data()["power"]["transceiver_pj_per_bit"] * 1e-12


def _cpu_w(model: str, tdp_w: float | None) -> float:
    if tdp_w:
        return float(tdp_w)
    table = facility_data()["power"]["cpu_w"]
    key = next((k for k in table if k in model.lower()), None)
    return float(table[key]) if key else float(facility_data()["power"]["cpu_default_w"])


def fans_fraction(cooling: str | None) -> float:
    """Fans and pumps as a share of the power they cool (air when cooling is not stated)."""
    return float(facility_data()["power"]["fans_pumps_fraction"][cooling or "air"])


def psu_efficiency(cluster: Cluster) -> float:
    """AC-to-DC efficiency: the rack's stated one, else the data file's (80 PLUS Titanium)."""
    racks = cluster.spec.racks
    if racks is not None and racks.psu_efficiency:
        return racks.psu_efficiency
    return float(facility_data()["power"]["psu_efficiency"])


def host_power(cluster: Cluster, plan: RackPlan) -> HostPower:
    """Power of one host from its parts (or as stated in ``host.power_kw``)."""
    data, spec = facility_data()["power"], cluster.spec.host
    tdp = _accelerator_power_w(cluster)[0]
    optical = cluster.scale_out is not None and cluster.scale_out.medium in ("optical", "mixed")
    nic_gbit = cluster.host.nic_bandwidth_bytes_per_s * 8 / 1e9
    chip_w = (switch_power_w(cluster.scale_up.switch, data["scale_up_switch_pj_per_bit"])
              if cluster.scale_up.switch else 0.0)
    parts = {
        "accelerators": cluster.host.accelerators_per_host * tdp,
        "cpus": sum(c.count * _cpu_w(c.model, c.tdp_w) for c in spec.cpus),
        "nics": cluster.host.nic_count * (data["nic_port_w"]
                                          + (transceiver_w(nic_gbit) if optical else 0.0)),
        "other_units": sum(u.count * (u.tdp_w or data["other_unit_default_w"])
                           for u in spec.other_units),
        "scale_up_switches": plan.scale_up_chips_on_host * chip_w,
        "base": float(data["host_base_w"]),
    }
    it = sum(parts.values())
    parts["fans_pumps"] = it * fans_fraction(plan.cooling)
    eff = psu_efficiency(cluster)
    parts["psu_loss"] = (it + parts["fans_pumps"]) * (1 / eff - 1)
    summed = sum(parts.values())
    if cluster.host.power_w:
        # a stated host maximum holds its accelerators at TDP: a cap takes off their share
        full = cluster.host.accelerators_per_host * board_power_w(cluster.accelerator.tdp_w)[0]
        cut = (full - parts["accelerators"]) * (1 + fans_fraction(plan.cooling)) / eff
        return HostPower(parts, cluster.host.power_w - cut, parts["accelerators"], "stated")
    return HostPower(parts, summed, parts["accelerators"], "parts")


def _accelerator_power_w(cluster: Cluster) -> tuple[float, float]:
    """(busy, waiting) board power of one accelerator (W), at its power cap if any."""
    return board_power_w(cluster.accelerator.tdp_w, cluster.accelerator.power_limit_w)


def wall_factor(cluster: Cluster, cooling: str | None) -> float:
    """Watts at the wall per watt of component power (fans and pumps, PSU loss)."""
    return (1 + fans_fraction(cooling)) / psu_efficiency(cluster)


def utilisation_factor(busy_share: float) -> float:
    """Average accelerator power over TDP when busy ``busy_share`` of the step (planner's
    energy model: TDP busy, the catalog's waiting share of TDP waiting)."""
    busy = min(max(busy_share, 0.0), 1.0)
    return busy + (1 - busy) * power_assumptions().waiting_fraction_of_tdp


def power_budget(cluster: Cluster, topo: TopologyReport, plan: RackPlan,
                 busy_share: float | None) -> dict[str, Any]:
    """Power per host, rack, supernode and cluster (W), at TDP and at the workload's use."""
    data = facility_data()["power"]
    host = host_power(cluster, plan)
    factor = wall_factor(cluster, plan.cooling)
    chip_w = (switch_power_w(cluster.scale_up.switch, data["scale_up_switch_pj_per_bit"])
              if cluster.scale_up.switch else 0.0)
    racks = cluster.spec.racks
    tray_w = (racks.switch_tray_power_kw * KW * plan.switch_trays_per_rack
              if racks is not None and racks.switch_tray_power_kw else
              plan.scale_up_chips_per_rack * chip_w * factor)
    up_optics = sum(topo.optical_transceivers.get(t, 0) for t in ("scale_up_l1", "scale_up_l2"))
    up_gbit = cluster.scale_up.link_bandwidth_bytes_per_s * 8 / 1e9
    up_optics_w = up_optics * transceiver_w(up_gbit) * factor / max(plan.compute_racks, 1)
    hosts_in_last = cluster.hosts - (plan.compute_racks - 1) * plan.hosts_per_rack
    rack_w = min(plan.hosts_per_rack, cluster.hosts) * host.total_w + tray_w + up_optics_w
    compute_w = cluster.hosts * host.total_w + plan.compute_racks * (tray_w + up_optics_w)
    fabric = _fabric_power(cluster, topo)
    at_tdp = compute_w + fabric["total_w"]
    busy_w, waiting_w = _accelerator_power_w(cluster)
    share = 1.0 if busy_share is None else min(max(busy_share, 0.0), 1.0)
    average_w = share * busy_w + (1 - share) * waiting_w
    saved = cluster.accelerators * (busy_w - average_w)
    use = average_w / board_power_w(cluster.accelerator.tdp_w)[0]
    at_use = at_tdp - saved * factor
    name, bounds = rack_class(rack_w)
    return {
        "host": {"parts_w": host.parts_w, "total_w": host.total_w, "source": host.source},
        "rack": {"hosts": min(plan.hosts_per_rack, cluster.hosts),
                 "hosts_w": min(plan.hosts_per_rack, cluster.hosts) * host.total_w,
                 "switch_trays_w": tray_w, "scale_up_optics_w": up_optics_w,
                 "total_w": rack_w, "last_rack_hosts": hosts_in_last,
                 "budget_w": racks.power_kw * KW if racks is not None and racks.power_kw
                 else None,
                 "rack_class": name, "rack_class_kw": bounds},
        "supernode_w": compute_w / cluster.supernodes,
        "fabric": fabric,
        "compute_w": compute_w,
        "cluster_at_tdp_w": at_tdp,
        "cluster_at_workload_w": at_use,
        "accelerator_busy_share": busy_share,
        "accelerator_power_factor": use,
        "accelerator_power_limit_w": cluster.accelerator.power_limit_w,
        "wall_factor": factor,
    }


def _fabric_power(cluster: Cluster, topo: TopologyReport) -> dict[str, float]:
    """Scale-out switch boxes and the optics not in hosts (W)."""
    out = cluster.scale_out
    if out is None:
        return {"switches": 0, "switches_w": 0.0, "optics": 0, "optics_w": 0.0, "total_w": 0.0}
    data = facility_data()["power"]
    box_w = switch_power_w(out.switch, data["switch_box_pj_per_bit"])
    switches = sum(topo.switches.get(t, 0) for t in ("leaf", "spine", "core"))
    # switch-end modules: a leaf link has one, a switch-to-switch link two; a twin-port cage
    # serves ports_per_cage of them, its module carrying their bits (energy per bit)
    per_cage = max(1, out.switch.ports_per_cage)
    optics = 0
    for tier in ("leaf", "spine", "core"):
        links = topo.optical_transceivers.get(tier, 0) // 2
        optics += (1 if tier == "leaf" else 2) * math.ceil(links / per_cage)
    optics_w = optics * transceiver_w(per_cage * out.switch.port_bandwidth_bytes_per_s * 8
                                      / 1e9)
    return {"switches": switches, "switches_w": switches * box_w, "optics": optics,
            "optics_w": optics_w, "total_w": switches * box_w + optics_w}


def feeds(peak_w: float, facility: FacilitySpec) -> dict[str, Any]:
    """Feeds for ``peak_w`` with N+X redundancy and the design headroom (seed 001 §3.1)."""
    headroom = float(facility_data()["power"]["design_headroom"])
    design = peak_w * (1 + headroom)
    carrying = facility.power_feeds - facility.feed_redundancy
    available = facility.power_available_kw * KW if facility.power_available_kw else None
    return {
        "feeds": facility.power_feeds, "redundancy": facility.feed_redundancy,
        "scheme": f"N+{facility.feed_redundancy} over {facility.power_feeds} feeds",
        "design_headroom": headroom, "design_load_w": design,
        "per_feed_capacity_w": design / carrying if carrying > 0 else math.inf,
        "available_w": available,
        "headroom": 1 - peak_w / available if available else None,
    }


def distribution(rack_w: float, stated: str | None) -> dict[str, Any]:
    """PDUs per feed a rack needs, and whether a busbar is the better choice (seed 001 §3.1:
    a 120 kW rack on PDUs fills the rack with cables)."""
    data = facility_data()["distribution"]
    per_feed = math.ceil(rack_w / (data["pdu_kw"] * KW))
    recommended = "busbar" if per_feed > data["max_pdus_per_feed"] else "pdu"
    return {"pdu_kw": data["pdu_kw"], "pdus_per_feed": per_feed,
            "max_pdus_per_feed": data["max_pdus_per_feed"], "recommended": recommended,
            "stated": stated}


def energy(at_use_w: float, step_time_s: float | None, tokens_per_step: float | None,
           facility: FacilitySpec) -> dict[str, Any]:
    """Energy per step and per million tokens (IT and facility, x PUE) and their cost."""
    hours = facility_data()["power"]["hours_per_year"]
    facility_w = at_use_w * facility.pue
    out: dict[str, Any] = {
        "pue": facility.pue, "price_usd_per_kwh": facility.energy_price_usd_per_kwh,
        "facility_w": facility_w,
        "annual_mwh": facility_w * hours / 1e6,
        "annual_cost_usd": facility_w * hours / 1e3 * facility.energy_price_usd_per_kwh,
        "per_step_it_j": None, "per_step_facility_j": None,
        "per_million_tokens_kwh": None, "cost_per_million_tokens_usd": None,
    }
    if step_time_s and tokens_per_step:
        per_step = facility_w * step_time_s
        kwh = per_step / tokens_per_step * 1e6 / J_PER_KWH
        out.update(per_step_it_j=at_use_w * step_time_s, per_step_facility_j=per_step,
                   per_million_tokens_kwh=kwh,
                   cost_per_million_tokens_usd=kwh * facility.energy_price_usd_per_kwh)
    return out

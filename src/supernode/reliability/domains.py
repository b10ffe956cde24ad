"""Failure domains and blast radius: what each failure takes down or degrades.

One :class:`FailureMode` per (component, location) of the job's inventory, from the topology:

* a GPU or its HBM, a host, a PSU, a NIC: the host (tray) leaves the job; the job restarts
  from its checkpoint, unless it can isolate the host and shrink data parallelism;
* one cabled NVLink: a live link fault (Xid 74) stops the job and NVIDIA's health checks
  drain the GPU with an inactive link, so its tray leaves the job (restart on a spare tray);
  one scale-up switch chip (plane): the job stops and restarts with the domain's scale-up
  bandwidth ``1/planes`` lower until the tray is replaced; a hot standby of at least that
  share keeps the restarted job at full speed;
* a NIC-to-leaf link or transceiver: its host loses a rail (the job stops; with dual-homed
  NICs the host runs on the other leaf at reduced bandwidth);
* a leaf: every host under it loses a rail; a spine, core or switch-to-switch link: the
  fabric loses ``1/width`` of that leaf's (pod's) uplinks and routing goes around it;
* a CDU: the racks it cools stop.

Each mode names its detection granularity (link, card, host, switch, rack, process) and, where
the flow simulator can replay it, a representative spec in netsim's ``--fail`` vocabulary.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import TypedDict

from supernode.reliability.inventory import Inventory
from supernode.reliability.rates import ComponentRate
from supernode.spec.resolved import Cluster
from supernode.topology.cluster_graph import fabric_layout

INTERRUPT, DEGRADE, ABSORBED = "interrupt", "degrade", "absorbed"
_HOST_PARTS = {"gpu": "card", "hbm": "card", "host": "host", "psu": "host", "nic": "link"}


@dataclass(frozen=True)
class FailureMode:
    """What one failure of ``component`` at ``location`` does to the job (SI units).

    ``rate_per_s`` covers every unit of the job; ``bandwidth_loss`` is the share of the
    ``tier`` bandwidth (``scale_up`` or ``scale_out``) lost; ``speed`` the job's throughput
    relative to nominal while degraded (set from the estimate, 1 when nothing slows).
    """

    component: str
    location: str
    units: float
    rate_per_s: float
    repair_s: float
    detection: str
    takes_down: str
    gpus_out: int
    hosts_out: int
    effect: str
    bandwidth_loss: float = 0.0
    tier: str | None = None
    speed: float = 1.0
    netsim_spec: str | None = None
    notes: list[str] = field(default_factory=list)
    #: Share of its scale-up domain's bandwidth the failed unit carried (before standby).
    domain_loss: float = 0.0

    def to_dict(self) -> dict:
        """JSON-ready row of the blast-radius table."""
        return {"component": self.component, "location": self.location, "units": self.units,
                "failures_per_day": self.rate_per_s * 86_400.0, "repair_s": self.repair_s,
                "detection": self.detection, "takes_down": self.takes_down,
                "gpus_out": self.gpus_out, "hosts_out": self.hosts_out, "effect": self.effect,
                "bandwidth_loss": self.bandwidth_loss, "tier": self.tier, "speed": self.speed,
                "netsim_spec": self.netsim_spec, "notes": self.notes,
                "domain_loss": self.domain_loss}


def _fabric_widths(cluster: Cluster) -> dict[str, float]:
    """Share of a leaf's (pod's) uplink capacity one switch-to-switch link or switch carries."""
    layout = fabric_layout(cluster)
    if layout is None or layout.sizing.tiers < 2:
        return {}
    s = layout.sizing
    out = {"spine_link": 1.0 / max(1, s.up_ports[0])}
    out["spine_switch"] = 1.0 / max(1, layout.aggs_per_pod if s.tiers == 3 else
                                    min(s.up_ports[0], s.switches[1]))
    if s.tiers == 3:
        out["core_link"] = 1.0 / max(1, s.up_ports[1])
        out["core_switch"] = 1.0 / max(1, min(s.up_ports[1], s.switches[2]))
    out["leaf_hosts"] = float(s.down_ports[0] if layout.rail_optimized else
                              math.ceil(s.down_ports[0] / max(1, layout.nics_per_host)))
    return out


def _scale_up_loss(cluster: Cluster, location: str, component: str, inv: Inventory) -> float:
    """Share of a domain's scale-up bandwidth one failed chip or link removes."""
    up = cluster.scale_up
    if component == "nvswitch":
        if location == "scale_up_l2":
            chips = inv.count("nvswitch") / max(1, cluster.supernodes)
            return 1.0 / max(1.0, chips)
        return 1.0 / max(1, up.switch_chips or 1)
    return 1.0 / max(1, up.links_per_accelerator)


class _ModeBase(TypedDict):
    """The fields every :class:`FailureMode` of one component and location shares."""

    component: str
    location: str
    units: float
    rate_per_s: float
    repair_s: float


def _mode(cluster: Cluster, inv: Inventory, rate: ComponentRate, location: str, units: float,
          standby: float, dual_homed: bool, widths: dict[str, float]) -> FailureMode:
    c = rate.name
    per_host = inv.gpus_per_host
    base: _ModeBase = {"component": c, "location": location, "units": units,
                       "rate_per_s": units * rate.rate_per_unit_s, "repair_s": rate.repair_s}
    if c == "software":
        return FailureMode(**base, detection="process", takes_down="the job (no hardware)",
                           gpus_out=0, hosts_out=0, effect=INTERRUPT)
    if c in _HOST_PARTS:
        spec = "switch:nic/0/0" if c == "nic" else None
        return FailureMode(**base, detection=_HOST_PARTS[c],
                           takes_down=f"its host ({per_host} GPUs) leaves the job",
                           gpus_out=per_host, hosts_out=1, effect=INTERRUPT, netsim_spec=spec)
    if c == "cdu":
        if not inv.cdu_failure_racks:  # a spare CDU on the shared loop takes its racks
            return FailureMode(**base, detection="rack",
                               takes_down=f"nothing: a spare CDU on the loop takes the "
                                          f"{inv.racks_per_cdu} racks it serves",
                               gpus_out=0, hosts_out=0, effect=ABSORBED)
        hosts = (inv.hosts_per_rack or 1) * inv.cdu_failure_racks
        return FailureMode(**base, detection="rack",
                           takes_down=f"the {inv.cdu_failure_racks} racks it cools "
                                      f"({hosts * per_host:,} GPUs; no spare CDU)",
                           gpus_out=hosts * per_host, hosts_out=hosts, effect=INTERRUPT)
    if location.startswith("scale_up"):
        return _scale_up_mode(base, cluster, inv, c, location, standby)
    return _fabric_mode(base, c, location, per_host, dual_homed, widths, cluster)


def _scale_up_mode(base: _ModeBase, cluster: Cluster, inv: Inventory, c: str, location: str,
                   standby: float) -> FailureMode:
    """A cabled NVLink or a scale-up switch chip: a live fault stops the job.

    A live NVLink fault is Xid 74 (NVIDIA Xid catalog: ``NVLINK_ERROR``), and NVIDIA's
    health check ``nvlink_active`` (max 0 inactive links per GPU) drains the GPU, then resets
    it (NVIDIA Health Validation, NVLink checks). So a lost cabled link takes its GPU's tray
    out: the job restarts on a spare tray (or waits for the repair; ``shrink``: without it).
    A lost switch chip faults every GPU's link through it; the job restarts with one plane
    fewer, its domain ``1/planes`` slower until the switch tray is replaced, unless the hot
    standby covers the plane (NVML reports such a fabric as ``DEGRADED_BW``).
    """
    per_host = inv.gpus_per_host
    loss = _scale_up_loss(cluster, location, c, inv)
    if c == "nvlink":
        return FailureMode(**base, detection="link",
                           takes_down=f"the job stops (Xid 74); its GPU's tray ({per_host} "
                                      f"GPUs) is drained, restart on a spare tray",
                           gpus_out=per_host, hosts_out=1, effect=INTERRUPT,
                           domain_loss=loss)
    after = max(0.0, loss - standby)
    then = (f"restart a plane short (scale-up -{loss:.1%}) until the tray is replaced"
            if after > 0 else f"restart; the hot standby covers the lost plane (-{loss:.1%})")
    return FailureMode(**base, detection="switch", takes_down=f"the job stops; {then}",
                       gpus_out=0, hosts_out=0, effect=INTERRUPT, bandwidth_loss=after,
                       tier="scale_up" if after > 0 else None,
                       netsim_spec=f"switch:{location}/0/0", domain_loss=loss)


def _fabric_mode(base: _ModeBase, c: str, location: str, per_host: int, dual_homed: bool,
                 widths: dict[str, float], cluster: Cluster) -> FailureMode:
    nics = max(1, cluster.host.nic_count)
    if c == "leaf_switch" or location == "leaf":
        hosts = int(widths.get("leaf_hosts", 1)) if c == "leaf_switch" else 1
        what = (f"the {hosts} hosts under it lose a rail" if c == "leaf_switch"
                else "its host loses a rail")
        spec: str | None = "switch:leaf/0" if c == "leaf_switch" else "link:nic/0/0-leaf/0"
        if dual_homed:
            return FailureMode(**base, detection="switch" if c == "leaf_switch" else "link",
                               takes_down=what + " (dual-homed: half of it)", gpus_out=0,
                               hosts_out=0, effect=DEGRADE, bandwidth_loss=1 / (2 * nics),
                               tier="scale_out", netsim_spec=spec)
        return FailureMode(**base, detection="switch" if c == "leaf_switch" else "link",
                           takes_down=what + "; they leave the job", gpus_out=hosts * per_host,
                           hosts_out=hosts, effect=INTERRUPT, netsim_spec=spec)
    key = c if c.endswith("_switch") else f"{location}_link"
    loss = widths.get(key, 0.0)
    spec = {"spine_switch": "switch:spine/0", "core_switch": "switch:core/0"}.get(
        c, "link:leaf/0-spine/0" if location == "spine" else None)
    return FailureMode(**base, detection="switch" if c.endswith("_switch") else "link",
                       takes_down=f"{loss:.1%} of the uplinks above it; routing goes around",
                       gpus_out=0, hosts_out=0, effect=DEGRADE, bandwidth_loss=loss,
                       tier="scale_out", netsim_spec=spec)


def failure_modes(cluster: Cluster, inv: Inventory, rates: dict[str, ComponentRate],
                  standby_share: float = 0.0, dual_homed: bool = False) -> list[FailureMode]:
    """One :class:`FailureMode` per (component, location) of ``inv``, rarest last."""
    widths = _fabric_widths(cluster)
    modes = [_mode(cluster, inv, rates[u.component], u.location, u.count, standby_share,
                   dual_homed, widths) for u in inv.units]
    return sorted(modes, key=lambda m: -m.rate_per_s)


def with_speed(mode: FailureMode, speed: float, note: str | None = None) -> FailureMode:
    """``mode`` with its degraded throughput set (and a note)."""
    return replace(mode, speed=speed, notes=[*mode.notes, *([note] if note else [])])

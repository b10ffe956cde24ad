"""Grouped alerts: several faults under one parent within a window name the parent.

Seed 003 §4.2: "if several links fail at once, suspect the switch or the power supply
above them". Fault records mark every unit (GPU, NIC port, host, rack) with a fault
condition of the unit-level rules (the same expressions, without ``for``); a grouped alert
fires when at least ``correlation_min_units`` units under one supernode's NVSwitch
fabric, leaf switch, power shelf, CDU or rack had a fault within ``correlation_window_s``.
A parent is taken from the cluster description's topology labels; a rule whose parent can
never hold that many units in this cluster is not generated.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from supernode.monitor.context import PackContext
from supernode.monitor.promql import Aggregate, Expr, Matcher, RangeCall, label_replace
from supernode.monitor.rules import AlertRule, RecordingRule
from supernode.monitor.rules_fabric import NIC_BER, NIC_DISCARDS, NIC_DOWNED
from supernode.monitor.rules_facility import RACK_AIR_DT
from supernode.monitor.rules_gpu import THROTTLE, XID_1H, deviation
from supernode.monitor.rules_scaleup import NVL_CRC, NVL_RECOVERY, NVL_REPLAY
from supernode.monitor.templates import label, value

FAULT_NVLINK = "supernode:gpu_nvlink_fault:any"
FAULT_NIC = "supernode:nic_link_fault:any"
FAULT_HOST = "supernode:host_fault:any"
FAULT_THERMAL = "supernode:thermal_fault:any"
PARENTS = ("cluster", "supernode", "rack", "power_shelf", "cdu")


def _union(parts: Sequence[Expr]) -> Expr:
    out = parts[0]
    for part in parts[1:]:
        out = out.or_(part)
    return out


def faults(ctx: PackContext) -> list[RecordingRule]:
    """Fault records (group ``supernode-correlation``), one series per faulty unit."""
    t, host = ctx.config.thresholds, ctx.host
    out = []
    host_parts: list[Expr] = [ctx.info("gpu").unless(ctx.sel("gpu_temperature"),
                                                     on=(host, ctx.gpu)),
                              ctx.rec(XID_1H).gt(0)]
    if ctx.tdp_w:
        host_parts.append(deviation(ctx, "power", t.power_deviation_min_ratio * ctx.tdp_w,
                                    t.power_deviation_sigma))
    if ctx.has_scale_up:
        nvlink = _union([ctx.rec(NVL_CRC).gt(t.nvlink_crc_errors_per_s),
                         ctx.rec(NVL_REPLAY).gt(t.nvlink_replay_errors_10m),
                         ctx.rec(NVL_RECOVERY).gt(0)])
        out.append(RecordingRule(FAULT_NVLINK, Aggregate("max", nvlink,
                                                         by=(host, ctx.gpu, *PARENTS))))
        host_parts.append(ctx.rec(FAULT_NVLINK))
    if ctx.has_scale_out:
        parts = [ctx.rec(NIC_DISCARDS).gt(0), ctx.rec(NIC_DOWNED).gt(0)]
        if ctx.nic_bits_per_s:
            drain = ctx.drain_ber
            assert drain is not None  # a NIC line rate: the link generation gives it
            parts.append(ctx.rec(NIC_BER).gt(drain))
        nic = _union(parts)
        by = (host, ctx.config.labels.nic_device, *PARENTS, "leaf")
        out.append(RecordingRule(FAULT_NIC, Aggregate("max", nic, by=by)))
        host_parts.append(ctx.rec(FAULT_NIC))
    out.append(RecordingRule(FAULT_HOST, Aggregate("max", _union(host_parts),
                                                   by=(host, *PARENTS))))
    hot = ctx.rec(THROTTLE).gt(t.thermal_violation_ratio).or_(
        deviation(ctx, "temperature", t.temperature_deviation_min_c,
                  t.temperature_deviation_sigma))
    hosts = label_replace(Aggregate("max", hot, by=(host, "cluster", "cdu")), "unit", "$1",
                          host, "(.*)")
    rack = ctx.config.labels.rack
    racks = label_replace(Aggregate("max", ctx.rec(RACK_AIR_DT).gt(t.rack_air_delta_t_max_c),
                                    by=(rack, "cluster", "cdu")), "unit", "$1", rack, "(.*)")
    out.append(RecordingRule(FAULT_THERMAL, Aggregate("max", hosts.or_(racks),
                                                      by=("unit", "cluster", "cdu"))))
    return out


@dataclass(frozen=True)
class Parent:
    """One kind of parent a grouped alert can name."""

    alert: str
    parent: str
    record: str
    units: str
    severity: str
    what: str
    runbook: str
    children: tuple[str, ...]


#: Unit-level alerts whose faults make up a host fault.
_HOST_CHILDREN = ("GpuNotReporting", "GpuXidErrorsRising", "GpuPowerBaselineDeviation",
                  "NvlinkCrcErrors", "NvlinkReplayErrors", "NvlinkRecoveryErrors",
                  "NicPortDrops", "LinkDown", "LinkBerAboveDrainThreshold")

PARENT_KINDS = (
    Parent("NvlinkFaultsInSupernode", "supernode", FAULT_NVLINK, "GPUs", "critical",
           "NVLink faults on several GPUs of one supernode: suspect an NVSwitch, a switch "
           "tray or the tray's power", "Check the NVSwitch trays and fabric manager log of "
           "the supernode before replacing GPUs; drain the supernode if errors persist.",
           ("NvlinkCrcErrors", "NvlinkReplayErrors", "NvlinkRecoveryErrors")),
    Parent("LinkFaultsUnderLeafSwitch", "leaf", FAULT_NIC, "NIC links", "critical",
           "Link faults on several ports under one leaf switch: suspect the leaf (or its "
           "power) rather than the cables", "Check the leaf switch's health, power supplies "
           "and fans (ibdiagnet, switch log); fail its rail over before replacing cables.",
           ("NicPortDrops", "LinkDown", "LinkBerAboveDrainThreshold")),
    Parent("FaultsUnderPowerShelf", "power_shelf", FAULT_HOST, "hosts", "critical",
           "Faults on several hosts fed by one power shelf: suspect the shelf or its feed",
           "Check the power shelf / PDU, breakers and the feed; move jobs off its hosts.",
           _HOST_CHILDREN),
    Parent("ThermalFaultsUnderCdu", "cdu", FAULT_THERMAL, "hosts or racks", "critical",
           "Thermal faults under one CDU: suspect the CDU, its pumps or the loop's balance",
           "Check CDU flow, pressure difference and supply temperature; balance the far "
           "racks' valves.",
           ("GpuThermalThrottling", "GpuTemperatureBaselineDeviation", "RackAirDeltaTHigh")),
    Parent("FaultsInRack", "rack", FAULT_HOST, "hosts", "warning",
           "Faults on several hosts of one rack: suspect rack power, cooling or cabling",
           "Check the rack's PDUs, cooling and top-of-rack cabling before the hosts.",
           _HOST_CHILDREN),
)


def capacity(ctx: PackContext, parent: str) -> int:
    """The most units one ``parent`` of this cluster can hold."""
    topology = ctx.topology
    if parent == "supernode":
        return ctx.given_cluster.scale_up.size
    if parent == "leaf":
        counts: dict[str, int] = {}
        for nic in topology.nics:
            counts[nic.leaf] = counts.get(nic.leaf, 0) + 1
        return max(counts.values(), default=0)
    if parent == "cdu":
        racks: dict[str, int] = {}
        for _, cdu in topology.racks:
            racks[cdu] = racks.get(cdu, 0) + 1
        return max(len(h) + racks.get(c, 0) for c, h in topology.children("cdu").items())
    return max((len(h) for h in topology.children(parent).values()), default=0)


def same_groups(ctx: PackContext, one: str, other: str) -> bool:
    """True when parents ``one`` and ``other`` group the hosts identically."""
    def groups(parent: str) -> set[frozenset[str]]:
        return {frozenset(h) for h in ctx.topology.children(parent).values()}
    return groups(one) == groups(other)


def skipped_parents(ctx: PackContext) -> dict[str, str]:
    """Grouped rules not generated for this cluster, with the reason."""
    n = ctx.config.thresholds.correlation_min_units
    out: dict[str, str] = {}
    if ctx.cluster is None:
        return out
    for kind in PARENT_KINDS:
        if kind.parent == "supernode" and not ctx.has_scale_up:
            out[kind.alert] = "no scale-up fabric"
        elif kind.parent == "leaf" and not ctx.has_scale_out:
            out[kind.alert] = "no scale-out fabric"
        elif kind.parent == "power_shelf" and same_groups(ctx, "power_shelf", "rack"):
            out[kind.alert] = "each rack is one power shelf group (FaultsInRack covers it)"
        elif kind.parent == "cdu" and ctx.cooling == "air":
            out[kind.alert] = "the cluster's racks are air-cooled (no CDU)"
        elif capacity(ctx, kind.parent) < n:
            out[kind.alert] = (f"a {kind.parent} holds at most {capacity(ctx, kind.parent)} "
                               f"{kind.units}, fewer than correlation_min_units={n}")
    return out


def alerts(ctx: PackContext) -> list[AlertRule]:
    """The grouped alerting rules this cluster's topology supports."""
    t = ctx.config.thresholds
    skipped = skipped_parents(ctx)
    out = []
    for kind in PARENT_KINDS:
        if kind.alert in skipped:
            continue
        named = ctx.rec(kind.record, Matcher(kind.parent, "!=", ""))
        count = Aggregate("count", RangeCall("max_over_time", named, t.correlation_window_s),
                          by=("cluster", kind.parent))
        out.append(AlertRule(
            kind.alert, count.ge(t.correlation_min_units), kind.severity, "seed 003 §4.2",
            f"{kind.parent} {label(kind.parent)}: {value('%.0f')} {kind.units} with faults "
            f"within {t.correlation_window_s // 60} min", kind.what + ".", kind.runbook,
            "parent", 0, "correlation", ()))
    return out


def inhibit_rules(alert_names: set[str]) -> list[dict[str, object]]:
    """Alertmanager ``inhibit_rules``: a grouped alert mutes its children under the same
    parent (``equal: [cluster, parent]``); only rules present in ``alert_names``."""
    out: list[dict[str, object]] = []
    for kind in PARENT_KINDS:
        children = [c for c in kind.children if c in alert_names]
        if kind.alert in alert_names and children:
            out.append({"source_matchers": [f'alertname="{kind.alert}"'],
                        "target_matchers": [f'alertname=~"{"|".join(children)}"'],
                        "equal": ["cluster", kind.parent]})
    return out

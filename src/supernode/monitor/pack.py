"""The rule pack of one cluster: groups of recording and alerting rules, and their summary.

:func:`build_pack` assembles, in evaluation order, the topology group (de-duplicated info
series), the signals (recording rules with topology labels), the hourly baselines, the
alerting groups and the correlation group, keeping the rules the cluster calls for (no
NVSwitch rules without NVSwitches, no coolant rules for air-cooled racks, no grouped rule
whose parent cannot hold enough units) and saying why the others were left out.
:func:`monitoring_rules` lists the alerts for a design report.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from supernode.errors import InputError
from supernode.monitor import (
    rules_correlation,
    rules_fabric,
    rules_facility,
    rules_gpu,
    rules_scaleup,
)
from supernode.monitor.config import MonitorConfig, load_config
from supernode.monitor.context import INFO_METRICS, PackContext, dedup_record
from supernode.monitor.placement import MonitorTopology, monitor_topology
from supernode.monitor.promql_syntax import duration
from supernode.monitor.rules import AlertRule, RecordingRule, RuleGroup
from supernode.spec.resolved import Cluster

#: Every alert the pack can generate, in report order.
ALL_ALERTS = (
    "GpuCommunicationBottleneck", "GpuXidErrorsRising", "GpuXidErrorsRising24h",
    "GpuNotReporting", "GpuThermalThrottling", "GpuTemperatureBaselineDeviation",
    "GpuPowerBaselineDeviation", "NvlinkCrcErrors", "NvlinkReplayErrors",
    "NvlinkRecoveryErrors", "NvlinkSaturated", "NvswitchTemperatureNearSlowdown",
    "NvswitchTemperatureAboveBaseline", "NvswitchPowerBaselineDeviation",
    "NvswitchFatalError", "SwitchPortDrops", "NicPortDrops", "ScaleOutLinkSaturated",
    "LinkDown", "LinkBerAboveDrainThreshold", "SwitchPortBerAboveDrainThreshold",
    "LinkBerRising", "LinkSymbolCounterSaturated", "SwitchPortSymbolCounterSaturated",
    "LinkSnrBelowBaseline",
    "CoolantDeltaTOutOfRange", "CoolantDeltaTCritical", "CoolantSupplyTemperatureHigh",
    "CoolantFlowBelowBaseline", "RackAirDeltaTHigh", "NvlinkFaultsInSupernode",
    "LinkFaultsUnderLeafSwitch", "FaultsUnderPowerShelf", "ThermalFaultsUnderCdu",
    "FaultsInRack",
)
MINUTE_S, HOUR_S = 60, 3600


@dataclass(frozen=True)
class RuleSummary:
    """One generated alert, as a design report lists it."""

    id: str
    seed: str
    severity: str
    for_s: int
    scope: str
    component: str
    summary: str
    expression: str

    def to_dict(self) -> dict[str, Any]:
        """Stable keys: id, seed, severity, for_s, scope, component, summary, expression."""
        return {"id": self.id, "seed": self.seed, "severity": self.severity,
                "for_s": self.for_s, "scope": self.scope, "component": self.component,
                "summary": self.summary, "expression": self.expression}


@dataclass(frozen=True)
class RulePack:
    """The rule groups of one cluster, in evaluation order, and what was left out."""

    ctx: PackContext
    groups: tuple[RuleGroup, ...]
    notes: tuple[str, ...]

    def alerts(self) -> list[AlertRule]:
        """Every alerting rule, in group order."""
        return [r for g in self.groups for r in g.rules if isinstance(r, AlertRule)]

    def recordings(self) -> list[RecordingRule]:
        """Every recording rule, in group order."""
        return [r for g in self.groups for r in g.rules if isinstance(r, RecordingRule)]

    def alert(self, name: str) -> AlertRule:
        """The alerting rule ``name``."""
        for rule in self.alerts():
            if rule.alert == name:
                return rule
        raise KeyError(name)

    def metrics_read(self) -> set[str]:
        """Metric names of exporters the rules read (recorded series excluded)."""
        recorded = {r.record for r in self.recordings()}
        return {m for g in self.groups for r in g.rules for m in r.expr.metrics()} - recorded

    def summaries(self) -> list[RuleSummary]:
        """One :class:`RuleSummary` per alert."""
        return [RuleSummary(r.alert, r.seed, r.severity, r.for_s, r.scope, r.component,
                            r.summary, r.expr.render()) for r in self.alerts()]


def _topology_group(ctx: PackContext) -> RuleGroup:
    kinds = [k for k in INFO_METRICS if k not in ("nic", "switch") or ctx.has_scale_out]
    rules = tuple(RecordingRule(dedup_record(k), ctx.dedup_expr(k)) for k in kinds)
    return RuleGroup("supernode-topology", MINUTE_S, rules)


def _notes(ctx: PackContext) -> list[str]:
    if ctx.cluster is None:
        return ["no cluster given: saturation and BER rules (they need the line rates), "
                "GpuPowerBaselineDeviation (it needs the TDP) and generated topology labels "
                "left out; topology labels come from info series in the data"]
    notes = []
    if not ctx.has_nvswitch:
        notes.append(f"NVSwitch rules left out: scale-up kind is {ctx.cluster.scale_up.kind}")
    if not ctx.has_scale_up:
        notes.append("NVLink rules left out: no scale-up fabric")
    if not ctx.has_scale_out:
        notes.append("scale-out fabric rules left out: no scale-out fabric or NICs")
    elif ctx.link_generation is not None and ctx.nic_bits_per_s:
        given = ctx.config.link_ber
        origin = ("from --config" if given.drain_ber is not None and
                  given.trend_floor_ber is not None else
                  f"the link model's effective (post-FEC) levels for {ctx.link_generation}"
                  + (", with --config overrides" if given.drain_ber is not None
                     or given.trend_floor_ber is not None else ""))
        notes.append(f"BER drain {ctx.drain_ber:g}, trend floor {ctx.watch_ber:g}: {origin}")
    if not rules_facility.liquid(ctx):
        notes.append("coolant rules left out: the cluster's racks are air-cooled")
    if not ctx.tdp_w:
        notes.append("GpuPowerBaselineDeviation left out: the accelerator has no TDP")
    for name, why in rules_correlation.skipped_parents(ctx).items():
        notes.append(f"{name} left out: {why}")
    vendor = (ctx.cluster.accelerator.spec.vendor or "").lower()
    if vendor and "nvidia" not in vendor:
        notes.append(f"metric names default to NVIDIA DCGM's; map them for "
                     f"{ctx.cluster.accelerator.spec.vendor} accelerators in --config metrics")
    return notes


def _check_disabled(config: MonitorConfig) -> None:
    for i, name in enumerate(config.disabled_rules):
        if name not in ALL_ALERTS:
            raise InputError(f"disabled_rules[{i}]", f"unknown rule {name!r}; rules: "
                                                     f"{', '.join(ALL_ALERTS)}")


def build_pack(cluster: Cluster | None, config: MonitorConfig | None = None) -> RulePack:
    """The rule pack of ``cluster`` (the bundled defaults when ``config`` is None).

    With ``cluster`` None, a pack for data of an unknown cluster (``supernode health``
    without ``--cluster``): every component assumed, no generated topology.
    """
    config = config or load_config()
    _check_disabled(config)
    topology = monitor_topology(cluster, config) if cluster is not None else \
        MonitorTopology("", (), (), (), (), ())
    ctx = PackContext(cluster, config, topology)
    modules = (rules_gpu, rules_scaleup, rules_fabric, rules_facility)
    signals = tuple(r for m in modules for r in m.signals(ctx))
    baselines = tuple(r for m in modules for r in m.baselines(ctx))
    keep = [name for name in ALL_ALERTS if name not in config.disabled_rules]

    def kept(rules: list[AlertRule]) -> tuple[AlertRule, ...]:
        return tuple(sorted((r for r in rules if r.alert in keep),
                            key=lambda r: keep.index(r.alert)))

    groups = [_topology_group(ctx), RuleGroup("supernode-signals", MINUTE_S, signals),
              RuleGroup("supernode-baselines", HOUR_S, baselines)]
    for name, module in (("gpu", rules_gpu), ("scale-up", rules_scaleup),
                         ("fabric", rules_fabric), ("facility", rules_facility)):
        rules = kept(module.alerts(ctx))
        if rules:
            groups.append(RuleGroup(f"supernode-alerts-{name}", MINUTE_S, rules))
    correlation = tuple(rules_correlation.faults(ctx)) + kept(rules_correlation.alerts(ctx))
    groups.append(RuleGroup("supernode-correlation", MINUTE_S, correlation))
    notes = _notes(ctx) + [f"{n} disabled by the configuration" for n in
                           config.disabled_rules]
    return RulePack(ctx, tuple(g for g in groups if g.rules), tuple(notes))


def monitoring_rules(cluster: Cluster, config: MonitorConfig | None = None
                     ) -> list[RuleSummary]:
    """The alerts generated for ``cluster``: id, seed section, severity, ``for``, expression.

    For the monitoring section of a design report: ``[s.to_dict() for s in ...]``.
    """
    return build_pack(cluster, config).summaries()


def describe_for(seconds: int) -> str:
    """A ``for`` duration as PromQL writes it ('0s' for none)."""
    return duration(seconds) if seconds else "0s"

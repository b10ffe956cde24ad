"""Facility rules: coolant inlet-outlet temperature difference, supply temperature and flow
per CDU, and rack air temperature difference (seed 001 §4.4, §3.2; seed 003 §4.4).

Coolant rules are generated unless the cluster says its racks are air-cooled; the design
supply temperature is the cluster's ``facility.coolant_inlet_c``. CDU and rack sensor
series must carry the ``cdu`` / ``rack`` labels of the configuration, and the supply and
return series of one CDU the same labels otherwise.
"""

from __future__ import annotations

from supernode.monitor.context import PackContext
from supernode.monitor.promql import RangeCall
from supernode.monitor.rules import AlertRule, RecordingRule
from supernode.monitor.rules_gpu import HOUR_S, baseline_terms
from supernode.monitor.templates import label, value

COOLANT_DT = "supernode:coolant_delta_t_c:avg5m"
COOLANT_SUPPLY = "supernode:coolant_supply_c:avg5m"
COOLANT_FLOW = "supernode:coolant_flow:avg10m"
RACK_AIR_DT = "supernode:rack_air_delta_t_c:avg5m"


def liquid(ctx: PackContext) -> bool:
    """True unless the cluster's racks are air-cooled."""
    return ctx.cooling != "air"


def signals(ctx: PackContext) -> list[RecordingRule]:
    """Facility signals."""
    out = []
    if liquid(ctx):
        out += [
            RecordingRule(COOLANT_DT, ctx.over("avg_over_time", "coolant_return_temperature",
                                               300)
                          - ctx.over("avg_over_time", "coolant_supply_temperature", 300)),
            RecordingRule(COOLANT_SUPPLY, ctx.over("avg_over_time",
                                                   "coolant_supply_temperature", 300)),
            RecordingRule(COOLANT_FLOW, ctx.over("avg_over_time", "coolant_flow", 600)),
        ]
    out.append(RecordingRule(RACK_AIR_DT, ctx.on_rack(
        ctx.over("avg_over_time", "rack_outlet_temperature", 300)
        - ctx.over("avg_over_time", "rack_inlet_temperature", 300))))
    return out


def baselines(ctx: PackContext) -> list[RecordingRule]:
    """Hourly coolant flow (1-hour group)."""
    if not liquid(ctx):
        return []
    return [RecordingRule(f"{COOLANT_FLOW}_avg1h",
                          RangeCall("avg_over_time", ctx.rec(COOLANT_FLOW), HOUR_S))]


def alerts(ctx: PackContext) -> list[AlertRule]:
    """The facility alerting rules."""
    t = ctx.config.thresholds
    cdu, rack = label(ctx.config.labels.cdu), label(ctx.config.labels.rack)
    out = []
    if liquid(ctx):
        dt = ctx.rec(COOLANT_DT)
        band = dt.lt(t.coolant_delta_t_min_c).or_(
            dt.gt(t.coolant_delta_t_max_c).and_(dt.le(t.coolant_delta_t_fault_c)))
        mean, _, enough = baseline_terms(ctx.rec(f"{COOLANT_FLOW}_avg1h"), t.baseline_window_s)
        design = ctx.coolant_inlet_c
        out += [
            AlertRule("CoolantDeltaTOutOfRange", band, "warning", "seed 001 §4.4",
                      f"CDU {cdu}: coolant inlet-outlet difference {value('%.1f')} C, "
                      f"outside {t.coolant_delta_t_min_c:g}-{t.coolant_delta_t_max_c:g} C",
                      "Normal coolant temperature rise is "
                      f"{t.coolant_delta_t_min_c:g}-{t.coolant_delta_t_max_c:g} C; outside it "
                      "the cooling does not match the heat load.", "Check flow, pump speed "
                      "and balancing valves; low difference with full load means too much "
                      "flow, high means too little.", "cdu", 900, "facility",
                      ("coolant_supply_temperature", "coolant_return_temperature")),
            AlertRule("CoolantDeltaTCritical", dt.gt(t.coolant_delta_t_fault_c), "critical",
                      "seed 001 §4.4", f"CDU {cdu}: coolant difference {value('%.1f')} C, above "
                      f"{t.coolant_delta_t_fault_c:g} C", "Above "
                      f"{t.coolant_delta_t_fault_c:g} C the cooling capacity does not match "
                      "the load: a fault.", "Raise flow now, check the CDU pumps and the far "
                      "racks' pressure drop; throttle jobs if temperatures climb.", "cdu", 300,
                      "facility", ("coolant_supply_temperature", "coolant_return_temperature")),
            AlertRule("CoolantSupplyTemperatureHigh",
                      ctx.rec(COOLANT_SUPPLY).gt(design + t.coolant_supply_margin_c),
                      "warning", "seed 001 §3.2", f"CDU {cdu}: coolant supply at "
                      f"{value('%.1f')} C, design {design:g} C", "The coolant inlet is "
                      f"more than {t.coolant_supply_margin_c:g} C above its design "
                      "temperature.", "Check the facility water loop and the CDU heat "
                      "exchanger.", "cdu", 600, "facility", ("coolant_supply_temperature",)),
            AlertRule("CoolantFlowBelowBaseline",
                      ctx.rec(COOLANT_FLOW).lt(mean * t.coolant_flow_min_ratio).and_(enough),
                      "warning", "seed 003 §4.4", f"CDU {cdu}: coolant flow {value('%.1f')}, "
                      f"under {t.coolant_flow_min_ratio:g} of its 7-day baseline",
                      "Coolant flow has dropped; the seed's case lost 15% of performance to "
                      "throttling when flow was set too low.", "Check pumps, filters and "
                      "valves; raise the secondary pump curve.", "cdu", 900, "facility",
                      ("coolant_flow",)),
        ]
    out.append(AlertRule(
        "RackAirDeltaTHigh", ctx.rec(RACK_AIR_DT).gt(t.rack_air_delta_t_max_c), "warning",
        "seed 003 §4.4", f"rack {rack}: air outlet {value('%.1f')} C above inlet",
        f"Rack air temperature rise above {t.rack_air_delta_t_max_c:g} C: heat removal "
        "does not keep up.", "Check blanking panels, hot-aisle containment, fans and the "
        "liquid loop's share of the heat.", "rack", 900, "facility",
        ("rack_inlet_temperature", "rack_outlet_temperature")))
    return out

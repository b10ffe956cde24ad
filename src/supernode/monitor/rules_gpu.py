"""GPU rules (seed 001 §4.4, seed 003 §4.4): utilisation with rising collective latency,
the Xid trend, GPUs that stop reporting, thermal throttling, and deviation of each GPU's
temperature and power from its own 7-day baseline.

Signals (recording rules) carry the GPU topology labels; baselines use only samples taken
while the GPU is busy (utilisation at least ``busy_utilisation_percent``), averaged per hour
in a 1-hour group, so a job ending is not a deviation.
"""

from __future__ import annotations

from supernode.monitor.context import PackContext
from supernode.monitor.placement import GPU_TOPOLOGY
from supernode.monitor.promql import Aggregate, Call, Expr, Matcher, RangeCall, Selector
from supernode.monitor.rules import AlertRule, RecordingRule
from supernode.monitor.templates import label, value

UTIL = "supernode:gpu_utilisation_percent:avg5m"
SM_ACTIVE = "supernode:gpu_sm_active_ratio:avg5m"
LATENCY_RISE = "supernode:collective_latency:rise_ratio"
XID_1H = "supernode:gpu_xid_errors:1h"
XID_1H_BEFORE = "supernode:gpu_xid_errors:1h_before"
XID_24H = "supernode:gpu_xid_errors:24h"
XID_24H_BEFORE = "supernode:gpu_xid_errors:24h_before"
THROTTLE = "supernode:gpu_thermal_throttle:ratio10m"
BUSY = {"temperature": "supernode:gpu_temperature_c:busy",
        "power": "supernode:gpu_power_w:busy"}
HOUR_S, DAY_S = 3600, 86400
#: Hourly baseline points needed before a deviation alerts (a day of history).
MIN_BASELINE_HOURS = 24


def _where(ctx: PackContext, gpu: bool = True) -> str:
    host = label(ctx.host)
    return f"GPU {label(ctx.gpu)} of {host}" if gpu else host


def signals(ctx: PackContext) -> list[RecordingRule]:
    """GPU signals with topology labels (group ``supernode-signals``)."""
    util = ctx.sel("gpu_utilisation")
    busy = util.ge(ctx.config.thresholds.busy_utilisation_percent)
    keys = (ctx.host, ctx.gpu)
    lat = ctx.over("avg_over_time", "collective_latency", 300) / \
        ctx.over("avg_over_time", "collective_latency", HOUR_S, offset_s=300)
    unit = ctx.config.thresholds.thermal_violation_unit_s
    out = [
        RecordingRule(UTIL, ctx.on_gpu(ctx.over("avg_over_time", "gpu_utilisation", 300))),
        RecordingRule(SM_ACTIVE, ctx.on_gpu(ctx.over("avg_over_time", "gpu_sm_active", 300))),
        RecordingRule(LATENCY_RISE, ctx.on_host(lat)),
        RecordingRule(XID_1H, ctx.on_gpu(xid_events(ctx, HOUR_S))),
        RecordingRule(XID_1H_BEFORE, ctx.on_gpu(xid_events(ctx, HOUR_S, HOUR_S))),
        RecordingRule(XID_24H, ctx.on_gpu(xid_events(ctx, DAY_S))),
        RecordingRule(XID_24H_BEFORE, ctx.on_gpu(xid_events(ctx, DAY_S, DAY_S))),
        RecordingRule(THROTTLE, ctx.on_gpu(ctx.over("rate", "gpu_thermal_violation", 600)
                                           * unit)),
    ]
    for kind, key in (("temperature", "gpu_temperature"), ("power", "gpu_power")):
        out.append(RecordingRule(BUSY[kind], ctx.on_gpu(ctx.sel(key).and_(busy, on=keys))))
        out.append(RecordingRule(f"{BUSY[kind]}_avg10m",
                                 RangeCall("avg_over_time", ctx.rec(BUSY[kind]), 600)))
    return out


def xid_events(ctx: PackContext, range_s: int, offset_s: int = 0) -> Expr:
    """Hardware Xid errors per GPU in ``range_s`` ending ``offset_s`` ago.

    dcgm-exporter's ``DCGM_EXP_XID_ERRORS_TOTAL`` counts the errors of each Xid code (label
    ``xid``) since the exporter started (``DCGM_FI_DEV_XID_ERRORS`` only holds the last
    code, so repeats are invisible; ``DCGM_EXP_XID_ERRORS_COUNT`` is a gauge over a sliding
    window, no counter). Application Xids (13, 31, 43, 45: NVIDIA's Xid catalog resolves
    them with RESTART_APP / CHECK_APP, a user program's fault) are filtered out. A code's
    series appears at its first error, so a series absent ``range_s`` before counts its
    whole value; the others count their ``increase()`` (counter resets handled)."""
    codes = "|".join(str(c) for c in ctx.config.thresholds.xid_application_codes)
    series = ctx.sel("gpu_xid")
    series = Selector(series.metric, (*series.matchers,
                                      Matcher(ctx.config.labels.xid, "!~", codes)))
    now = series.offset(offset_s)
    new = now.unless(series.offset(offset_s + range_s))
    grown = RangeCall("increase", now, range_s)
    return Aggregate("sum", new.or_(grown), without=(ctx.config.labels.xid,))


def baselines(ctx: PackContext) -> list[RecordingRule]:
    """Hourly busy averages (group ``supernode-baselines``, evaluated every hour)."""
    return [RecordingRule(f"{BUSY[k]}_avg1h", RangeCall("avg_over_time", ctx.rec(BUSY[k]),
                                                        HOUR_S)) for k in BUSY]


def baseline_terms(hourly: Selector, window_s: int) -> tuple[RangeCall, RangeCall, Expr]:
    """Mean and standard deviation of ``hourly`` over ``window_s`` before the last hour,
    and the condition that it holds at least :data:`MIN_BASELINE_HOURS` points."""
    mean = RangeCall("avg_over_time", hourly.offset(HOUR_S), window_s)
    std = RangeCall("stddev_over_time", hourly.offset(HOUR_S), window_s)
    enough = RangeCall("count_over_time", hourly.offset(HOUR_S), window_s) \
        .ge(MIN_BASELINE_HOURS)
    return mean, std, enough


def deviation(ctx: PackContext, kind: str, minimum: float, sigma: float) -> Expr:
    """``|busy now - baseline| > max(sigma * std, minimum)`` with enough history."""
    current = ctx.rec(f"{BUSY[kind]}_avg10m")
    mean, std, enough = baseline_terms(ctx.rec(f"{BUSY[kind]}_avg1h"),
                                       ctx.config.thresholds.baseline_window_s)
    return Call("abs", current - mean).gt(Call("clamp_min", std * sigma, (minimum,))) \
        .and_(enough)


def _bottleneck(ctx: PackContext) -> AlertRule:
    t = ctx.config.thresholds
    by = (ctx.host, *[x for x in GPU_TOPOLOGY if x not in ("leaf", "rail")])
    expr = Aggregate("avg", ctx.rec(SM_ACTIVE), by=by).lt(t.gpu_sm_active_low_ratio) \
        .and_(ctx.rec(LATENCY_RISE).gt(t.collective_latency_rise_ratio), on=(ctx.host,))
    return AlertRule(
        "GpuCommunicationBottleneck", expr, "warning", "seed 001 §4.4",
        f"{_where(ctx, False)}: SMs active {value('%.2f')} of the time while collective "
        "latency rose",
        f"SM activity below {t.gpu_sm_active_low_ratio:g} (DCGM_FI_PROF_SM_ACTIVE; "
        "DCGM_FI_DEV_GPU_UTIL counts NCCL's kernels as busy) with collective latency "
        f"{t.collective_latency_rise_ratio:g}x its last hour: a communication bottleneck.",
        "Check the scale-out links and leaf of this host for saturation, drops and BER; "
        "compare NCCL busbw with the fabric's line rate; look for a straggler rank.",
        "host", 600, "gpu", ("gpu_sm_active", "collective_latency"))


def _xid(ctx: PackContext) -> list[AlertRule]:
    t = ctx.config.thresholds
    hourly = ctx.rec(XID_1H).gt(ctx.rec(XID_1H_BEFORE).or_(ctx.rec(XID_1H) * 0))
    daily = ctx.rec(XID_24H).gt(ctx.rec(XID_24H_BEFORE).or_(ctx.rec(XID_24H) * 0)) \
        .and_(ctx.rec(XID_24H).ge(t.xid_min_events_24h))
    codes = ", ".join(str(c) for c in t.xid_application_codes)
    note = (f"Counts DCGM_EXP_XID_ERRORS_TOTAL by Xid code, application Xids ({codes}) "
            "left out; a repeated Xid counts each time.")
    return [
        AlertRule("GpuXidErrorsRising", hourly, "warning", "seed 001 §4.4",
                  f"{_where(ctx)}: {value('%.0f')} Xid event(s) in the last hour, more than "
                  "the hour before", "The Xid trend is rising; the count itself matters "
                  f"less than its growth. {note}",
                  "Read the Xid codes in the kernel log (dmesg | grep -i xid); watch the "
                  "daily trend; drain the GPU if it keeps rising.", "gpu", 0, "gpu",
                  ("gpu_xid",)),
        AlertRule("GpuXidErrorsRising24h", daily, "critical", "seed 001 §4.4",
                  f"{_where(ctx)}: {value('%.0f')} Xid events in 24 h, more than the day "
                  "before: plan replacement", f"The daily Xid trend is rising. {note}",
                  "Plan the GPU's replacement: drain it at the next checkpoint, run DCGM "
                  "diagnostics (dcgmi diag -r 3), open an RMA with the Xid history.", "gpu",
                  0, "gpu", ("gpu_xid",)),
    ]


def _not_reporting(ctx: PackContext) -> AlertRule:
    expr = ctx.info("gpu").unless(ctx.sel("gpu_temperature"), on=(ctx.host, ctx.gpu))
    return AlertRule(
        "GpuNotReporting", expr, "critical", "seed 001 §4.1",
        f"{_where(ctx)} is in the cluster description but reports no telemetry",
        "A GPU of the topology has sent no temperature for 10 minutes: fallen off the bus "
        "(Xid 79), host down, or exporter stopped.",
        "Check the host and dcgm-exporter; nvidia-smi -q; if the GPU is gone, isolate it and "
        "restart the job from its checkpoint on healthy GPUs.", "gpu", 300, "gpu",
        ("gpu_temperature",))


def _throttling(ctx: PackContext) -> AlertRule:
    t = ctx.config.thresholds
    return AlertRule(
        "GpuThermalThrottling", ctx.rec(THROTTLE).gt(t.thermal_violation_ratio), "warning",
        "seed 003 §4.4", f"{_where(ctx)} throttled {value('%.2f')} of the time for heat",
        "Thermal clock throttling; the seed's case lost 15% of performance to a coolant "
        "flow set too low.", "Check coolant flow and inlet temperature of the rack's CDU "
        "loop, fans and airflow; compare with the GPU's temperature baseline.", "gpu", 600,
        "gpu", ("gpu_thermal_violation",))


def _baselines(ctx: PackContext) -> list[AlertRule]:
    t = ctx.config.thresholds
    out = [AlertRule(
        "GpuTemperatureBaselineDeviation",
        deviation(ctx, "temperature", t.temperature_deviation_min_c,
                  t.temperature_deviation_sigma), "warning", "seed 003 §4.4",
        f"{_where(ctx)} runs {value('%.1f')} C off its own 7-day busy baseline",
        f"Busy temperature deviates from its baseline by more than "
        f"{t.temperature_deviation_sigma:g} sigma and {t.temperature_deviation_min_c:g} C.",
        "Compare with neighbours on the same CDU and rack; check cold-plate contact, coolant "
        "flow and fans.", "gpu", 900, "gpu", ("gpu_temperature", "gpu_utilisation"))]
    if ctx.tdp_w:
        minimum = t.power_deviation_min_ratio * ctx.tdp_w
        out.append(AlertRule(
            "GpuPowerBaselineDeviation",
            deviation(ctx, "power", minimum, t.power_deviation_sigma), "warning",
            "seed 003 §4.4", f"{_where(ctx)} draws {value('%.0f')} W off its own 7-day busy "
            "baseline", f"Busy power deviates from its baseline by more than "
            f"{t.power_deviation_sigma:g} sigma and {minimum:g} W "
            f"({t.power_deviation_min_ratio:g} of the {ctx.tdp_w:g} W TDP).",
            "Check power capping, clocks and throttle reasons (nvidia-smi -q -d PERFORMANCE); "
            "a GPU drawing less than its peers may be degraded.", "gpu", 900, "gpu",
            ("gpu_power", "gpu_utilisation")))
    return out


def alerts(ctx: PackContext) -> list[AlertRule]:
    """The GPU alerting rules."""
    return [_bottleneck(ctx), *_xid(ctx), _not_reporting(ctx), _throttling(ctx),
            *_baselines(ctx)]

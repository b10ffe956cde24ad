"""Scale-up rules: NVLink error rates and saturation per GPU, NVSwitch temperature, power
and fatal errors (seed 001 §4.4, §4.1; seed 003 §4.2).

NVLink utilisation is the exporter's byte rate over the accelerator's scale-up bandwidth
per direction from the cluster description (links x link bandwidth), so the 95 % line is
the fabric's, not a guess.
"""

from __future__ import annotations

from supernode.monitor.context import PackContext
from supernode.monitor.promql import Call, RangeCall, label_replace
from supernode.monitor.rules import AlertRule, RecordingRule
from supernode.monitor.rules_gpu import HOUR_S, baseline_terms
from supernode.monitor.templates import label, value

NVL_CRC = "supernode:nvlink_crc_errors:rate5m"
NVL_REPLAY = "supernode:nvlink_replay_errors:increase10m"
NVL_RECOVERY = "supernode:nvlink_recovery_errors:increase10m"
NVL_UTIL = "supernode:nvlink_utilisation:peak1m"
NVSW_HEADROOM = "supernode:nvswitch_temperature_c:headroom"
NVSW_TEMP = "supernode:nvswitch_temperature_c:avg10m"
NVSW_POWER = "supernode:nvswitch_power_w:avg10m"
NVSW_FATAL = "supernode:nvswitch_fatal_errors:changes10m"


def signals(ctx: PackContext) -> list[RecordingRule]:
    """NVLink and NVSwitch signals with topology labels."""
    out: list[RecordingRule] = []
    if ctx.has_scale_up:
        crc = label_replace(ctx.over("rate", "nvlink_crc_flit_errors", 300), "counter",
                            "crc_flit").or_(
            label_replace(ctx.over("rate", "nvlink_crc_data_errors", 300), "counter",
                          "crc_data"))
        out += [RecordingRule(NVL_CRC, ctx.on_gpu(crc)),
                RecordingRule(NVL_REPLAY, ctx.on_gpu(ctx.over("increase",
                                                              "nvlink_replay_errors", 600))),
                RecordingRule(NVL_RECOVERY, ctx.on_gpu(ctx.over(
                    "increase", "nvlink_recovery_errors", 600)))]
        cap = ctx.scale_up_bytes_per_s
        if cap:
            util = label_replace(ctx.over("max_over_time", "nvlink_tx_bytes", 60) / cap,
                                 "direction", "tx").or_(
                label_replace(ctx.over("max_over_time", "nvlink_rx_bytes", 60) / cap,
                              "direction", "rx"))
            out.append(RecordingRule(NVL_UTIL, ctx.on_gpu(util)))
    if ctx.has_nvswitch:
        power = ctx.over("avg_over_time", "nvswitch_power_vdd", 600) + \
            ctx.over("avg_over_time", "nvswitch_power_dvdd", 600) + \
            ctx.over("avg_over_time", "nvswitch_power_hvdd", 600)
        out += [RecordingRule(NVSW_HEADROOM, ctx.on_host(
                    ctx.sel("nvswitch_temperature_slowdown") - ctx.sel("nvswitch_temperature"))),
                RecordingRule(NVSW_TEMP, ctx.on_host(ctx.over("avg_over_time",
                                                              "nvswitch_temperature", 600))),
                RecordingRule(NVSW_POWER, ctx.on_host(power)),
                RecordingRule(NVSW_FATAL, ctx.on_host(ctx.over("changes",
                                                               "nvswitch_fatal_errors", 600)))]
    return out


def baselines(ctx: PackContext) -> list[RecordingRule]:
    """Hourly NVSwitch temperature and power averages."""
    if not ctx.has_nvswitch:
        return []
    return [RecordingRule(f"{name}_avg1h", RangeCall("avg_over_time", ctx.rec(name), HOUR_S))
            for name in (NVSW_TEMP, NVSW_POWER)]


def _gpu(ctx: PackContext) -> str:
    return f"GPU {label(ctx.gpu)} of {label(ctx.host)}"


def _switch(ctx: PackContext) -> str:
    return f"NVSwitch {label(ctx.config.labels.nvswitch)} of {label(ctx.host)}"


def nvlink_alerts(ctx: PackContext) -> list[AlertRule]:
    """NVLink error-rate and saturation rules."""
    if not ctx.has_scale_up:
        return []
    t = ctx.config.thresholds
    out = [
        AlertRule("NvlinkCrcErrors", ctx.rec(NVL_CRC).gt(t.nvlink_crc_errors_per_s),
                  "warning", "seed 003 §4.2", f"{_gpu(ctx)}: {value('%.3g')} NVLink "
                  f"{label('counter')} errors/s", "A high CRC error rate is a signal-"
                  "integrity problem: cable, connector or interference.",
                  "Reseat or replace the NVLink cable/tray connector; run the weekly link "
                  "diagnostic (nvidia-smi nvlink -e) and compare with last week.", "gpu", 600,
                  "nvlink", ("nvlink_crc_flit_errors", "nvlink_crc_data_errors")),
        AlertRule("NvlinkReplayErrors", ctx.rec(NVL_REPLAY).gt(t.nvlink_replay_errors_10m),
                  "warning", "seed 003 §4.2", f"{_gpu(ctx)}: {value('%.0f')} NVLink replays "
                  "in 10 min", "Link-level retransmissions add latency jitter to every "
                  "collective on this GPU.", "Check the link's CRC errors and BER trend; plan "
                  "a cable or tray swap at the next checkpoint.", "gpu", 0, "nvlink",
                  ("nvlink_replay_errors",)),
        AlertRule("NvlinkRecoveryErrors", ctx.rec(NVL_RECOVERY).gt(0), "critical",
                  "seed 003 §4.2", f"{_gpu(ctx)}: {value('%.0f')} NVLink recoveries in "
                  "10 min", "A recovery retrains the link: it went down, if briefly, and can "
                  "hang the job within seconds.", "Drain the GPU or its NVLink tray; restart "
                  "the job from its checkpoint on a healthy supernode.", "gpu", 0, "nvlink",
                  ("nvlink_recovery_errors",))]
    if not ctx.scale_up_bytes_per_s:
        return out
    cap_gb = ctx.scale_up_bytes_per_s / 1e9
    return out + [
        AlertRule("NvlinkSaturated", ctx.rec(NVL_UTIL).gt(t.link_saturation_ratio),
                  "warning", "seed 001 §4.4", f"{_gpu(ctx)}: NVLink {label('direction')} at "
                  f"{value('%.2f')} of {cap_gb:g} GB/s", "Scale-up link peak utilisation "
                  f"above {t.link_saturation_ratio:g} for {t.link_saturation_for_s} s: "
                  "saturated, or traffic skewed onto it.", "Check the parallel layout (TP "
                  "inside the domain), traffic skew across ranks, and NCCL algorithm choice.",
                  "gpu", t.link_saturation_for_s, "nvlink",
                  ("nvlink_tx_bytes", "nvlink_rx_bytes")),
    ]


def nvswitch_alerts(ctx: PackContext) -> list[AlertRule]:
    """NVSwitch temperature, power and fatal-error rules."""
    if not ctx.has_nvswitch:
        return []
    t = ctx.config.thresholds
    window = t.baseline_window_s
    temp_mean, _, temp_enough = baseline_terms(ctx.rec(f"{NVSW_TEMP}_avg1h"), window)
    power_mean, _, power_enough = baseline_terms(ctx.rec(f"{NVSW_POWER}_avg1h"), window)
    temp_rise = (ctx.rec(NVSW_TEMP) - temp_mean).gt(t.nvswitch_temperature_rise_c) \
        .and_(temp_enough)
    power_dev = Call("abs", ctx.rec(NVSW_POWER) - power_mean) \
        .gt(power_mean * t.nvswitch_power_deviation_ratio).and_(power_enough)
    return [
        AlertRule("NvswitchTemperatureNearSlowdown",
                  ctx.rec(NVSW_HEADROOM).lt(t.nvswitch_slowdown_margin_c), "critical",
                  "seed 001 §4.4", f"{_switch(ctx)} is {value('%.1f')} C from its slowdown "
                  "temperature", "Within the margin of the device's own slowdown limit; a "
                  "hot NVSwitch often means a blocked cooling path.", "Check the tray's "
                  "airflow or cold plate and fans now; throttling slows every GPU of the "
                  "supernode.", "nvswitch", 300, "nvswitch",
                  ("nvswitch_temperature", "nvswitch_temperature_slowdown")),
        AlertRule("NvswitchTemperatureAboveBaseline", temp_rise, "warning", "seed 001 §4.4",
                  f"{_switch(ctx)} runs {value('%.1f')} C above its 7-day baseline",
                  "A rising NVSwitch temperature is the precursor of a blocked cooling path.",
                  "Inspect filters, fans and cold-plate flow of the switch tray before it "
                  "reaches its slowdown limit.", "nvswitch", 900, "nvswitch",
                  ("nvswitch_temperature",)),
        AlertRule("NvswitchPowerBaselineDeviation", power_dev, "warning", "seed 001 §4.4",
                  f"{_switch(ctx)} power is {value('%.0f')} W off its 7-day baseline",
                  f"NVSwitch rail power (VDD+DVDD+HVDD) deviates more than "
                  f"{t.nvswitch_power_deviation_ratio:g} from its baseline.",
                  "Compare with the other switches of the domain; check traffic and the "
                  "tray's power supply.", "nvswitch", 900, "nvswitch",
                  ("nvswitch_power_vdd", "nvswitch_power_dvdd", "nvswitch_power_hvdd")),
        AlertRule("NvswitchFatalError", ctx.rec(NVSW_FATAL).gt(0), "critical",
                  "seed 001 §4.1", f"{_switch(ctx)} reported a fatal SXid",
                  "DCGM_FI_DEV_NVSWITCH_FATAL_ERRORS changed (it holds the last SXid): one "
                  "NVSwitch fault degrades the whole supernode's fabric.",
                  "Drain the supernode, reset the NVSwitch (nvidia-smi -r / fabric manager "
                  "restart) and move jobs to a healthy supernode.", "nvswitch", 0,
                  "nvswitch", ("nvswitch_fatal_errors",)),
    ]


def alerts(ctx: PackContext) -> list[AlertRule]:
    """Every scale-up alerting rule the cluster's scale-up kind calls for."""
    return nvlink_alerts(ctx) + nvswitch_alerts(ctx)

"""Fire/silent scenarios of the GPU, NVLink and NVSwitch rules.

Each scenario has a unit that must fire and a near miss that must not (and an early check
where nothing fires yet, so ``for`` is exercised). Values are worked out by hand in the
comments; the offline evaluator and promtool must both agree with them.
"""

from __future__ import annotations

from collections.abc import Callable

from supernode.monitor.context import PackContext
from supernode.monitor.infometrics import host_labels
from supernode.monitor.scenarios import (
    Check,
    Kit,
    Scenario,
    _frozen,
    known,
    ramp,
    xid_counter,
)

HOUR = 3600


def bottleneck(ctx: PackContext) -> Scenario:
    """Host A: SMs active 0.70, latency 1.0 -> 1.5 s at minute 70 (fires from ~72, for 10m).
    Host B: SMs active 0.95 (busy: silent). Host C: 0.70, latency flat (silent). Every GPU
    reads 100 % GPU_UTIL (NCCL's kernels count as busy there): the rule must not use it."""
    kit = Kit(ctx, 91)
    hosts = [kit.host(0), kit.host(1), kit.host(2)]
    for host, active, rises in zip(hosts, (0.70, 0.95, 0.70), (True, True, False),
                                   strict=True):
        gpus = kit.gpus_of(host)[:2]
        kit.gpu_info(*gpus)
        kit.host_info(host)
        for gpu in gpus:
            kit.gpu_series("gpu_utilisation", gpu, [100.0])
            kit.gpu_series("gpu_sm_active", gpu, [active])
        kit.host_series("collective_latency", host,
                        [1.0] * 70 + [1.5 if rises else 1.0])
    label = {k: v for k, v in host_labels(hosts[0], ctx.config, ctx.topology.cluster).items()
             if k != "role"}
    return kit.scenario("GpuCommunicationBottleneck", [
        Check(75 * 60, "GpuCommunicationBottleneck", ()),
        Check(90 * 60, "GpuCommunicationBottleneck", (_frozen(label),))])


def xid_hourly(ctx: PackContext) -> Scenario:
    """GPU A: first Xid 79 at minute 100: its series is new this hour, 1 error vs 0 the
    hour before (fires). GPU B: hardware Xid 48 at minutes 20, 30, 40, then 100: 1 this
    hour vs 2-3 before (silent at both checks), and application Xid 43 five times this
    hour (left out: would fire if counted)."""
    kit = Kit(ctx, 111)
    a, b = kit.gpu(0), kit.gpu(1)
    kit.gpu_info(a, b)
    kit.gpu_series("gpu_xid", a, xid_counter([100]), xid="79")
    kit.gpu_series("gpu_xid", b, xid_counter([20, 30, 40, 100]), xid="48")
    kit.gpu_series("gpu_xid", b, xid_counter([60, 70, 80, 90, 100]), xid="43")
    return kit.scenario("GpuXidErrorsRising", [
        Check(95 * 60, "GpuXidErrorsRising", ()),
        Check(110 * 60, "GpuXidErrorsRising", (kit.gpu_alert(a),))])


def xid_daily(ctx: PackContext) -> Scenario:
    """Hourly steps; at 44 h the last day (20-44 h) is compared with the day before.
    A: Xid 48 at 10 h, Xid 79 at 30 h and 40 h: 2 vs 1 (fires). B: Xid 79 at 2, 6, 10 h
    and at 30, 38 h: 2 vs 3 (silent), with application Xid 13 at 25-40 h (left out).
    C: one Xid 79 at 30 h, under the 2-event minimum (silent)."""
    kit = Kit(ctx, 45)
    a, b, c = kit.gpu(0), kit.gpu(1), kit.gpu(2)
    kit.gpu_info(a, b, c)
    kit.gpu_series("gpu_xid", a, xid_counter([10]), xid="48")
    kit.gpu_series("gpu_xid", a, xid_counter([30, 40]), xid="79")
    kit.gpu_series("gpu_xid", b, xid_counter([2, 6, 10, 30, 38]), xid="79")
    kit.gpu_series("gpu_xid", b, xid_counter(list(range(25, 41))), xid="13")
    kit.gpu_series("gpu_xid", c, xid_counter([30]), xid="79")
    return kit.scenario("GpuXidErrorsRising24h", [
        Check(44 * HOUR, "GpuXidErrorsRising24h", (kit.gpu_alert(a),))], HOUR, long=True)


def not_reporting(ctx: PackContext) -> Scenario:
    """GPU A stops reporting after minute 9: gone from the 5-minute lookback at ~14-15,
    firing 5 minutes later. GPU B reports throughout (silent)."""
    kit = Kit(ctx, 25)
    a, b = kit.gpu(0), kit.gpu(1)
    kit.gpu_info(a, b)
    kit.gpu_series("gpu_temperature", a, [50.0] * 10 + [None])
    kit.gpu_series("gpu_temperature", b, [50.0])
    return kit.scenario("GpuNotReporting", [
        Check(16 * 60, "GpuNotReporting", ()),
        Check(22 * 60, "GpuNotReporting", (kit.gpu_info_alert(a),))])


def throttling(ctx: PackContext) -> Scenario:
    """A throttled 10 % of the time (fires), B 2 % (silent); threshold 5 %."""
    kit = Kit(ctx, 26)
    a, b = kit.gpu(0), kit.gpu(1)
    kit.gpu_info(a, b)
    unit = ctx.config.thresholds.thermal_violation_unit_s
    kit.gpu_series("gpu_thermal_violation", a, ramp(1e12, 0.10 * 60 / unit, 26))
    kit.gpu_series("gpu_thermal_violation", b, ramp(1e12, 0.02 * 60 / unit, 26))
    return kit.scenario("GpuThermalThrottling", [
        Check(3 * 60, "GpuThermalThrottling", ()),
        Check(25 * 60, "GpuThermalThrottling", (kit.gpu_alert(a),))])


def _baseline(ctx: PackContext, name: str, key: str, base: float, fire: float,
              miss: float) -> Scenario:
    """Hourly steps, busy GPUs A and B at ``base`` for 30 h, then A at ``fire`` (past the
    threshold, fires at 31 h) and B at ``miss`` (inside it); idle GPU C jumps but is not
    busy, so it has no baseline (silent)."""
    kit = Kit(ctx, 33)
    a, b, c = kit.gpu(0), kit.gpu(1), kit.gpu(2)
    kit.gpu_info(a, b, c)
    for gpu, util, after in ((a, 95.0, fire), (b, 95.0, miss), (c, 10.0, fire)):
        kit.gpu_series("gpu_utilisation", gpu, [util])
        kit.gpu_series(key, gpu, [base] * 30 + [after])
    return kit.scenario(name, [Check(30 * HOUR, name, ()),
                               Check(32 * HOUR, name, (kit.gpu_alert(a),))], HOUR, long=True)


def temperature_baseline(ctx: PackContext) -> Scenario:
    """60 C for 30 h; A +10 C (> max(3 sigma, 5 C)), B +3 C."""
    return _baseline(ctx, "GpuTemperatureBaselineDeviation", "gpu_temperature", 60, 70, 63)


def power_baseline(ctx: PackContext) -> Scenario:
    """0.6 TDP for 30 h; A +0.25 TDP (> 0.1 TDP), B +0.05 TDP."""
    tdp = ctx.tdp_w or 1000.0
    return _baseline(ctx, "GpuPowerBaselineDeviation", "gpu_power", 0.6 * tdp, 0.85 * tdp,
                     0.65 * tdp)


def nvlink_crc(ctx: PackContext) -> Scenario:
    """A: 30 flit CRC errors a minute (0.5/s > 0.1/s, fires after 10 min); A's data CRC
    counter and B (3 a minute, 0.05/s) stay silent."""
    kit = Kit(ctx, 21)
    a, b = kit.gpu(0), kit.gpu(1)
    kit.gpu_info(a, b)
    kit.gpu_series("nvlink_crc_flit_errors", a, ramp(1000, 30, 21))
    kit.gpu_series("nvlink_crc_data_errors", a, [1000.0])
    kit.gpu_series("nvlink_crc_flit_errors", b, ramp(1000, 3, 21))
    kit.gpu_series("nvlink_crc_data_errors", b, [1000.0])
    return kit.scenario("NvlinkCrcErrors", [
        Check(3 * 60, "NvlinkCrcErrors", ()),
        Check(20 * 60, "NvlinkCrcErrors", (kit.gpu_alert(a, counter="crc_flit"),))])


def nvlink_replay(ctx: PackContext) -> Scenario:
    """A: 20 replays in 10 min (> 10, fires); B: 5 (silent)."""
    kit = Kit(ctx, 16)
    a, b = kit.gpu(0), kit.gpu(1)
    kit.gpu_info(a, b)
    kit.gpu_series("nvlink_replay_errors", a, ramp(500, 2, 16))
    kit.gpu_series("nvlink_replay_errors", b, ramp(500, 0.5, 16))
    return kit.scenario("NvlinkReplayErrors", [
        Check(3 * 60, "NvlinkReplayErrors", ()),
        Check(15 * 60, "NvlinkReplayErrors", (kit.gpu_alert(a),))])


def nvlink_recovery(ctx: PackContext) -> Scenario:
    """A: one recovery at minute 12 (fires while it is in the 10-minute window, resolved
    by 30); B: none."""
    kit = Kit(ctx, 31)
    a, b = kit.gpu(0), kit.gpu(1)
    kit.gpu_info(a, b)
    kit.gpu_series("nvlink_recovery_errors", a, [0.0] * 12 + [1.0])
    kit.gpu_series("nvlink_recovery_errors", b, [0.0])
    return kit.scenario("NvlinkRecoveryErrors", [
        Check(15 * 60, "NvlinkRecoveryErrors", (kit.gpu_alert(a),)),
        Check(30 * 60, "NvlinkRecoveryErrors", ())])


def nvlink_saturated(ctx: PackContext) -> Scenario:
    """A transmits at 0.97 of the scale-up bandwidth (fires after 10 min), receives at 0.5;
    B transmits at 0.90 (silent)."""
    kit = Kit(ctx, 16)
    a, b = kit.gpu(0), kit.gpu(1)
    kit.gpu_info(a, b)
    cap = known(ctx.scale_up_bytes_per_s, "scale-up bandwidth")
    for gpu, tx in ((a, 0.97), (b, 0.90)):
        kit.gpu_series("nvlink_tx_bytes", gpu, [tx * cap])
        kit.gpu_series("nvlink_rx_bytes", gpu, [0.5 * cap])
    return kit.scenario("NvlinkSaturated", [
        Check(5 * 60, "NvlinkSaturated", ()),
        Check(15 * 60, "NvlinkSaturated", (kit.gpu_alert(a, direction="tx"),))])


def _switch_alert(kit: Kit, host, index: str):
    labels = host_labels(host, kit.ctx.config, kit.ctx.topology.cluster)
    return _frozen(labels | {kit.ctx.config.labels.nvswitch: index})


def _switch_series(kit: Kit, key: str, host, index: str, values) -> None:
    kit.host_series(key, host, values, **{kit.ctx.config.labels.nvswitch: index})


def nvswitch_slowdown(ctx: PackContext) -> Scenario:
    """NVSwitch 0 at 82 C with an 85 C slowdown limit (3 C < 5 C margin, fires after
    5 min); NVSwitch 1 at 75 C (silent)."""
    kit = Kit(ctx, 11)
    host = kit.host(0)
    kit.host_info(host)
    for index, temp in (("0", 82.0), ("1", 75.0)):
        _switch_series(kit, "nvswitch_temperature", host, index, [temp])
        _switch_series(kit, "nvswitch_temperature_slowdown", host, index, [85.0])
    return kit.scenario("NvswitchTemperatureNearSlowdown", [
        Check(3 * 60, "NvswitchTemperatureNearSlowdown", ()),
        Check(10 * 60, "NvswitchTemperatureNearSlowdown", (_switch_alert(kit, host, "0"),))])


def nvswitch_temperature(ctx: PackContext) -> Scenario:
    """Hourly. 50 C for 30 h; switch 0 then +10 C (> 8 C, fires at 31 h), switch 1 +5 C."""
    kit = Kit(ctx, 33)
    host = kit.host(0)
    kit.host_info(host)
    _switch_series(kit, "nvswitch_temperature", host, "0", [50.0] * 30 + [60.0])
    _switch_series(kit, "nvswitch_temperature", host, "1", [50.0] * 30 + [55.0])
    return kit.scenario("NvswitchTemperatureAboveBaseline", [
        Check(30 * HOUR, "NvswitchTemperatureAboveBaseline", ()),
        Check(32 * HOUR, "NvswitchTemperatureAboveBaseline", (_switch_alert(kit, host, "0"),))],
        HOUR, long=True)


def nvswitch_power(ctx: PackContext) -> Scenario:
    """Hourly. Rails 30+10+5 W for 30 h; switch 0 then 60 W (15 W > 0.2 x 45 W, fires),
    switch 1 then 50 W (silent)."""
    kit = Kit(ctx, 33)
    host = kit.host(0)
    kit.host_info(host)
    for index, vdd in (("0", 45.0), ("1", 35.0)):
        _switch_series(kit, "nvswitch_power_vdd", host, index, [30.0] * 30 + [vdd])
        _switch_series(kit, "nvswitch_power_dvdd", host, index, [10.0])
        _switch_series(kit, "nvswitch_power_hvdd", host, index, [5.0])
    return kit.scenario("NvswitchPowerBaselineDeviation", [
        Check(30 * HOUR, "NvswitchPowerBaselineDeviation", ()),
        Check(32 * HOUR, "NvswitchPowerBaselineDeviation", (_switch_alert(kit, host, "0"),))],
        HOUR, long=True)


def nvswitch_fatal(ctx: PackContext) -> Scenario:
    """Switch 0 reports SXid 12 at minute 5 (fires while in the 10-minute window); switch
    1 none."""
    kit = Kit(ctx, 21)
    host = kit.host(0)
    kit.host_info(host)
    _switch_series(kit, "nvswitch_fatal_errors", host, "0", [0.0] * 5 + [12.0])
    _switch_series(kit, "nvswitch_fatal_errors", host, "1", [0.0])
    return kit.scenario("NvswitchFatalError", [
        Check(8 * 60, "NvswitchFatalError", (_switch_alert(kit, host, "0"),)),
        Check(20 * 60, "NvswitchFatalError", ())])


SCENARIOS: dict[str, Callable[[PackContext], Scenario]] = {
    "GpuCommunicationBottleneck": bottleneck,
    "GpuXidErrorsRising": xid_hourly,
    "GpuXidErrorsRising24h": xid_daily,
    "GpuNotReporting": not_reporting,
    "GpuThermalThrottling": throttling,
    "GpuTemperatureBaselineDeviation": temperature_baseline,
    "GpuPowerBaselineDeviation": power_baseline,
    "NvlinkCrcErrors": nvlink_crc,
    "NvlinkReplayErrors": nvlink_replay,
    "NvlinkRecoveryErrors": nvlink_recovery,
    "NvlinkSaturated": nvlink_saturated,
    "NvswitchTemperatureNearSlowdown": nvswitch_slowdown,
    "NvswitchTemperatureAboveBaseline": nvswitch_temperature,
    "NvswitchPowerBaselineDeviation": nvswitch_power,
    "NvswitchFatalError": nvswitch_fatal,
}

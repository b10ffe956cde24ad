"""Seeded random exporter series for the differential test (offline evaluator vs promtool).

Values are centred on the rules' thresholds so alerts fire and clear; counters reset now
and then, samples go missing and staleness markers appear, so the edge cases of rate
extrapolation, lookback and staleness are exercised on both sides.
"""

from __future__ import annotations

import random

from supernode.monitor.context import INFO_METRICS, PackContext
from supernode.monitor.scenarios import STALE, Check, Kit, Scenario


def _gauge(rng: random.Random, steps: int, low: float, high: float, gaps: bool = True):
    values = []
    for _ in range(steps):
        roll = rng.random()
        if gaps and roll < 0.03:
            values.append(None)
        elif gaps and roll < 0.04:
            values.append(STALE)
        else:
            values.append(round(rng.uniform(low, high), 3))
    return values


def _counter(rng: random.Random, steps: int, high: float, p_event: float = 1.0,
             resets: bool = True):
    value, values = rng.uniform(0, 100 * high), []
    for _ in range(steps):
        if resets and rng.random() < 0.03:
            value = 0.0
        elif rng.random() < p_event:
            value += rng.uniform(0, high)
        values.append(None if rng.random() < 0.03 else round(value, 3))
    return values


def _code(rng: random.Random, steps: int, p_change: float):
    value, values = 0.0, []
    for _ in range(steps):
        if rng.random() < p_change:
            value = float(rng.choice((13, 31, 43, 48, 79, 94)))
        values.append(value)
    return values


def _xid_totals(codes: list[float]) -> dict[str, list]:
    """DCGM_EXP_XID_ERRORS_TOTAL per Xid code from a last-Xid gauge's values: each change
    to a code is one error of it; a code's series is absent until its first error (the
    draws are those of the old gauge, so the other series keep theirs)."""
    out: dict[str, list] = {}
    previous = 0.0
    for step, code in enumerate(codes):
        if code != previous and code:
            key = str(int(code))
            series = out.setdefault(key, [None] * step)
            series.append((series[-1] or 0.0) + 1.0 if series else 1.0)
        for series in out.values():
            if len(series) < step + 1:
                series.append(series[-1])
        previous = code
    return out


def _gpus(kit: Kit, rng: random.Random, steps: int, interval: int) -> None:
    ctx, t = kit.ctx, kit.ctx.config.thresholds
    gpus = [kit.gpu(0), kit.gpu(1), kit.gpus_of(kit.host(1))[0]]
    kit.gpu_info(*gpus)
    tdp, cap = ctx.tdp_w or 1000.0, ctx.scale_up_bytes_per_s or 1e11
    for gpu in gpus:
        util = _gauge(rng, steps, 60, 100)
        kit.gpu_series("gpu_utilisation", gpu, util)
        # SM activity follows utilisation (no draw of its own: the other series keep theirs)
        kit.gpu_series("gpu_sm_active", gpu, [u / 100.0 if isinstance(u, float) else u
                                              for u in util])
        kit.gpu_series("gpu_temperature", gpu, _gauge(rng, steps, 55, 75))
        kit.gpu_series("gpu_power", gpu, _gauge(rng, steps, 0.55 * tdp, 0.9 * tdp))
        for code, values in _xid_totals(_code(rng, steps, 0.05)).items():
            kit.gpu_series("gpu_xid", gpu, values, xid=code)
        kit.gpu_series("gpu_thermal_violation", gpu, _counter(
            rng, steps, 0.1 * interval / t.thermal_violation_unit_s))
        kit.gpu_series("nvlink_tx_bytes", gpu, _gauge(rng, steps, 0.85 * cap, cap))
        kit.gpu_series("nvlink_rx_bytes", gpu, _gauge(rng, steps, 0.85 * cap, cap))
        kit.gpu_series("nvlink_crc_flit_errors", gpu, _counter(rng, steps, 0.3 * interval))
        kit.gpu_series("nvlink_crc_data_errors", gpu, _counter(rng, steps, 0.1 * interval))
        kit.gpu_series("nvlink_replay_errors", gpu, _counter(rng, steps, 3, 0.5))
        kit.gpu_series("nvlink_recovery_errors", gpu, _counter(rng, steps, 1, 0.05, False))
    for host in (kit.host(0), kit.host(1)):
        kit.host_info(host)
        kit.host_series("collective_latency", host, _gauge(rng, steps, 0.8, 1.6, False))
        for index in ("0", "1"):
            extra = {ctx.config.labels.nvswitch: index}
            kit.host_series("nvswitch_temperature", host, _gauge(rng, steps, 72, 86), **extra)
            kit.host_series("nvswitch_temperature_slowdown", host, [85.0], **extra)
            for rail, low in (("vdd", 25), ("dvdd", 8), ("hvdd", 4)):
                kit.host_series(f"nvswitch_power_{rail}", host,
                                _gauge(rng, steps, low, 1.4 * low), **extra)
            kit.host_series("nvswitch_fatal_errors", host, _code(rng, steps, 0.03), **extra)


def _network(kit: Kit, rng: random.Random, steps: int, interval: int) -> None:
    ctx = kit.ctx
    if not ctx.has_scale_out:
        return
    nics = [kit.nic(0), kit.nic(1), kit.nic(len(ctx.topology.nics) // 2)]
    kit.nic_info(*nics)
    drain = ctx.drain_ber
    for nic in nics:
        line = ctx.nic_bytes_per_s * interval
        kit.nic_series("nic_tx_bytes", nic, _counter(rng, steps, line, resets=False))
        kit.nic_series("nic_rx_bytes", nic, _counter(rng, steps, line, resets=False))
        kit.nic_series("nic_discards_tx", nic, _counter(rng, steps, 5, 0.1))
        kit.nic_series("nic_discards_rx", nic, _counter(rng, steps, 5, 0.1))
        kit.nic_series("nic_symbol_errors", nic, _counter(
            rng, steps, 3 * drain * ctx.nic_bits_per_s * interval))
        kit.nic_series("nic_link_downed", nic, _counter(rng, steps, 1, 0.05, False))
        kit.nic_series("link_snr", nic, _gauge(rng, steps, 14, 21))
    labels = ctx.config.labels
    name, tier = ctx.topology.switches[0]
    kit.constant(ctx.config.metric("switch_info"), {labels.switch_guid: "0x1",
                                                    labels.switch: name}, 1.0)
    kit.constant(INFO_METRICS["switch"], {labels.switch: name, "cluster": ctx.topology.cluster,
                                          "tier": tier}, 1.0)
    for guid, port in (("0x1", "1"), ("0x1", "2"), ("0x2", "1")):
        port_labels = {labels.switch_guid: guid, labels.switch_port: port}
        kit.add(ctx.config.metric("switch_port_discards"), port_labels,
                _counter(rng, steps, 4, 0.1))
        kit.add(ctx.config.metric("switch_port_symbol_errors"), port_labels, _counter(
            rng, steps, 3 * drain * ctx.switch_port_bits_per_s * interval))


def _facility(kit: Kit, rng: random.Random, steps: int) -> None:
    ctx, labels = kit.ctx, kit.ctx.config.labels
    for index in (0, 1):
        cdu = {labels.cdu: ctx.config.names.cdu.format(cdu=index, cdu1=index + 1,
                                                       cluster=ctx.topology.cluster)}
        supply = _gauge(rng, steps, 24, 30, False)
        kit.add(ctx.config.metric("coolant_supply_temperature"), cdu, supply)
        kit.add(ctx.config.metric("coolant_return_temperature"), cdu,
                [s + rng.uniform(3, 12) for s in supply])
        kit.add(ctx.config.metric("coolant_flow"), cdu, _gauge(rng, steps, 70, 100))
    for rack, cdu in ctx.topology.racks[:2]:
        rack_labels = {labels.rack: rack}
        kit.info("rack", rack_labels | {"cluster": ctx.topology.cluster, "cdu": cdu})
        kit.add(ctx.config.metric("rack_inlet_temperature"), rack_labels, [25.0])
        kit.add(ctx.config.metric("rack_outlet_temperature"), rack_labels,
                _gauge(rng, steps, 35, 50))


def random_scenario(ctx: PackContext, seed: int, steps: int, long: bool,
                    alertnames: list[str], checks_at: list[int]) -> Scenario:
    """Random series for every rule input; checks of every alert at ``checks_at`` steps
    with no expectation of their own (the evaluator's answers are the expectation)."""
    rng = random.Random(seed)
    interval = 3600 if long else 60
    kit = Kit(ctx, steps)
    _gpus(kit, rng, steps, interval)
    _network(kit, rng, steps, interval)
    _facility(kit, rng, steps)
    checks = [Check(step * interval, name, ()) for step in checks_at for name in alertnames]
    return kit.scenario(f"random-{seed}", checks, interval, long)

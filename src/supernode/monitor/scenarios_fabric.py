"""Fire/silent scenarios of the scale-out fabric rules (drops, saturation, link downs,
BER above the drain threshold and rising, SNR under its baseline)."""

from __future__ import annotations

from collections.abc import Callable

from supernode.monitor.context import INFO_METRICS, PackContext
from supernode.monitor.scenarios import Check, Kit, Scenario, _frozen, known, ramp

HOUR = 3600
KNOWN_GUID, UNKNOWN_GUID = "0xa088c20300000001", "0xa088c203000000ff"


def _switch_port(kit: Kit, key: str, guid: str, port: str, values) -> None:
    labels = kit.ctx.config.labels
    kit.add(kit.ctx.config.metric(key), {labels.switch_guid: guid, labels.switch_port: port},
            values)


def _switch_names(kit: Kit) -> tuple[str, str]:
    """Name the known GUID as the first switch of the topology; returns (name, tier)."""
    ctx, labels = kit.ctx, kit.ctx.config.labels
    name, tier = ctx.topology.switches[0]
    kit.constant(ctx.config.metric("switch_info"), {labels.switch_guid: KNOWN_GUID,
                                                    labels.switch: name, "lid": "17"}, 1.0)
    kit.constant(INFO_METRICS["switch"], {labels.switch: name, "cluster": ctx.topology.cluster,
                                          "tier": tier}, 1.0)
    return name, tier


def _port_alert(kit: Kit, guid: str, port: str, name: str | None = None, tier: str = ""):
    labels = kit.ctx.config.labels
    out = {labels.switch_guid: guid, labels.switch_port: port}
    if name:
        out |= {labels.switch: name, "cluster": kit.ctx.topology.cluster, "tier": tier}
    return _frozen(out)


def switch_drops(ctx: PackContext) -> Scenario:
    """Port 7 of a named switch and port 1 of a switch absent from infiniband_switch_info
    start discarding at minute 5 (both fire, the second without a name); port 8 never."""
    kit = Kit(ctx, 11)
    name, tier = _switch_names(kit)
    _switch_port(kit, "switch_port_discards", KNOWN_GUID, "7", [100.0] * 5 + ramp(103, 3, 6))
    _switch_port(kit, "switch_port_discards", KNOWN_GUID, "8", [100.0])
    _switch_port(kit, "switch_port_discards", UNKNOWN_GUID, "1", [0.0] * 5 + ramp(2, 2, 6))
    return kit.scenario("SwitchPortDrops", [
        Check(3 * 60, "SwitchPortDrops", ()),
        Check(10 * 60, "SwitchPortDrops", (_port_alert(kit, KNOWN_GUID, "7", name, tier),
                                           _port_alert(kit, UNKNOWN_GUID, "1")))])


def switch_ber(ctx: PackContext) -> Scenario:
    """Hourly. Port 7 at 2.5x the drain BER (fires once two samples span the 125-minute
    window); port 8 at half of it (silent)."""
    kit = Kit(ctx, 4)
    name, tier = _switch_names(kit)
    drain = known(ctx.drain_ber, "drain BER") \
        * known(ctx.switch_port_bits_per_s, "switch port rate") * HOUR
    _switch_port(kit, "switch_port_symbol_errors", KNOWN_GUID, "7", ramp(1000, 2.5 * drain, 4))
    _switch_port(kit, "switch_port_symbol_errors", KNOWN_GUID, "8", ramp(1000, 0.5 * drain, 4))
    return kit.scenario("SwitchPortBerAboveDrainThreshold", [
        Check(0, "SwitchPortBerAboveDrainThreshold", ()),
        Check(3 * HOUR, "SwitchPortBerAboveDrainThreshold",
              (_port_alert(kit, KNOWN_GUID, "7", name, tier),))], HOUR, long=True)


def nic_drops(ctx: PackContext) -> Scenario:
    """NIC A starts dropping transmitted packets at minute 5 (fires); its receive side and
    NIC B never drop."""
    kit = Kit(ctx, 11)
    a, b = kit.nic(0), kit.nic(1)
    kit.nic_info(a, b)
    kit.nic_series("nic_discards_tx", a, [0.0] * 5 + ramp(2, 2, 6))
    for nic, key in ((a, "nic_discards_rx"), (b, "nic_discards_tx"), (b, "nic_discards_rx")):
        kit.nic_series(key, nic, [0.0])
    return kit.scenario("NicPortDrops", [
        Check(3 * 60, "NicPortDrops", ()),
        Check(10 * 60, "NicPortDrops", (kit.nic_alert(a, direction="tx"),))])


def nic_saturated(ctx: PackContext) -> Scenario:
    """NIC A transmits at 0.97 of its line rate (fires after 10 min) and receives at 0.3;
    NIC B transmits at 0.90 (silent)."""
    kit = Kit(ctx, 16)
    a, b = kit.nic(0), kit.nic(1)
    kit.nic_info(a, b)
    per_minute = known(ctx.nic_bytes_per_s, "NIC rate") * 60
    for nic, tx in ((a, 0.97), (b, 0.90)):
        kit.nic_series("nic_tx_bytes", nic, ramp(0, tx * per_minute, 16))
        kit.nic_series("nic_rx_bytes", nic, ramp(0, 0.3 * per_minute, 16))
    return kit.scenario("ScaleOutLinkSaturated", [
        Check(5 * 60, "ScaleOutLinkSaturated", ()),
        Check(15 * 60, "ScaleOutLinkSaturated", (kit.nic_alert(a, direction="tx"),))])


def link_down(ctx: PackContext) -> Scenario:
    """NIC A's link goes down once at minute 5 (fires while in the 10-minute window)."""
    kit = Kit(ctx, 21)
    a, b = kit.nic(0), kit.nic(1)
    kit.nic_info(a, b)
    kit.nic_series("nic_link_downed", a, [0.0] * 5 + [1.0])
    kit.nic_series("nic_link_downed", b, [0.0])
    return kit.scenario("LinkDown", [
        Check(8 * 60, "LinkDown", (kit.nic_alert(a),)),
        Check(20 * 60, "LinkDown", ())])


def nic_ber(ctx: PackContext) -> Scenario:
    """Hourly. NIC A at twice the drain BER (fires), NIC B at half of it."""
    kit = Kit(ctx, 4)
    a, b = kit.nic(0), kit.nic(1)
    kit.nic_info(a, b)
    drain = known(ctx.drain_ber, "drain BER") * known(ctx.nic_bits_per_s, "NIC rate") * HOUR
    kit.nic_series("nic_symbol_errors", a, ramp(1000, 2 * drain, 4))
    kit.nic_series("nic_symbol_errors", b, ramp(1000, 0.5 * drain, 4))
    return kit.scenario("LinkBerAboveDrainThreshold", [
        Check(0, "LinkBerAboveDrainThreshold", ()),
        Check(3 * HOUR, "LinkBerAboveDrainThreshold", (kit.nic_alert(a),))], HOUR, long=True)


def symbol_saturated(ctx: PackContext) -> Scenario:
    """NIC A's symbol_error counter climbs 100 a minute from 65,000 and stops at 65,535 at
    minute 6 (fires from then; its rate() reads 0 after). NIC B climbs from 60,000 (silent)."""
    kit = Kit(ctx, 12)
    a, b = kit.nic(0), kit.nic(1)
    kit.nic_info(a, b)
    top = float(ctx.config.link_ber.symbol_counter_max)
    kit.nic_series("nic_symbol_errors", a, [min(top, 65000.0 + 100 * i) for i in range(12)])
    kit.nic_series("nic_symbol_errors", b, ramp(60000.0, 100.0, 12))
    return kit.scenario("LinkSymbolCounterSaturated", [
        Check(3 * 60, "LinkSymbolCounterSaturated", ()),
        Check(10 * 60, "LinkSymbolCounterSaturated", (kit.nic_alert(a),))])


def switch_symbol_saturated(ctx: PackContext) -> Scenario:
    """Port 7's symbol_error counter climbs 100 a minute from 65,000 and stops at 65,535 at
    minute 6 (fires from then); port 8 climbs from 60,000 (silent)."""
    kit = Kit(ctx, 12)
    name, tier = _switch_names(kit)
    top = float(ctx.config.link_ber.symbol_counter_max)
    _switch_port(kit, "switch_port_symbol_errors", KNOWN_GUID, "7",
                 [min(top, 65000.0 + 100 * i) for i in range(12)])
    _switch_port(kit, "switch_port_symbol_errors", KNOWN_GUID, "8", ramp(60000.0, 100.0, 12))
    return kit.scenario("SwitchPortSymbolCounterSaturated", [
        Check(3 * 60, "SwitchPortSymbolCounterSaturated", ()),
        Check(10 * 60, "SwitchPortSymbolCounterSaturated",
              (_port_alert(kit, KNOWN_GUID, "7", name, tier),))])


def ber_rising(ctx: PackContext) -> Scenario:
    """Hourly, 8 days. A: BER 0.25x the floor for 7 days, then 12.5x (fires); B: flat;
    C: 0.75x the floor on the last day (3x its history, but under the floor: silent)."""
    kit = Kit(ctx, 193)
    a, b, c = kit.nic(0), kit.nic(1), kit.nic(2)
    kit.nic_info(a, b, c)
    base = 0.25 * known(ctx.watch_ber, "watch BER") * known(ctx.nic_bits_per_s, "NIC rate") \
        * HOUR
    kit.nic_series("nic_symbol_errors", a, ramp(0, base, 169) + ramp(168 * base + 50 * base,
                                                                     50 * base, 24))
    kit.nic_series("nic_symbol_errors", b, ramp(0, base, 193))
    kit.nic_series("nic_symbol_errors", c, ramp(0, base, 169) + ramp(168 * base + 3 * base,
                                                                     3 * base, 24))
    return kit.scenario("LinkBerRising", [
        Check(170 * HOUR, "LinkBerRising", ()),
        Check(192 * HOUR, "LinkBerRising", (kit.nic_alert(a),))], HOUR, long=True)


def snr(ctx: PackContext) -> Scenario:
    """Hourly. SNR 20 dB for 30 h; A then 16 dB (fires), B 18 dB (silent); drop 3 dB."""
    kit = Kit(ctx, 33)
    a, b = kit.nic(0), kit.nic(1)
    kit.nic_info(a, b)
    kit.nic_series("link_snr", a, [20.0] * 30 + [16.0])
    kit.nic_series("link_snr", b, [20.0] * 30 + [18.0])
    return kit.scenario("LinkSnrBelowBaseline", [
        Check(30 * HOUR, "LinkSnrBelowBaseline", ()),
        Check(32 * HOUR, "LinkSnrBelowBaseline", (kit.nic_alert(a),))], HOUR, long=True)


SCENARIOS: dict[str, Callable[[PackContext], Scenario]] = {
    "SwitchPortDrops": switch_drops,
    "SwitchPortBerAboveDrainThreshold": switch_ber,
    "NicPortDrops": nic_drops,
    "ScaleOutLinkSaturated": nic_saturated,
    "LinkDown": link_down,
    "LinkBerAboveDrainThreshold": nic_ber,
    "LinkBerRising": ber_rising,
    "LinkSymbolCounterSaturated": symbol_saturated,
    "SwitchPortSymbolCounterSaturated": switch_symbol_saturated,
    "LinkSnrBelowBaseline": snr,
}

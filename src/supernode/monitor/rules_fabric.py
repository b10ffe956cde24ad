"""Scale-out fabric rules: drops, saturation, link downs, BER and SNR trends per link
(seed 001 §4.4, seed 003 §4.2).

Host-side counters are node-exporter's infiniband collector (joined to the leaf they plug
into); switch-side counters are infiniband_exporter's (named by ``infiniband_switch_info``).
BER is symbol errors per second over the port's line rate from the cluster description: a
post-FEC BER (NDR/HDR symbol errors are what is left after error correction). Its drain and
watch levels are the link model's effective ones for the cluster's link generation
(:attr:`PackContext.drain_ber`, :attr:`PackContext.watch_ber`, from
:func:`supernode.links.ber_thresholds`), unless the configuration's ``link_ber`` gives them.
"""

from __future__ import annotations

from supernode.monitor.context import PackContext
from supernode.monitor.promql import RangeCall, label_replace
from supernode.monitor.rules import AlertRule, RecordingRule
from supernode.monitor.rules_gpu import HOUR_S, baseline_terms
from supernode.monitor.templates import label, value

NIC_DISCARDS = "supernode:nic_discards:increase5m"
NIC_DOWNED = "supernode:nic_link_downed:increase10m"
NIC_UTIL = "supernode:nic_utilisation:ratio2m"
NIC_BER = "supernode:nic_ber:window"
NIC_BER_RECENT = "supernode:nic_ber:recent"
NIC_BER_HISTORY = "supernode:nic_ber:history"
SW_DISCARDS = "supernode:switch_port_discards:increase5m"
SW_BER = "supernode:switch_port_ber:window"
SNR = "supernode:link_snr_db:avg10m"


def _both(ctx: PackContext, func: str, tx: str, rx: str, range_s: int, scale: float = 1.0):
    """``func`` of the tx and rx series, labelled ``direction``."""
    def one(key: str, direction: str):
        series = ctx.over(func, key, range_s)
        return label_replace(series / scale if scale != 1.0 else series, "direction",
                             direction)
    return one(tx, "tx").or_(one(rx, "rx"))


def signals(ctx: PackContext) -> list[RecordingRule]:
    """NIC and switch-port signals with topology labels (rates need the cluster's line
    rates, so they are left out without a cluster)."""
    if not ctx.has_scale_out:
        return []
    ber = ctx.config.link_ber
    out = [
        RecordingRule(NIC_DISCARDS, ctx.on_nic(_both(ctx, "increase", "nic_discards_tx",
                                                     "nic_discards_rx", 300))),
        RecordingRule(NIC_DOWNED, ctx.on_nic(ctx.over("increase", "nic_link_downed", 600))),
        RecordingRule(SW_DISCARDS, ctx.on_switch(ctx.over("increase", "switch_port_discards",
                                                          300))),
        RecordingRule(SNR, ctx.on_nic(ctx.over("avg_over_time", "link_snr", 600))),
    ]
    if ctx.nic_bytes_per_s and ctx.nic_bits_per_s:
        out += [RecordingRule(NIC_UTIL, ctx.on_nic(_both(ctx, "rate", "nic_tx_bytes",
                                                         "nic_rx_bytes", 120,
                                                         ctx.nic_bytes_per_s))),
                RecordingRule(NIC_BER, ctx.on_nic(ctx.over("rate", "nic_symbol_errors",
                                                           ber.window_s) / ctx.nic_bits_per_s))]
    if ctx.switch_port_bits_per_s:
        out.append(RecordingRule(SW_BER, ctx.on_switch(ctx.over(
            "rate", "switch_port_symbol_errors", ber.window_s) / ctx.switch_port_bits_per_s)))
    return out


def baselines(ctx: PackContext) -> list[RecordingRule]:
    """BER over the last day and the week before, and the hourly SNR (1-hour group)."""
    if not ctx.has_scale_out:
        return []
    ber, bits = ctx.config.link_ber, ctx.nic_bits_per_s
    out = [RecordingRule(f"{SNR}_avg1h", RangeCall("avg_over_time", ctx.rec(SNR), HOUR_S))]
    if bits:
        out[:0] = [
            RecordingRule(NIC_BER_RECENT, ctx.on_nic(ctx.over("rate", "nic_symbol_errors",
                                                              ber.trend_window_s) / bits)),
            RecordingRule(NIC_BER_HISTORY, ctx.on_nic(ctx.over(
                "rate", "nic_symbol_errors", ber.history_window_s, ber.trend_window_s) / bits))]
    return out


_DRAIN = ("Drain the link: swap the cable or transceiver, reseat connectors, check "
          "shielding; re-measure BER and SNR before returning it.")


def _nic(ctx: PackContext) -> str:
    return f"{label(ctx.host)} {label(ctx.config.labels.nic_device)} leaf={label('leaf')}"


def _port(ctx: PackContext) -> str:
    labels = ctx.config.labels
    return (f"switch {label(labels.switch)} ({label(labels.switch_guid)}) port "
            f"{label(labels.switch_port)}")


def alerts(ctx: PackContext) -> list[AlertRule]:
    """The scale-out fabric alerting rules (none without a scale-out fabric; the rate and
    BER rules only with the cluster's line rates)."""
    if not ctx.has_scale_out:
        return []
    return _counter_alerts(ctx) + _rate_alerts(ctx)


def _counter_alerts(ctx: PackContext) -> list[AlertRule]:
    t, ber = ctx.config.thresholds, ctx.config.link_ber
    snr_mean, _, snr_enough = baseline_terms(ctx.rec(f"{SNR}_avg1h"), t.baseline_window_s)
    snr_low = ctx.rec(SNR).lt(snr_mean - t.link_snr_drop_db).and_(snr_enough)
    return [
        AlertRule("SwitchPortDrops", ctx.rec(SW_DISCARDS).gt(0), "critical", "seed 001 §4.4",
                  f"{_port(ctx)} discarded {value('%.0f')} packets in 5 min",
                  "Switch drop counters should stay at zero; in a supernode cluster a drop "
                  "costs far more than it seems.", "Act at once: find the congested or "
                  "faulty port (ibqueryerrors), check the cable and the far end, and "
                  "the congestion control settings.", "switch_port", 0, "network",
                  ("switch_port_discards", "switch_info")),
        AlertRule("NicPortDrops", ctx.rec(NIC_DISCARDS).gt(0), "critical", "seed 001 §4.4",
                  f"{_nic(ctx)} discarded {value('%.0f')} {label('direction')} packets in "
                  "5 min", "NIC drop counters should stay at zero.", "Act at once: check the "
                  "link to the leaf, PFC/ECN settings and the host's PCIe path.", "nic", 0,
                  "network", ("nic_discards_tx", "nic_discards_rx")),
        AlertRule("LinkDown", ctx.rec(NIC_DOWNED).gt(0), "critical", "seed 003 §4.2",
                  f"{_nic(ctx)} went down {value('%.0f')} time(s) in 10 min", "The link "
                  "failed to recover and went down: broken, or intermittent (contact or "
                  "temperature).", "Check the transceiver and cable; if it flaps, replace "
                  "it; move the job's traffic off the rail.", "nic", 0, "network",
                  ("nic_link_downed",)),
        AlertRule("LinkSymbolCounterSaturated",
                  ctx.on_nic(ctx.sel("nic_symbol_errors").ge(ber.symbol_counter_max)),
                  "warning", "seed 003 §4.2", f"{_nic(ctx)} symbol_error counter saturated "
                  f"at {ber.symbol_counter_max:,}: its BER cannot be read",
                  "The IB PortCounters SymbolErrorCounter is 16 bits and stops at its "
                  "maximum (it does not wrap): rate() then reads 0 and the BER rules go "
                  "blind. At the drain BER of 1e-12 a 400G link fills it in about 45 h.",
                  "Read the BER from the 64-bit extended counters (mlxlink / UFM), clear "
                  "the port counters (perfquery -R) and re-measure over the BER window.",
                  "nic", 0, "network", ("nic_symbol_errors",)),
        AlertRule("SwitchPortSymbolCounterSaturated",
                  ctx.on_switch(ctx.sel("switch_port_symbol_errors")
                                .ge(ber.symbol_counter_max)),
                  "warning", "seed 003 §4.2", f"{_port(ctx)} symbol_error counter saturated "
                  f"at {ber.symbol_counter_max:,}: its BER cannot be read",
                  "The switch port's PortCounters SymbolErrorCounter (what the InfiniBand "
                  "switch exporter reads with perfquery) is 16 bits and stops at its maximum: "
                  "rate() then reads 0 and SwitchPortBerAboveDrainThreshold goes blind on "
                  "the port, as on a NIC.",
                  "Read the port's BER from the extended 64-bit counters (UFM, mlxlink on "
                  "the switch), clear its counters (perfquery -R -G <guid> <port>) and "
                  "re-measure over the BER window.", "switch_port", 0, "network",
                  ("switch_port_symbol_errors", "switch_info")),
        AlertRule("LinkSnrBelowBaseline", snr_low, "warning", "seed 003 §4.2",
                  f"{_nic(ctx)} SNR {value('%.1f')} dB, {t.link_snr_drop_db:g} dB under its "
                  "baseline", "Link SNR is falling under its 7-day baseline.",
                  "Inspect and clean the optics; plan a transceiver swap.", "nic", 900,
                  "network", ("link_snr",)),
    ]


def _rate_alerts(ctx: PackContext) -> list[AlertRule]:
    t, ber = ctx.config.thresholds, ctx.config.link_ber
    out = []
    # A line rate means a fabric (a cluster's scale-out needs NICs), whose link generation
    # gives both BER levels where the configuration does not (PackContext.drain_ber).
    drain, watch = ctx.drain_ber, ctx.watch_ber
    if ctx.nic_bits_per_s:
        assert drain is not None and watch is not None  # see above
        line_gbit = ctx.nic_bits_per_s / 1e9
        rising = ctx.rec(NIC_BER_RECENT).gt(ctx.rec(NIC_BER_HISTORY) * ber.trend_factor) \
            .and_(ctx.rec(NIC_BER_RECENT).gt(watch))
        out += [
            AlertRule("ScaleOutLinkSaturated", ctx.rec(NIC_UTIL).gt(t.link_saturation_ratio),
                      "warning", "seed 001 §4.4", f"{_nic(ctx)} {label('direction')} at "
                      f"{value('%.2f')} of {line_gbit:g} Gb/s", "Scale-out link utilisation "
                      f"above {t.link_saturation_ratio:g} for {t.link_saturation_for_s} s: "
                      "saturated, or traffic skewed onto one rail.", "Check rail alignment "
                      "of the job, ECMP/adaptive routing, and stagger large collectives.",
                      "nic", t.link_saturation_for_s, "network",
                      ("nic_tx_bytes", "nic_rx_bytes")),
            AlertRule("LinkBerAboveDrainThreshold", ctx.rec(NIC_BER).gt(drain),
                      "critical", "seed 003 §4.2", f"{_nic(ctx)}: BER {value('%.2g')} above "
                      f"the drain threshold {drain:g}", f"Symbol BER over "
                      f"{ber.window_s} s exceeds {drain:g}, the link-layer drain "
                      "threshold.", _DRAIN, "nic", 0, "network", ("nic_symbol_errors",)),
        ]
    if ctx.switch_port_bits_per_s:
        assert drain is not None  # see above
        out.append(AlertRule(
            "SwitchPortBerAboveDrainThreshold", ctx.rec(SW_BER).gt(drain), "critical",
            "seed 003 §4.2", f"{_port(ctx)}: BER {value('%.2g')} above the drain threshold "
            f"{drain:g}", f"Symbol BER over {ber.window_s} s exceeds "
            f"{drain:g}, the link-layer drain threshold.", _DRAIN, "switch_port", 0,
            "network", ("switch_port_symbol_errors", "switch_info")))
    if ctx.nic_bits_per_s:
        out.append(AlertRule(
            "LinkBerRising", rising, "warning", "seed 003 §4.2",
            f"{_nic(ctx)}: BER {value('%.2g')} over the last day, {ber.trend_factor:g}x the "
            "week before", "The weekly BER trend is rising: a cable or connector is "
            "degrading.", "Schedule the link for the next maintenance window; run the "
            "full-link diagnostic and compare with last week.", "nic", 0, "network",
            ("nic_symbol_errors",)))
    return out

"""Rules on failures and recovery (seed 001 §4.1): hot-standby switch bandwidth inside the
supernode, and recovery from one failure within 10 minutes.

The hot-standby share has one definition (:func:`supernode.reliability.standby.hot_standby`:
spare switch ports over ports in use, or the cluster's stated ``reliability``
``.hot_standby_share``), the one the reliability model uses to absorb lost planes. The
recovery-time rule reads the reliability result of the reviewed plan (``Facts.reliability``);
its fix is predicted with the recovery model's own function."""

from __future__ import annotations

import math
from typing import Any

from supernode.reliability.recovery import RecoveryTimes, recovery_objective
from supernode.reliability.standby import (
    NONE,
    STATED,
    HotStandby,
    hot_standby,
    measured_hot_standby,
    on_board,
)
from supernode.rules._fmt import pct
from supernode.rules.fabric_rules import fixed_topology
from supernode.rules.facts import Facts
from supernode.rules.registry import Outcome, Threshold, check, number, rule
from supernode.units import GBYTE_PER_S

#: Switch chips added per domain, at most, when searching the smallest standby fix.
MAX_EXTRA_CHIPS = 64


def _chips_fix(facts: Facts, hs: HotStandby, threshold: float) -> tuple[int, float] | None:
    """Fewest switch chips (planes) to add per domain for a measured share >= ``threshold``,
    and the share the re-run topology measures with them (None when no such fix exists)."""
    up = facts.cluster.scale_up
    radix = facts.topology["radix"].get(hs.tier or "")
    if not up.switch_chips or not radix or hs.tier is None or on_board(facts.topology, hs.tier):
        return None  # a baseboard's switch chips are fixed by the board
    # a plane is one switch chip every card links to: more planes need more card ports
    per_plane = max(1, up.links_per_accelerator // up.switch_chips)
    most = facts.cluster.accelerator.scale_up_ports // per_plane
    used_per_domain = hs.ports_in_use / max(1, facts.cluster.supernodes)
    # closed form for one tier: chips * radix >= used * (1 + threshold)
    start = max(up.switch_chips + 1, math.ceil(used_per_domain * (1 + threshold) / radix))
    for chips in range(start, min(start + 4, up.switch_chips + MAX_EXTRA_CHIPS + 1, most + 1)):
        fixed = fixed_topology(facts, ("scale_up", "switch_chips"), chips)
        got = measured_hot_standby(fixed) if fixed is not None else None
        if got is not None and got[1] >= threshold - 1e-12:
            return chips - up.switch_chips, got[1]
    return None


def _goodput_with(facts: Facts, threshold: float) -> str | None:
    """The reliability what-if at the smallest hot-standby share meeting ``threshold``."""
    rows = [w for w in (facts.reliability or {}).get("what_if", [])
            if w["knob"] == "hot-standby share" and w["value"] >= threshold - 1e-12]
    if not rows:
        return None
    w = min(rows, key=lambda r: r["value"])
    return (f"with {pct(w['value'])} standby the Monte Carlo goodput is "
            f"{w['monte_carlo_goodput']:.4f} ({w['delta_vs_base']:+.4f} vs now, paired runs)")


@rule("hot_standby_bandwidth", "Hot-standby switch bandwidth >= 10 % inside the supernode",
      "seed 001 §4.1", "share", ">=", "reliability", """
      One NVSwitch or link failure degrades the whole supernode's bus. The seed requires
      at least 10 % spare switch bandwidth inside the switch cluster so that losing a
      link does not push bandwidth below the level at which training jobs stall.
      Measured as free ports over ports in use on the worst scale-up switch tier (spare
      switch planes count in full; free ports of baseboard switch chips lead off the board
      and count as none), unless the cluster states reliability.hot_standby_share; a live
      NVLink fault stops the job either way, and the job restarted after a lost plane no
      larger than this share runs at full speed.""")
def hot_standby_bandwidth(facts: Facts, threshold: Threshold) -> Outcome:
    """The hot-standby share (stated, or measured from the topology's spare ports)."""
    hs = hot_standby(facts.cluster, facts.topology)
    if hs.source == NONE:
        return Outcome("not_applicable", None, "no switched scale-up domain and no "
                                               "reliability.hot_standby_share stated")
    limit = number(threshold)
    if hs.source == STATED:
        topo = "-" if hs.measured_share is None else pct(hs.measured_share)
        detail = (f"{pct(hs.share)} stated in reliability.hot_standby_share (spare switch "
                  f"ports in the topology: {topo})")
    else:
        detail = f"{hs.tier}: {pct(hs.share)} spare switch ports over ports in use"
    fix = predicted = value = patch = None
    if hs.share < limit:
        chips = _chips_fix(facts, hs, limit) if hs.source != STATED else None
        ports = facts.cluster.accelerator.scale_up_ports
        fix = (f"add {chips[0]} switch chip(s) (planes) per domain "
               f"(scale_up.switch_chips {facts.cluster.scale_up.switch_chips + chips[0]}), or "
               if chips else f"no more switch planes fit ({facts.cluster.accelerator.name} "
                             f"has {ports} scale-up ports, all in use): ")
        fix += f"hold {pct(limit)} of the scale-up bandwidth idle " \
               "(reliability.hot_standby_share)"
        patch = ((("reliability", "hot_standby_share"), limit),)
        parts = [f"{pct(chips[1])} spare switch ports with them"] if chips else []
        parts += [p for p in (_goodput_with(facts, limit),) if p]
        predicted = "; ".join(parts) or None
        value = chips[1] if chips else limit
    return check(hs.share >= limit, hs.share, detail, fix, predicted, value,
                 fix_patch=patch if hs.share < limit else None)


def _rto_fix(rel: dict[str, Any], limit: float) -> tuple[str, str | None, float | None]:
    """The fix of a missed RTO: faster checkpoint reads when the load can close the gap
    (predicted by the recovery model), else the fixed steps to automate."""
    rec, ckpt = rel["recovery"], rel["checkpoint"]
    times = RecoveryTimes(**rec["times"])
    load = rec["checkpoint_load_s"]
    rest = rec["rto_s"] - load
    if rest < limit and ckpt["size_bytes"] > 0:
        need_bps = ckpt["size_bytes"] / (limit - rest)
        after = recovery_objective(times, ckpt["size_bytes"] / need_bps)["rto_s"]
        return (f"read checkpoints at >= {need_bps / GBYTE_PER_S:,.0f} GB/s "
                f"(reliability.checkpoint_read_gbyte_per_s; now "
                f"{ckpt['read_bytes_per_s'] / GBYTE_PER_S:,.0f} GB/s), or keep the latest "
                "checkpoint in the spare hosts' memory",
                f"RTO {after / 60:.1f} min", after)
    return (f"automate detection, diagnosis, rescheduling and warm-up: they alone take "
            f"{rest / 60:.1f} min of the {limit / 60:.0f}-minute objective", None, None)


@rule("recovery_time_objective", "Recovery from one failure within 10 minutes (RTO)",
      "seed 001 §4.1", "s", "<=", "reliability", """
      A supernode job stops on every hard failure; what it loses is the time to detect,
      diagnose, reschedule onto a healthy supernode, load the latest snapshot from the
      parallel file system and warm up. The seed's team aligned snapshot frequency and the
      save path with the framework so that one recovery takes under 10 minutes; a design
      whose recovery is counted in hours loses days over a long run. Measured as the
      reliability model's worst restart path with a spare host ready.""")
def recovery_time_objective(facts: Facts, threshold: Threshold) -> Outcome:
    """The reliability model's recovery time of the reviewed plan against the objective."""
    rel = facts.reliability
    if rel is None:
        return Outcome("not_evaluated", None, "no reliability assessment (no plan fits)")
    rec = rel["recovery"]
    t, limit = rec["times"], number(threshold)
    detail = (f"RTO {rec['rto_s'] / 60:.1f} min ({rec['policy']}): detection "
              f"{t['detection_s']:.0f} s + diagnosis {t['diagnosis_s']:.0f} s + reschedule "
              f"{t['reschedule_s']:.0f} s + checkpoint load {rec['checkpoint_load_s']:.3g} s "
              f"+ warm-up {t['warmup_s']:.0f} s, with a spare host ready")
    fix, predicted, value = _rto_fix(rel, limit) if rec["rto_s"] > limit else (None, None,
                                                                                None)
    return check(rec["rto_s"] <= limit, rec["rto_s"], detail, fix, predicted, value)

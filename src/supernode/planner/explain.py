"""Plain-language reasons: why the top plan wins, and why tempting alternatives lose.

Each *alternative* is a family of layouts an architect might reach for (TP beyond the
NVLink domain, no pipeline, pure data parallelism with ZeRO-3, EP inside the domain,
Megatron's default rank order...). Its best member is compared with the winner term by
term; a family with no member that fits is reported with the least memory it needs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from supernode.planner.detail import PlanDetail
from supernode.planner.mapping import Layout, group_factors, slowest_tier
from supernode.planner.search import LayoutRecord, SearchOutcome

GB = 1e9
#: How each placed group is named in sentences (the DP group reduces over dp x cp ranks).
GROUP_NAMES = {"tp": "TP", "cp": "CP", "pp": "PP", "ep": "EP", "etp": "expert TP",
               "dp": "DP gradient sync (dp x cp)",
               "dp_expert": "expert DP sync (tp x cp x dp / (ep x etp))"}
Predicate = Callable[[Layout], bool]


def label(d: PlanDetail) -> str:
    """Short description of a plan: sizes, rank order and knobs."""
    x, k = d.layout, d.knobs
    zero = "dist-opt (ZeRO-1)" if k["distributed_optimizer"] else f"ZeRO-{k['zero_stage']}"
    sizes = f"TP={x.tp} PP={x.pp} DP={x.dp} CP={x.cp}" + (f" EP={x.ep}" if x.ep > 1 else "")
    if x.ep > 1 and x.expert_tp != x.tp:
        sizes += f" ETP={x.expert_tp}"
    if k.get("moe_a2a_overlap"):
        sizes += " A2A-overlap"
    off = [n for n in ("tp", "dp", "pp") if not k[f"overlap_{n}_comm"]]
    return (f"{sizes} [{x.order_name}], micro-batch {k['micro_batch']}, vpp {k['vpp']}, "
            f"recompute {k['recompute']}, SP {'on' if k['sequence_parallel'] else 'off'}, "
            f"{zero}" + (f", no {'/'.join(off)} overlap" if off else ""))


def compare(best: PlanDetail, other: PlanDetail, terms: int = 2) -> str:
    """``+4.1% step time: pipeline_bubble +0.21 s, dp_comm +0.05 s`` (other vs best)."""
    slower = other.step_time_s / best.step_time_s - 1.0
    diffs = sorted(((other.breakdown_s[k] - best.breakdown_s[k], k) for k in best.breakdown_s),
                   reverse=True)
    parts = [f"{k} {v:+.3g} s" for v, k in diffs[:terms] if v > 1e-4 * best.step_time_s]
    gains = [f"{k} {v:+.3g} s" for v, k in diffs[::-1][:1] if v < -1e-4 * best.step_time_s]
    text = f"{slower:+.1%} step time"
    if parts:
        text += ": " + ", ".join(parts)
    if gains:
        text += f" (it saves {gains[0]})"
    return text


def runner_up_lines(details: list[PlanDetail]) -> list[str]:
    """One line per runner-up: how much slower and which terms make the difference."""
    best = details[0]
    return [f"#{i} {label(d)}: {compare(best, d)}" for i, d in enumerate(details[1:], 2)]


def _tier_bw(outcome: SearchOutcome, index: int) -> tuple[str, float]:
    tier = outcome.target.system.fabric.tiers[index]
    return tier.name, tier.bandwidth_bytes_per_s / tier.oversubscription


def _ep_inside(outcome: SearchOutcome) -> Predicate:
    fabric = outcome.target.system.fabric

    def inside(x: Layout) -> bool:
        """True when the layout's EP group stays inside one scale-up domain."""
        f = group_factors(x)
        return x.ep > 1 and f is not None and slowest_tier(fabric, f["ep"]) == 0
    return inside


def families(outcome: SearchOutcome, best: Layout) -> list[tuple[str, Predicate]]:
    """The alternative families worth reporting against the winner ``best``."""
    domain = outcome.target.scale_up_size
    out: list[tuple[str, Predicate]] = [
        (f"TP beyond the {domain}-GPU scale-up domain", lambda x: x.tp > domain),
    ]
    if best.pp > 1:
        out.append(("dropping pipeline parallelism (PP=1)", lambda x: x.pp == 1))
    else:
        out.append(("pipeline parallelism (PP>1)", lambda x: x.pp > 1))
    if best.tp > 1:
        out.append((f"smaller TP (< {best.tp})", lambda x: x.tp < best.tp))
    out.append((f"larger TP inside the domain (> {best.tp})",
                lambda x: best.tp < x.tp <= domain))
    if best.cp > 1:
        out.append(("dropping context parallelism (CP=1)", lambda x: x.cp == 1))
    else:
        out.append(("context parallelism (CP>1)", lambda x: x.cp > 1))
    out.append(("pure data parallelism (TP=PP=CP=1, ZeRO allowed)",
                lambda x: x.tp == x.pp == x.cp == 1))
    if outcome.target.workload.moe is not None:
        inside = _ep_inside(outcome)
        out.append(("expert parallelism kept inside the scale-up domain", inside))
        out.append(("expert parallelism across domains",
                    lambda x: x.ep > 1 and not inside(x)))
    if not best.megatron_equivalent:
        out.append(("Megatron's default rank order (tp-cp-dp-pp), same sizes",
                    lambda x: x.megatron_equivalent and (x.tp, x.pp, x.dp, x.cp, x.ep)
                    == (best.tp, best.pp, best.dp, best.cp, best.ep)))
    return [(name, pred) for name, pred in out if not pred(best)]


def alternatives(outcome: SearchOutcome, best: PlanDetail,
                 detail_of: Callable[[LayoutRecord], PlanDetail]) -> list[dict[str, Any]]:
    """Each family's best member against the winner, with the reason it loses."""
    out: list[dict[str, Any]] = []
    for name, predicate in families(outcome, best.layout):
        members = [r for r in outcome.records if predicate(r.layout)]
        if not members:
            if name.startswith("TP beyond"):
                w = outcome.target.workload
                out.append({"alternative": name, "status": "not legal",
                            "reason": f"no larger TP is legal for {w.name}: TP must divide "
                                      f"the {w.n_heads} heads, {w.n_kv_heads} KV heads and "
                                      f"the MLP widths, and the GPUs"})
            continue
        # members TP may not use come last: report them only when nothing else fits
        fitting = sorted((r for r in members if r.fits), key=lambda r: (
            r.tp_crosses_domain and not outcome.allow_cross_domain_tp, r.objective))
        if fitting:
            out.append(_fitting_alternative(outcome, name, fitting[0], best, detail_of))
        else:
            least = min(members, key=lambda r: r.least_memory_bytes)
            need = least.least_memory_bytes
            cap = outcome.target.system.usable_memory_bytes
            out.append({"alternative": name, "status": "does not fit",
                        "least_memory_per_gpu_bytes": need,
                        "reason": f"no member fits: the least memory-hungry one needs "
                                  f"{need / GB:.0f} GB per GPU, {cap / GB:.0f} GB available"})
    return out


def _fitting_alternative(outcome: SearchOutcome, name: str, record: LayoutRecord,
                         best: PlanDetail, detail_of: Callable[[LayoutRecord], PlanDetail]
                         ) -> dict[str, Any]:
    d = detail_of(record)
    reason = compare(best, d)
    status = "slower" if d.step_time_s > best.step_time_s else "not better"
    if record.tp_crosses_domain:
        factors = group_factors(record.layout)
        assert factors is not None  # enumerate_layouts keeps the layouts that carve only
        tier, bw = _tier_bw(outcome, slowest_tier(outcome.target.system.fabric, factors["tp"]))
        _, fast = _tier_bw(outcome, 0)
        reason = (f"TP={record.layout.tp} crosses the scale-up domain: TP traffic would run "
                  f"on {tier} at {bw / GB:.0f} GB/s per GPU instead of {fast / GB:.0f} GB/s "
                  f"(per direction); " + reason)
        if not outcome.allow_cross_domain_tp:
            status = "excluded (TP must stay inside the scale-up domain)"
    return {"alternative": name, "status": status, "plan": label(d),
            "step_time_s": d.step_time_s,
            "slower_by": d.step_time_s / best.step_time_s - 1.0, "reason": reason}


def volume_line(best: PlanDetail) -> str:
    """Seed 000 §2.3: groups ranked by bytes moved, and whether the heaviest rides the
    fastest tier."""
    ranked = sorted(best.placement.items(), key=lambda kv: -kv[1]["bytes_per_step"])
    parts = [f"{dim.upper()} {p['bytes_per_step'] / GB:,.1f} GB on {p['tier']}"
             for dim, p in ranked]
    fastest = max(p["bandwidth_bytes_per_s"] for _, p in ranked)
    heaviest = ranked[0][1]
    verdict = ("the heaviest rides the fastest links" if heaviest["bandwidth_bytes_per_s"]
               >= fastest else "the heaviest does NOT ride the fastest links")
    return f"Traffic per GPU and step, heaviest first: {', '.join(parts)}: {verdict}."


def headline(best: PlanDetail) -> list[str]:
    """Why the winner is laid out as it is: where each group runs, and its comm share."""
    lines = [f"Best plan: {label(best)}: {best.step_time_s:.3g} s/step, "
             f"{best.tokens_per_s:,.0f} tokens/s, MFU {best.mfu:.1%}, "
             f"{best.memory_per_gpu_bytes['total'] / GB:.1f} GB per GPU."]
    where = [f"{GROUP_NAMES.get(dim, dim.upper())} ({p['group_size']} GPUs) on {p['tier']} "
             f"at {p['bandwidth_bytes_per_s'] / GB:.0f} GB/s per GPU"
             for dim, p in best.placement.items()]
    if where:
        lines.append("Placement: " + "; ".join(where) + ".")
        lines.append(volume_line(best))
    cc = best.comm_compute
    side = "above" if cc["over_threshold"] else "under"
    lines.append(f"Communication is {cc['share']:.0%} of compute + communication per card "
                 f"({cc['exposed_share']:.0%} of the step left exposed), {side} the seeds' "
                 f"{cc['threshold']:.0%} line.")
    return lines

"""Rules on the plan under review: TP inside a supernode, experts inside, exposed
communication, memory, simulated link utilisation, and workload fit (seed 000 §2.3,
§5.2; seed 001 §1.1, §1.3, §2.4; seed 003 §3.2). The plan under review is the one the
design was given, else the planner's best (:mod:`supernode.design.plans`)."""

from __future__ import annotations

from typing import Any

from supernode.rules._fmt import pct
from supernode.rules.facts import Facts
from supernode.rules.registry import Outcome, Threshold, check, number, rule


def _best(facts: Facts) -> dict[str, Any] | None:
    found = facts.plans or {}
    plans = found.get("plans") or []
    return plans[0] if plans and found.get("feasible") else None


def _faster(facts: Facts) -> str | None:
    """The planner's best plan as a fix, with its step time against the reviewed plan."""
    best, r = _best(facts), facts.reviewed_plan
    if best is None or r is None:
        return None
    return (f"the planner's best plan TP={best['tp']} PP={best['pp']} DP={best['dp']} "
            f"CP={best['cp']} EP={best['ep']}: {best['step_time_s']:.3g} s/step vs "
            f"{r['step_time_s']:.3g} s ({r['step_time_s'] / best['step_time_s']:.2f}x faster)")


@rule("tp_inside_supernode", "Tensor parallelism stays inside one supernode",
      "seed 000 §2.3, seed 001 §2.4", "GPUs", "<=", "plan", """
      Tensor parallelism is the most frequent and heaviest traffic of a step. Its group
      must sit inside one scale-up domain (TP <= supernode size): across the scale-out
      network its bandwidth drops by an order of magnitude and throughput falls to 70 %
      or less (seed 000 §4.1).""")
def tp_inside(facts: Facts, threshold: Threshold) -> Outcome:
    """The reviewed plan's TP size against the scale-up domain (crossing or not)."""
    r = facts.reviewed_plan
    if r is None:
        return Outcome("not_evaluated", None, "no plan: nothing fits")
    size, best = facts.cluster.scale_up.size, _best(facts)
    return check(not r["tp_crosses_domain"], float(r["tp"]),
                 f"TP={r['tp']} on {size}-GPU supernodes: " + (
                     f"TP group on {r['placement'].get('tp')}" if r["tp"] > 1 and
                     r["placement"].get("tp") else "no TP group (TP 1)"),
                 f"keep TP <= {size} (one supernode); run {_faster(facts) or 'a smaller TP'}",
                 _faster(facts), best["step_time_s"] if best else None, float(size))


@rule("supernode_multiple_of_tp", "The supernode is a whole multiple of TP",
      "seed 000 §2.3", "remainder", "==", "plan", """
      Plan TP first, then the supernode size: a supernode holding a whole number of TP
      groups never splits a group across its boundary, and leaves no cards idle.""")
def multiple_of_tp(facts: Facts, threshold: Threshold) -> Outcome:
    """Scale-up size modulo the reviewed plan's TP."""
    r = facts.reviewed_plan
    if r is None:
        return Outcome("not_evaluated", None, "no plan: nothing fits")
    size = facts.cluster.scale_up.size
    rest = size % r["tp"]
    return check(rest == 0, float(rest), f"{size} GPUs per supernode, TP={r['tp']}: "
                 f"{size / r['tp']:.2f} groups per supernode",
                 f"choose TP among the divisors of {size} (or a supernode of a multiple of "
                 f"{r['tp']} GPUs)", _faster(facts), None, 0.0)


@rule("experts_inside_supernode", "Expert all-to-all stays inside a supernode where memory "
      "allows", "seed 001 §2.4", "tier", "==", "plan", """
      Expert parallelism's all-to-all is bursty and large. Replicating experts so that the
      expert-parallel group fits inside one supernode keeps the all-to-all on the
      scale-up bus; only the expert gradient synchronisation then crosses the network.""")
def experts_inside(facts: Facts, threshold: Threshold) -> Outcome:
    """Tier the reviewed plan's EP group spans; a fitting plan with EP inside is the fix."""
    r = facts.reviewed_plan
    if not facts.workload.get("moe"):
        return Outcome("not_applicable", None, "dense model: no experts")
    if r is None:
        return Outcome("not_evaluated", None, "no plan: nothing fits")
    tier = r["placement"].get("ep")
    inside = r["ep"] == 1 or tier == "scale_up"
    if inside:
        return Outcome("pass", None, f"EP={r['ep']}: all-to-all on "
                                     f"{tier or 'no group (experts replicated)'}")
    alt = next((p for p in (facts.plans or {}).get("plans", [])
                if p["fits_in_memory"] and (p["ep"] == 1 or p["placement"].get("ep")
                                            == "scale_up")), None)
    if alt is None:
        return Outcome("pass", None, f"EP={r['ep']} crosses to {tier}; no fitting plan keeps "
                                     "it inside (memory does not allow)")
    return Outcome("fail", None, f"EP={r['ep']} all-to-all crosses to {tier}",
                   f"replicate experts: EP={alt['ep']} inside the supernode (TP={alt['tp']} "
                   f"PP={alt['pp']} DP={alt['dp']})",
                   f"{alt['step_time_s']:.3g} s/step vs {r['step_time_s']:.3g} s",
                   alt["step_time_s"])


@rule("exposed_comm_share", "Exposed communication <= 20 % of the step",
      "seed 000 §5.2, seed 001 §1.1", "share", "<=", "plan", """
      When the communication a step cannot hide behind compute passes about 20 % of the
      step, training efficiency collapses (40-50 % is seen on 1,000-card clusters with
      small batches). The comm-compute table is the first table of a purchase.""")
def exposed_comm(facts: Facts, threshold: Threshold) -> Outcome:
    """Exposed communication over step time of the reviewed plan."""
    r = facts.reviewed_plan
    if r is None:
        return Outcome("not_evaluated", None, "no plan: nothing fits")
    share = r["exposed_comm_share"]
    best = _best(facts)
    predicted = (f"{pct(best['comm_compute']['exposed_share'])} with the planner's best plan"
                 if best else None)
    return check(share <= number(threshold), share,
                 f"{pct(share)} of the step is exposed communication "
                 f"({pct(r['comm_share'])} issued over compute + communication)",
                 "larger micro-batches or global batch, overlap, or the planner's best plan",
                 predicted, best["comm_compute"]["exposed_share"] if best else None)


@rule("memory_fit", "The plan fits in accelerator memory", "seed 003 §3.1", "GB", "<=",
      "plan", """
      Weights, gradients and optimizer states take 4-6x the parameter bytes (70B with AdamW
      needs ~560 GB+); a plan whose busiest card exceeds its memory does not run.""")
def memory_fit(facts: Facts, threshold: Threshold) -> Outcome:
    """Busiest GPU's memory against usable capacity."""
    r = facts.reviewed_plan
    if r is None:
        advice = (facts.plans or {}).get("advice") or {}
        return Outcome("fail", None, f"no plan fits: {advice.get('reason', 'out of memory')}",
                       "; ".join(advice.get("suggestions", [])) or "more or larger GPUs")
    return check(r["fits_in_memory"], r["memory_per_gpu_bytes"] / 1e9,
                 f"{r['memory_per_gpu_bytes'] / 1e9:.1f} GB per GPU of "
                 f"{r['memory_capacity_bytes'] / 1e9:.1f} GB usable",
                 "more pipeline stages, recomputation or ZeRO sharding", _faster(facts),
                 None, r["memory_capacity_bytes"] / 1e9)


@rule("link_utilisation", "Simulated link utilisation <= 80 %", "seed 003 §3.2", "share",
      "<=", "plan", """
      A link above 80 % utilisation is a bottleneck: queues build, collectives stretch and
      the step waits on the slowest link. Measured as the busiest link's utilisation
      averaged over the simulated iteration, per tier; links hot for part of the run are
      listed in the report.""")
def link_utilisation(facts: Facts, threshold: Threshold) -> Outcome:
    """Highest time-averaged link utilisation of the simulated iteration."""
    sim = facts.simulation
    if sim is None:
        return Outcome("not_evaluated", None, "not simulated (supernode design simulates; "
                                              "check --no-simulate skips it)")
    util = sim["link_utilization"]
    tier, row = max(util.items(), key=lambda kv: kv[1]["max"])
    hot = sum(sim["hot_link_counts"].values())
    limit = number(threshold)
    over = max(facts.topology.get("oversubscription", {}).values(), default=1.0)
    fixes = [] if over <= 1.0 else [f"a non-blocking fabric (now {over:g}:1)"]
    what_if = sim.get("routing_what_if")
    predicted = value = None
    if what_if is not None and what_if["busiest_link_utilization"] <= limit:
        fixes.insert(0, f"{what_if['routing']} routing on the fabric")
        value = what_if["busiest_link_utilization"]
        predicted = (f"simulated with {what_if['routing']} routing: busiest link "
                     f"{pct(value)}, step {what_if['step_time_s']:.3g} s")
    elif what_if is None:
        fixes.append("adaptive routing (not simulated here)")
    fixes.append("stagger collectives (seed 001 §4.3)")
    return check(row["max"] <= limit, row["max"],
                 f"busiest link {pct(row['max'])} ({tier}); {hot:,} links hot for >= 1 % "
                 f"of the iteration", ", or ".join(fixes), predicted, value)


@rule("workload_fit", "The workload is communication-bound enough for a supernode",
      "seed 001 §1.3, §6", "share", ">=", "plan", """
      Supernodes pay off for communication-bound work (pre-training above 100B parameters
      with large TP, large-batch inference, video); a 7B LoRA fine-tune does not need one.
      Before buying: is the model communication-bound on 8-GPU servers, and does the
      supernode's speedup justify its cost?""")
def workload_fit(facts: Facts, threshold: Threshold) -> Outcome:
    """Communication share of the best plan on 8-GPU servers (planner's workload fit)."""
    fit = facts.fit
    if fit is None:
        return Outcome("not_evaluated", None, "workload fit not computed")
    q = fit["questions"]["communication_bound"]
    share = q.get("comm_share_on_8_gpu_servers")
    if share is None:
        return Outcome("pass", None, "the job does not fit on 8-GPU servers: it needs a "
                                     "larger domain")
    bound = share >= number(threshold) or bool(q.get("large_model"))
    return check(bound, share, f"on 8-GPU servers {pct(share)} communication; "
                 f"{fit['questions']['verdict']}",
                 "a conventional 8-GPU-server cluster may be enough (seed 001 §1.3)", None)

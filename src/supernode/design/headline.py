"""The review's one stated step time, the figures that follow from it, the reconciliation of
the two engines, and the executive summary (``results.json`` -> ``summary``).

The stated step time is the simulated one when the review simulated the plan (the flow
simulator sees routing, hot links and contention the analytic model prices on average),
else the estimate; the other is shown beside it. MFU, tokens/s, cost per million tokens
follow from it here; the facility's energy per step and per token already use it
(:mod:`supernode.design.pipeline` hands the facility the simulated step); reliability's
goodput is a share of wall time (its failures and checkpoints do not depend on the step
time), so it is the same for either.

When the two engines differ by more than
:data:`~supernode.design.simulation.RECONCILE_GAP` (issue 23), ``reconciliation`` names the
measurable causes — routing (the what-if with adaptive routing), hot links (the busiest
link's utilisation), exposed communication (the simulated compute lane against the
estimate's busy share) and pipeline stalls (PP > 1: the pipeline lane) — the largest of
them, and the what-if that closes the gap (or that none does).
"""

from __future__ import annotations

from typing import Any

from supernode.design.simulation import RECONCILE_GAP

#: Shares of the gap a cause must explain to be named the cause.
EXPLAINS = 0.5


def _routing(sim: dict[str, Any], what_if: dict[str, Any] | None) -> dict[str, Any] | None:
    if what_if is None:
        return None
    est, step = sim["estimate_step_time_s"], sim["step_time_s"]
    closed = (step - what_if["step_time_s"]) / (step - est) if step != est else 0.0
    return {"cause": "routing", "measure": "step time with adaptive routing on the fabric",
            "value_s": what_if["step_time_s"], "share_of_gap": closed,
            "detail": f"the run routed by {sim['options'].get('routing')} hashing; with "
                      f"{what_if['routing']} routing the step is "
                      f"{what_if['step_time_s']:.3g} s (the estimate {est:.3g} s)"}


def _hot_links(sim: dict[str, Any]) -> dict[str, Any] | None:
    hot = sim["hot_links"]
    if not hot:
        return None
    top = hot[0]
    return {"cause": "hot links", "measure": "busiest link's utilisation over the step",
            "value_s": None, "share_of_gap": None,
            "detail": f"busiest link {top['link']} ({top['tier']}) "
                      f"{top['utilization']:.1%} busy; "
                      f"{sum(sim['hot_link_counts'].values()):,} links hot"}


def _exposed(sim: dict[str, Any], view: dict[str, Any]) -> dict[str, Any] | None:
    lanes = sim["timeline_by_dimension"]["lanes"]
    if "compute" not in lanes:
        return None
    step, est = sim["step_time_s"], sim["estimate_step_time_s"]
    idle_sim = step * (1 - lanes["compute"]["busy_share"])
    idle_est = est * (1 - view["busy_share"])
    return {"cause": "exposed communication",
            "measure": "time the compute lane waits, simulated vs estimated",
            "value_s": idle_sim, "share_of_gap": (idle_sim - idle_est) / (step - est)
            if step != est else 0.0,
            "detail": f"compute busy {lanes['compute']['busy_share']:.1%} of the simulated "
                      f"step ({idle_sim:.3g} s waiting) vs {view['busy_share']:.1%} "
                      f"estimated ({idle_est:.3g} s)"}


def _pipeline(sim: dict[str, Any], view: dict[str, Any]) -> dict[str, Any] | None:
    if view["pp"] <= 1:
        return None
    lane = sim["timeline_by_dimension"]["lanes"].get("pp")
    bubble = view["breakdown_s"].get("pipeline_bubble", 0.0)
    return {"cause": "pipeline stalls", "measure": "pipeline lane busy share",
            "value_s": bubble, "share_of_gap": None,
            "detail": f"PP {view['pp']}: estimated bubble {bubble:.3g} s; pipeline sends "
                      f"busy {lane['busy_share'] if lane else 0.0:.1%} of the simulated step"}


def reconciliation(sim: dict[str, Any] | None, view: dict[str, Any] | None,
                   what_if: dict[str, Any] | None) -> dict[str, Any] | None:
    """Why the simulated and estimated steps differ by more than the line, and what closes
    the gap; None when they agree (or the plan was not simulated)."""
    if sim is None or view is None or not sim["estimate_step_time_s"]:
        return None
    est, step = sim["estimate_step_time_s"], sim["step_time_s"]
    gap = (step - est) / est
    if abs(gap) <= RECONCILE_GAP:
        return None
    causes = [c for c in (_routing(sim, what_if), _exposed(sim, view), _hot_links(sim),
                          _pipeline(sim, view)) if c is not None]
    # routing is an intervention (the re-run): when it closes the gap it is the cause, and
    # the waiting compute lane its symptom; otherwise the largest measured share
    ranked = sorted((c for c in causes if c["share_of_gap"] is not None),
                    key=lambda c: (c["cause"] != "routing", -c["share_of_gap"]))
    named = next((c for c in ranked if c["share_of_gap"] >= EXPLAINS), None)
    closes = None
    if what_if is not None and abs(what_if["step_time_s"] - est) / est <= RECONCILE_GAP:
        closes = {"what_if": f"routing: {what_if['routing']} on the scale-out fabric",
                  "step_time_s": what_if["step_time_s"],
                  "gap": (what_if["step_time_s"] - est) / est}
    cause = named["cause"] if named else "not one measured cause"
    return {"gap": gap, "line": RECONCILE_GAP, "cause": cause, "causes": causes,
            "closes": closes,
            "text": f"simulated step {step:.3g} s is {gap:+.0%} off the estimate {est:.3g} s "
                    f"(line ±{RECONCILE_GAP:.0%}); cause: {cause}; "
                    + (f"what-if {closes['what_if']} brings it to "
                       f"{closes['step_time_s']:.3g} s ({closes['gap']:+.1%})" if closes else
                       "no what-if run closes it: the figures use the simulated step")}


def _risks(findings: list[dict[str, Any]]) -> list[dict[str, Any]]:
    order = {"error": 0, "warning": 1, "info": 2}
    failed = sorted((f for f in findings if f["failed"]), key=lambda f: order[f["severity"]])
    return [{"id": f["id"], "severity": f["severity"], "detail": f["detail"]}
            for f in failed[:3]]


def executive_summary(data: dict[str, Any], what_if: dict[str, Any] | None
                      ) -> dict[str, Any] | None:
    """The executive summary: the decision, the stated step time with the other beside it,
    MFU and tokens/s from it (with the estimate's 80 % interval scaled to it), power, cost
    per million tokens, goodput, the three largest risks and what was simulated vs
    estimated. None when no plan fits."""
    view, sim, fac = data["reviewed_plan"], data["simulation"], data["facility"]
    if view is None:
        return None
    plan = next((p for p in data["plans"]["plans"] if p["rank"] == view.get("rank")), None)
    est = view["step_time_s"]
    step = sim["step_time_s"] if sim else est
    ratio = est / step
    tokens = view["tokens_per_s"] * est
    interval = plan["step_time_interval_s"] if plan else [est, est]
    scale = step / est
    price = data["economics"]["gpu_hour"]["value"]
    gpus = view["tp"] * view["pp"] * view["dp"] * view["cp"]
    rel = data["reliability"]
    return {
        "decision": f"TP={view['tp']} PP={view['pp']} DP={view['dp']} CP={view['cp']} "
                    f"EP={view['ep']} on {data['cluster']['accelerators']:,} "
                    f"{data['cluster']['accelerator']}: verdict {data['verdict']['verdict']}",
        "step_time_s": step, "step_time_source": "simulated" if sim else "estimated",
        "estimate_step_time_s": est,
        "simulated_step_time_s": sim["step_time_s"] if sim else None,
        "step_time_interval_s": [interval[0] * scale, interval[1] * scale],
        "mfu": view["mfu"] * ratio,
        "mfu_interval": [view["mfu"] * est / (interval[1] * scale),
                         view["mfu"] * est / (interval[0] * scale)],
        "tokens_per_s": tokens / step,
        "power_w": fac["power"]["cluster_at_workload_w"],
        "cost_per_million_tokens_usd": price * gpus * step / 3600.0 / tokens * 1e6,
        "energy_cost_per_million_tokens_usd": fac["energy"]["cost_per_million_tokens_usd"],
        "goodput": rel["goodput"]["monte_carlo"]["goodput"]["mean"] if rel else None,
        "goodput_definition": "reliability: share of wall time spent on kept training "
                              "progress (Monte Carlo mean)",
        "recovery_policy": rel["recovery"]["policy"] if rel else None,
        "risks": _risks(data["findings"]),
        "simulated": (["step time (flow simulation of one iteration)", "link utilisation",
                       "hot links", "timeline"] if sim else []) +
                     (["goodput (Monte Carlo of failures)", "scheduling replay"]
                      if rel else ["scheduling replay"]),
        "estimated": ["step time (analytic model: the plans, D1, D2)", "MFU interval",
                      "degraded step times", "power and energy", "cost per token"],
        "reconciliation": reconciliation(sim, view, what_if),
    }

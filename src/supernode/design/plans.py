"""The plan under review, one view for the planner's best plan and for a given plan.

Rules and the report read the same keys whichever way the plan came: sizes, rank order,
step time, memory, where each group runs, whether TP leaves the supernode, and the
communication shares (issued over compute + communication, and exposed over the step,
as :func:`~supernode.planner.detail.comm_compute_row` defines them). A given plan is
estimated with :func:`~supernode.estimate.model.estimate_plan` (knobs it leaves open are
chosen as a tuned run would) and placed with the planner's Megatron rank order.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from supernode.estimate.model import estimate_plan
from supernode.planner.detail import placement_of
from supernode.planner.explain import label
from supernode.planner.mapping import Layout
from supernode.planner.report import PlanReport
from supernode.planner.search import PlanTarget, tp_crosses_domain
from supernode.planner.straddle import describe, win_share
from supernode.spec.plan import ParallelPlan

_COMM = ("tp_comm", "cp_comm", "ep_comm", "pp_comm", "dp_comm")


def busy_share(breakdown: dict[str, float]) -> float:
    """Share of the step (s over s) the accelerators compute: compute and optimizer over the
    whole breakdown (0 for an empty step)."""
    step = sum(breakdown.values())
    return (breakdown["compute"] + breakdown["optimizer"]) / step if step > 0 else 0.0


def best_view(report: PlanReport) -> dict[str, Any] | None:
    """The planner's best plan as the reviewed plan (None when nothing is feasible)."""
    if not report.feasible or not report.plans:
        return None
    d = report.plans[0].to_dict()
    cc = d["comm_compute"]
    return {"source": "planner", "tp": d["tp"], "pp": d["pp"], "dp": d["dp"], "cp": d["cp"],
            "ep": d["ep"], "rank_order": d["rank_order"], "step_time_s": d["step_time_s"],
            "tokens_per_s": d["tokens_per_s"], "mfu": d["mfu"],
            "fits_in_memory": d["fits_in_memory"],
            "memory_per_gpu_bytes": d["memory_per_gpu_bytes"],
            "memory_capacity_bytes": d["memory_capacity_bytes"],
            "tp_crosses_domain": d["tp_crosses_scale_up_domain"],
            "placement": d["placement"], "comm_share": cc["share"],
            "exposed_comm_share": cc["exposed_share"], "breakdown_s": d["breakdown_s"],
            "busy_share": busy_share(d["breakdown_s"]), "rank": 1, "best_speedup": 1.0,
            "straddles_domain": d["straddles_scale_up_domain"],
            "straddling_groups": d["straddling_groups"], "rank_note": d["rank_note"]}


def given_view(target: PlanTarget, plan: ParallelPlan, report: PlanReport
               ) -> dict[str, Any]:
    """A given plan as the reviewed plan: estimated, placed, ranked among the planner's."""
    est = estimate_plan(target.workload, plan, target.system)
    layout = Layout(plan.tp, plan.pp, plan.dp, plan.cp, plan.ep)
    places = placement_of(target, layout, {}, {})
    step = est.step_time_s
    issued = sum(est.comm_share_by_tier.values())
    ref = report.reference or {}
    return {"source": "given", "tp": plan.tp, "pp": plan.pp, "dp": plan.dp, "cp": plan.cp,
            "ep": plan.ep, "rank_order": layout.order_name, "step_time_s": step,
            "tokens_per_s": est.tokens_per_s, "mfu": est.mfu,
            "fits_in_memory": est.fits_in_memory,
            "memory_per_gpu_bytes": est.memory_per_gpu_bytes["total"],
            "memory_capacity_bytes": est.memory_usable_bytes,
            "tp_crosses_domain": tp_crosses_domain(layout, target.system),
            "placement": {d: places[d]["tier"] if d in places else None
                          for d in ("tp", "cp", "pp", "dp", "ep")},
            "comm_share": issued,
            "exposed_comm_share": sum(est.breakdown_s[k] for k in _COMM) / step,
            "breakdown_s": est.breakdown_s, "busy_share": busy_share(est.breakdown_s),
            "chosen": est.chosen, "rank": ref.get("rank"),
            "best_speedup": ref.get("best_speedup")}


def simulation_plan(view: dict[str, Any], report: PlanReport, given: ParallelPlan | None
                    ) -> tuple[ParallelPlan, tuple[str, ...]]:
    """The plan to simulate and its rank order (innermost first)."""
    if given is not None:
        return given, ("tp", "cp", "dp", "pp")
    best = report.plans[0]
    return (best.as_plan(report.outcome.target.global_batch_sequences, with_order=False),
            tuple(best.layout.order))


def confirm_straddling_best(report: PlanReport, sim: dict[str, Any],
                            simulate: Callable[[ParallelPlan, tuple[str, ...]], dict[str, Any]]
                            ) -> tuple[dict[str, Any] | None, ParallelPlan, tuple[str, ...],
                                       dict[str, Any]]:
    """The reviewed plan, its plan, rank order and simulation, once the simulation has
    confirmed a straddling best plan (issue 24; :mod:`supernode.planner.straddle`).

    ``sim``: the simulation of the planner's best plan; ``simulate``: runs a plan (and
    rank order) and returns its simulation results. When the best plan's TP/CP/EP groups
    straddle a domain, the best plan inside is simulated too: the straddling plan stays
    first only when its simulated step also beats it by more than the search's margin;
    otherwise the plan inside takes rank 1 (its simulation is the reviewed one) and the
    straddler's note says why. ``sim["straddle_check"]`` records the comparison.
    """
    inside, best = report.inside_best, report.plans[0]
    gb = report.outcome.target.global_batch_sequences
    plan, order = best.as_plan(gb, with_order=False), tuple(best.layout.order)
    if inside is None:
        return best_view(report), plan, order, sim
    margin = report.outcome.straddle_margin
    inside_plan, inside_order = inside.as_plan(gb, with_order=False), tuple(inside.layout.order)
    inside_sim = simulate(inside_plan, inside_order)
    won = win_share(sim["step_time_s"], inside_sim["step_time_s"])
    confirmed = won > margin
    what = describe(best.straddles, report.outcome.target.scale_up_size)
    check = {"straddling_plan": label(best), "inside_plan": label(inside),
             "straddles": [{"dim": d, "group_size": n} for d, n in best.straddles],
             "estimated_win": win_share(best.step_time_s, inside.step_time_s),
             "simulated_win": won, "margin": margin, "confirmed": confirmed,
             "simulated_step_time_s": sim["step_time_s"],
             "inside_simulated_step_time_s": inside_sim["step_time_s"]}
    if confirmed:
        check["note"] = (f"the simulation confirms {label(best)}: {what}, but its simulated "
                         f"step beats {label(inside)} by {won:.0%} (> the {margin:.0%} margin)")
        sim["straddle_check"] = check
        return best_view(report), plan, order, sim
    check["note"] = (f"{label(best)} ranked after {label(inside)}: {what}; the simulation "
                     f"does not confirm its win ({won:.0%} simulated, {margin:.0%} needed)")
    best.rank_note = check["note"]
    report.plans = [inside, *(d for d in report.plans if d is not inside)]
    report.explanation.append(f"Simulation: {check['note']}.")
    report.notes.append(check["note"])
    inside_sim["straddle_check"] = check
    return best_view(report), inside_plan, inside_order, inside_sim

"""The planner's answer: ranked plans with details, reasons, the comm-compute table.

:func:`plan_job` is the public entry point: search, then describe the top distinct
layouts (one per set of sizes, its best rank order and knobs), explain the winner, and
answer even when nothing fits (:mod:`supernode.planner.advice`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from supernode.estimate.calibration import Calibration, default_calibration
from supernode.estimate.model import estimate_plan
from supernode.planner.advice import infeasible_advice, least_memory_records
from supernode.planner.detail import PlanDetail, plan_detail
from supernode.planner.evaluate import knob_index, memory_index
from supernode.planner.explain import alternatives, headline, label, runner_up_lines
from supernode.planner.search import LayoutRecord, PlanTarget, SearchOutcome, search_layouts
from supernode.planner.space import SearchSpace
from supernode.planner.straddle import STRADDLE_MARGIN, straddling_groups
from supernode.spec.plan import ParallelPlan


@dataclass
class PlanReport:
    """Search outcome plus the described plans and the reasons (see :func:`plan_job`)."""

    outcome: SearchOutcome
    plans: list[PlanDetail]
    feasible: bool
    explanation: list[str]
    alternatives: list[dict[str, Any]]
    advice: dict[str, Any] | None
    wall_time_s: float
    reference: dict[str, Any] | None = None
    notes: list[str] = field(default_factory=list)
    #: The best plan whose groups stay inside the domains, when the best plan straddles
    #: (what ``design`` simulates to confirm the straddling win), else None.
    inside_best: PlanDetail | None = None

    def comm_compute_table(self) -> list[dict[str, Any]]:
        """Seed 000 §5.2 table: one row per plan, with the 20% line."""
        return [{"rank": i, "plan": label(d), **d.comm_compute}
                for i, d in enumerate(self.plans, 1)]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready report (see docs/planner.md for every key)."""
        t, s = self.outcome.target, self.outcome.stats
        econ = t.economics_or_default()
        return {
            "workload": t.workload.name, "accelerator": t.system.accelerator,
            "gpus": t.gpus, "global_batch_sequences": t.global_batch_sequences,
            "objective": self.outcome.objective,
            "allow_cross_domain_tp": self.outcome.allow_cross_domain_tp,
            "straddle_margin": self.outcome.straddle_margin,
            "best_inside_domain": None if self.inside_best is None else {
                "plan": label(self.inside_best),
                "step_time_s": self.inside_best.step_time_s},
            "feasible": self.feasible,
            "plans": [{"rank": i, **d.to_dict()} for i, d in enumerate(self.plans, 1)],
            "comm_compute_table": self.comm_compute_table(),
            "explanation": self.explanation, "alternatives": self.alternatives,
            "advice": self.advice, "reference": self.reference,
            "candidates_evaluated": s.candidates_evaluated,
            "legal_candidates": s.legal_candidates,
            "candidates_pruned_by_memory": s.candidates_pruned_by_memory,
            "layouts_considered": s.layouts_considered,
            "layouts_pruned_by_memory": s.layouts_pruned_by_memory,
            "search_wall_time_s": s.wall_time_s, "plans_per_s": s.plans_per_s,
            "search_workers": s.workers,
            "wall_time_s": self.wall_time_s,
            "economics": {"price_per_gpu_hour_usd": econ.price_per_gpu_hour,
                          "tdp_w": econ.tdp_w, "note": econ.price_note},
            "notes": [*t.notes, *self.notes],
            "stack": t.workload.software.to_dict(),
        }


def distinct_top(ranked: list[LayoutRecord], count: int) -> list[LayoutRecord]:
    """The first ``count`` records with distinct sizes (each with its best rank order)."""
    seen, out = set(), []
    for r in ranked:
        key = (r.layout.tp, r.layout.pp, r.layout.dp, r.layout.cp, r.layout.ep)
        if key not in seen:
            seen.add(key)
            out.append(r)
        if len(out) == count:
            break
    return out


def record_detail(target: PlanTarget, record: LayoutRecord, cal: Calibration,
                  least_memory: bool = False) -> PlanDetail:
    """The detail of a record's best point (or of its least memory-hungry point)."""
    flat = memory_index(record.axes, record.least_memory_index) if least_memory \
        else record.best_index
    detail = plan_detail(target, record.layout, knob_index(record.axes, flat), cal)
    detail.straddles = straddling_groups(record.layout, target.system)
    detail.rank_note = record.rank_note
    return detail


def reference_rank(outcome: SearchOutcome, plan: ParallelPlan,
                   cal: Calibration) -> dict[str, Any]:
    """Step time of a given plan (knobs it leaves open chosen by :func:`estimate_plan`)
    and its rank among the search's distinct layouts."""
    t = outcome.target
    result = estimate_plan(t.workload, plan, t.system, cal)
    mine = (plan.tp, plan.pp, plan.dp, plan.cp, plan.ep)
    faster = {(r.layout.tp, r.layout.pp, r.layout.dp, r.layout.cp, r.layout.ep)
              for r in outcome.ranked if r.step_time_s < result.step_time_s}
    faster.discard(mine)
    best = outcome.ranked[0].step_time_s if outcome.ranked else None  # nothing fits
    return {"plan": {k: getattr(plan, k) for k in ("tp", "pp", "dp", "cp", "ep")},
            "chosen": result.chosen, "step_time_s": result.step_time_s,
            "fits_in_memory": result.fits_in_memory, "rank": len(faster) + 1,
            "best_step_time_s": best,
            "best_speedup": None if best is None else result.step_time_s / best}


def plan_job(target: PlanTarget, objective: str = "time", top: int = 5,
             allow_cross_domain_tp: bool = False, space: SearchSpace | None = None,
             cal: Calibration | None = None, reference: ParallelPlan | None = None,
             workers: int | None = 1, straddle_margin: float = STRADDLE_MARGIN
             ) -> PlanReport:
    """Search every plan of ``target`` and describe the ``top`` best distinct layouts.

    ``objective``: ``time`` (step time), ``cost`` (USD per token; with a fixed job size it
    ranks like time) or ``energy`` (GPU joules per token). ``reference``: a plan (e.g.
    a published configuration) to rank among the results. ``workers``: processes for
    the search (:func:`~supernode.planner.search.search_layouts`; None: as many as pay).
    ``straddle_margin``: what a plan whose TP/CP/EP groups straddle a scale-up domain must
    win by to rank above those inside (:mod:`supernode.planner.straddle`).
    """
    start = time.perf_counter()
    cal = cal or default_calibration()
    outcome = search_layouts(target, objective, allow_cross_domain_tp, space, cal, workers,
                             straddle_margin)
    chosen = distinct_top(outcome.ranked, max(top, 1))
    inside = None
    if chosen:
        plans = [record_detail(target, r, cal) for r in chosen]
        inside = _inside_best(target, outcome, plans, cal)
        explanation = headline(plans[0]) + runner_up_lines(plans) + [
            f"#{i}: {d.rank_note}." for i, d in enumerate(plans, 1) if d.rank_note
        ] + _passed_over(outcome, chosen[0])
        alts = alternatives(outcome, plans[0], lambda r: record_detail(target, r, cal))
        for alt in alts:
            explanation.append(f"Why not {alt['alternative']}? {alt['status']}: {alt['reason']}")
        advice = None
    else:
        plans = [record_detail(target, r, cal, least_memory=True)
                 for r in least_memory_records(outcome, max(top, 1))]
        advice = infeasible_advice(outcome)
        explanation = [f"No feasible plan: {advice['reason']}."] + [
            f"Suggestion: {s}." for s in advice["suggestions"]]
        if plans:
            explanation.append("The plans listed are the nearest ones (least memory); "
                               "none fits.")
        alts = []
    ref = reference_rank(outcome, reference, cal) if reference is not None else None
    return PlanReport(outcome, plans, bool(chosen), explanation, alts, advice,
                      time.perf_counter() - start, ref, inside_best=inside)


def _passed_over(outcome: SearchOutcome, best: LayoutRecord) -> list[str]:
    """A line on the fastest straddling plan demoted below ``best``, when there is one."""
    faster = [r for r in outcome.ranked if r.straddles and r.objective < best.objective
              and r.rank_note and r.rank_note.startswith("ranked after")]
    if not faster:
        return []
    first = min(faster, key=lambda r: r.objective)
    x = first.layout
    return [f"Passed over TP={x.tp} PP={x.pp} DP={x.dp} CP={x.cp} EP={x.ep} "
            f"[{x.order_name}]: {first.rank_note}."]


def _inside_best(target: PlanTarget, outcome: SearchOutcome, plans: list[PlanDetail],
                 cal: Calibration) -> PlanDetail | None:
    """The best plan inside the domains when the best plan straddles (None otherwise, or
    when no plan stays inside)."""
    if not plans[0].straddles:
        return None
    found = next((d for d in plans if not d.straddles), None)
    if found is not None:
        return found
    record = next((r for r in outcome.ranked if not r.straddles), None)
    return None if record is None else record_detail(target, record, cal)

"""Acceptance: on every public Megatron H100 case the planner finds a plan at least as fast.

For each ``training_step`` case of ``data/validation/public.json`` the planner is restricted
to the case's GPUs and global batch on the case's system (:func:`system_from_validation`);
its best plan must be predicted no slower than the published configuration (as
:func:`estimate_plan` predicts it), and the published configuration's rank is reported.
"""

from __future__ import annotations

import json
from importlib import resources

import pytest

from supernode.estimate.system import system_from_validation
from supernode.planner import PlanTarget, plan_job
from supernode.validation.training_case import case_plan, case_workload

CASES = [c for c in json.loads((resources.files("supernode") / "data" / "validation"
                                / "public.json").read_text("utf-8"))["cases"]
         if c["kind"] == "training_step"]


def test_there_are_public_cases():
    assert len(CASES) >= 9


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_planner_beats_or_matches_published(case):
    plan = case_plan(case)
    system = system_from_validation(case["system"])
    target = PlanTarget(case_workload(case), system, int(case["system"]["gpus"]),
                        plan.global_batch_sequences, plan.precision)
    report = plan_job(target, top=3, reference=plan)
    best = report.plans[0]
    ref = report.reference
    assert report.feasible and best.fits_in_memory and not best.tp_crosses_domain
    assert best.step_time_s <= ref["step_time_s"] * (1 + 1e-9)
    assert ref["rank"] >= 1 and ref["best_speedup"] >= 1 - 1e-9
    # the published configuration's own layout is among the scored ones
    sizes = {(r.layout.tp, r.layout.pp, r.layout.dp, r.layout.cp, r.layout.ep)
             for r in report.outcome.records}
    assert (plan.tp, plan.pp, plan.dp, plan.cp, plan.ep) in sizes

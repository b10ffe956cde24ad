"""The reliability stage of supernode design: seeded (same seed, same figures), strict JSON
when nothing can stop the job, and the section left out of an older results dict."""

from __future__ import annotations

import json

import yaml

from supernode.design import DesignInput, example, run_design
from supernode.report import write_report
from supernode.report.all_sections import build_sections

RUNS = 100


def _flawed(**kw) -> dict:
    e = example("flawed")
    return run_design(DesignInput(e.cluster, e.workload, e.plan, simulate=False,
                                  reliability_runs=RUNS, schedule=False, **kw)).to_dict()


def test_same_seed_same_reliability_other_seed_differs():
    a, b, c = _flawed(seed=3), _flawed(seed=3), _flawed(seed=4)
    assert a["reliability"] == b["reliability"] and a["decisions"] == b["decisions"]
    assert a["reliability"]["goodput"]["monte_carlo"]["runs"] == RUNS
    assert a["reliability"]["goodput"]["monte_carlo"]["goodput"] != \
        c["reliability"]["goodput"]["monte_carlo"]["goodput"]
    assert a["inputs"]["seed"] == a["reliability"]["goodput"]["monte_carlo"]["seed"] == 3


def test_a_job_nothing_can_stop_gives_strict_json(tmp_path):
    # every failure rate zero: no restart-class failure, an infinite MTBF -> null in JSON
    e = example("flawed")
    doc = yaml.safe_load(e.cluster.read_text())
    parts = ("gpu", "hbm", "software", "host", "psu", "nic", "leaf_switch", "spine_switch",
             "transceiver")
    doc["reliability"] = {"failures_per_unit_year": dict.fromkeys(parts, 0.0)}
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump(doc))
    data = run_design(DesignInput(path, e.workload, e.plan, simulate=False,
                                  reliability_runs=RUNS, schedule=False)).to_dict()
    rel = data["reliability"]
    assert rel["interruptions"]["failures_per_day"] == 0.0
    assert rel["interruptions"]["job_mtbf_s"] is None and rel["checkpoint"]["mtbf_s"] is None
    write_report(data, tmp_path / "r")
    assert json.loads((tmp_path / "r" / "results.json").read_text())["reliability"] == rel


def test_results_without_the_new_keys_leave_their_sections_out():
    data = _flawed()
    ids = [s.id for s in build_sections(data)]
    assert ids.index("reliability") == ids.index("facility") + 1
    assert ids.index("scheduling") == ids.index("reliability") + 1
    assert ids.index("monitoring") == ids.index("scheduling") + 1
    assert ids.index("artefacts") == ids.index("monitoring") + 1
    keys = ("reliability", "monitoring", "scheduling", "artefacts")
    for key in keys:
        del data[key]
    assert not set(keys) & {s.id for s in build_sections(data)}


def test_reviewed_plan_keeps_the_planners_expert_tp():
    """The planner's winner with ETP 1 under TP 2 (EP 64 over 576 GPUs) is reviewed as
    that plan: dropped, ETP fell back to TP and EP x ETP = 128 no longer divided the
    stage's 576 ranks, so the reliability stage's estimate refused the design's own plan."""
    from types import SimpleNamespace

    from supernode.design.plans import simulation_plan
    from supernode.planner.detail import PlanDetail
    from supernode.planner.mapping import Layout

    best = SimpleNamespace(layout=Layout(tp=2, pp=1, dp=288, cp=1, ep=64, etp=1),
                           knobs={"micro_batch": 1, "recompute": "none"})
    best.as_plan = lambda *args, **kw: PlanDetail.as_plan(best, *args, **kw)
    report = SimpleNamespace(plans=[best], outcome=SimpleNamespace(
        target=SimpleNamespace(global_batch_sequences=1152)))
    plan, _ = simulation_plan({}, report, None)
    assert (plan.tp, plan.ep, plan.etp) == (2, 64, 1)

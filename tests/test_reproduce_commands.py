"""The reproducing commands of a review (design/reproduce.py) as data: which stages get a
command, what each names, and that nothing is left to design/check alone."""

from __future__ import annotations

import shlex

from supernode.design.reproduce import (
    FACILITY_FIGURES,
    MEMORY_FIGURES,
    REVIEWED_PLAN_FILE,
    reproduce_commands,
)
from supernode.spec.plan import plan_from_data

INPUTS = {"cluster": "/abs/my cluster.yaml", "workload": "llama3-8b", "seed": 7,
          "prometheus_major": 2}
FILES = [{"path": "exports/slurm-tree/topology.conf", "group": "exports",
          "format": "slurm-tree"},
         {"path": "exports/k8s-labels/node-labels.yaml", "group": "exports",
          "format": "k8s-labels"},
         {"path": "exports/k8s-labels/label-nodes.sh", "group": "exports",
          "format": "k8s-labels"},
         {"path": "monitoring/rules.yaml", "group": "monitoring", "format": "monitor-rules"}]


def _stages(rep):
    return [c["stage"] for c in rep["commands"]]


def test_no_plan_no_plan_commands_and_files_by_format():
    rep = reproduce_commands(INPUTS, None, False, 500, 30.0, "restart", True,
                             ["first-fit"], FILES)
    assert rep["plan_file"] is None and "plan" not in _stages(rep)
    assert _stages(rep) == ["topology", "facility", "scheduling", "artefacts", "artefacts",
                            "artefacts", "rules"]
    exports = [c for c in rep["commands"] if " export " in c["command"]]
    # one command per format, each owning the rows of its files
    assert [len(c["figures"]) for c in exports] == [1, 2]
    assert [f["results"] for f in exports[1]["figures"]] == ["artefacts/files/1/sha256",
                                                             "artefacts/files/2/sha256"]
    monitor = shlex.split(rep["commands"][-2]["command"])
    assert monitor[:3] == ["supernode", "monitor", "rules"] and "2" in monitor
    assert rep["stages_without_command"] == []
    # without a plan the facility is the cluster's at TDP: no workload, no plan, no run
    argv = {c["stage"]: shlex.split(c["command"]) for c in rep["commands"]}
    assert argv["facility"] == ["supernode", "facility", "--cluster", "/abs/my cluster.yaml",
                                "--json"]
    assert argv["topology"] == ["supernode", "topology", "/abs/my cluster.yaml", "--json"]


def test_a_plan_gives_estimate_simulate_reliability_with_the_reviews_choices():
    doc = plan_from_data({"tp": 2, "dp": 4, "global_batch_sequences": 8}).model_dump()
    rep = reproduce_commands(INPUTS, doc, True, 123, 7.5, "shrink", False, [], [])
    assert rep["plan_file"] == REVIEWED_PLAN_FILE and rep["plan_document"] == doc
    assert _stages(rep) == ["topology", "plan", "simulate", "facility", "reliability",
                            "rules"]
    argv = {c["stage"]: shlex.split(c["command"]) for c in rep["commands"]}
    assert argv["plan"][argv["plan"].index("--cluster") + 1] == "/abs/my cluster.yaml"
    rel = argv["reliability"]
    assert [rel[rel.index(o) + 1] for o in ("--runs", "--days", "--recovery", "--seed")] == [
        "123", "7.5", "shrink", "7"]
    assert all("--json" in a for a in argv.values())


def _figures(rep, stage):
    entry = next(c for c in rep["commands"] if c["stage"] == stage)
    return [(f["results"], f["command_json"]) for f in entry["figures"]]


def test_facility_runs_the_reviewed_plan_at_the_simulated_step_when_the_review_simulated():
    doc = plan_from_data({"tp": 2, "dp": 4, "global_batch_sequences": 8}).model_dump()
    for simulated in (True, False):
        rep = reproduce_commands(INPUTS, doc, simulated, 500, 30.0, "restart", False, [], [])
        argv = {c["stage"]: shlex.split(c["command"]) for c in rep["commands"]}
        facility = argv["facility"]
        assert facility[:2] == ["supernode", "facility"] and facility[-1] == "--json"
        assert facility[facility.index("--plan") + 1] == REVIEWED_PLAN_FILE
        assert facility[facility.index("--workload") + 1] == "llama3-8b"
        assert ("--simulate" in facility) is simulated
        assert ("--seed" in facility) is simulated
        # every key of the facility results, each the same key of the command's --json
        assert _figures(rep, "facility") == [(f"facility/{k}", k) for k in FACILITY_FIGURES]


def test_memory_only_with_a_memory_section_and_each_key_under_review():
    plain = reproduce_commands(INPUTS, None, False, 500, 30.0, "restart", False, [], [])
    assert "memory" not in _stages(plain)
    rep = reproduce_commands(INPUTS, None, False, 500, 30.0, "restart", False, [], [],
                             memory=True)
    entry = next(c for c in rep["commands"] if c["stage"] == "memory")
    assert shlex.split(entry["command"]) == ["supernode", "memory", "map", "--cluster",
                                             "/abs/my cluster.yaml", "--json"]
    assert _figures(rep, "memory") == [(f"memory/{k}", f"review/{k}") for k in MEMORY_FIGURES]
    assert {"paths", "remote"} <= set(MEMORY_FIGURES)  # one-way latencies, stream load


def test_check_carries_the_reviews_plan_rules_simulation_seed_and_global_batch():
    plain = reproduce_commands(INPUTS, None, False, 500, 30.0, "restart", False, [], [])
    argv = shlex.split(next(c for c in plain["commands"] if c["stage"] == "rules")["command"])
    assert argv == ["supernode", "check", "--cluster", "/abs/my cluster.yaml", "--workload",
                    "llama3-8b", "--seed", "7", "--json"]
    given = {**INPUTS, "plan": "/abs/plan.yaml", "rules": "/abs/pack.yaml",
             "simulate": False, "global_batch": 64}
    rep = reproduce_commands(given, None, False, 500, 30.0, "restart", False, [], [])
    argv = shlex.split(next(c for c in rep["commands"] if c["stage"] == "rules")["command"])
    assert [argv[argv.index(o) + 1] for o in ("--plan", "--rules", "--global-batch",
                                              "--seed")] == ["/abs/plan.yaml",
                                                             "/abs/pack.yaml", "64", "7"]
    assert "--no-simulate" in argv
    assert _figures(rep, "rules") == [("verdict", "verdict"), ("findings", "findings")]

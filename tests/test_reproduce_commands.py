"""The reproducing commands of a review (design/reproduce.py) as data: which stages get a
command, what each names, and what is left to design/check alone."""

from __future__ import annotations

import shlex

from supernode.design.reproduce import REVIEWED_PLAN_FILE, reproduce_commands
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
    assert _stages(rep) == ["scheduling", "artefacts", "artefacts", "artefacts"]
    exports = [c for c in rep["commands"] if " export " in c["command"]]
    # one command per format, each owning the rows of its files
    assert [len(c["figures"]) for c in exports] == [1, 2]
    assert [f["results"] for f in exports[1]["figures"]] == ["artefacts/files/1/sha256",
                                                             "artefacts/files/2/sha256"]
    monitor = shlex.split(rep["commands"][-1]["command"])
    assert monitor[:3] == ["supernode", "monitor", "rules"] and "2" in monitor
    assert rep["stages_without_command"] == ["facility", "rules"]


def test_a_plan_gives_estimate_simulate_reliability_with_the_reviews_choices():
    doc = plan_from_data({"tp": 2, "dp": 4, "global_batch_sequences": 8}).model_dump()
    rep = reproduce_commands(INPUTS, doc, True, 123, 7.5, "shrink", False, [], [])
    assert rep["plan_file"] == REVIEWED_PLAN_FILE and rep["plan_document"] == doc
    assert _stages(rep) == ["plan", "simulate", "reliability"]
    argv = {c["stage"]: shlex.split(c["command"]) for c in rep["commands"]}
    assert argv["plan"][argv["plan"].index("--cluster") + 1] == "/abs/my cluster.yaml"
    rel = argv["reliability"]
    assert [rel[rel.index(o) + 1] for o in ("--runs", "--days", "--recovery", "--seed")] == [
        "123", "7.5", "shrink", "7"]
    assert all("--json" in a for a in argv.values())

"""Issue 26 on two more reviews than the flawed example's (whose report runs every printed
command: tests/test_design_report.py). The flagship (a memory section; reviewed without
simulation): the commands for the cluster, the plans, the facility and the memory
sections, run from a folder holding the reviewed plan, give the review's figures
exactly. One HGX H100 server reviewed at ``--global-batch 64``: every printed command
with a ``--json``, check included, gives them too (the batch carried to check)."""

from __future__ import annotations

import json
import shlex

import yaml
from designs import design, example_design
from typer.testing import CliRunner

from supernode.commands import app, register_all
from supernode.design import DesignInput

STAGES = {"topology", "plan", "facility", "memory"}


def _json_at(data, path: str):
    for part in path.split("/") if path else ():
        data = data[int(part)] if isinstance(data, list) else data[part]
    return data


def _run_entries(data: dict, entries: list[dict], folder) -> set[str]:
    """Run each entry's command in ``folder`` (holding the reviewed plan) and compare its
    figures with ``data``; the results key paths compared."""
    rep = data["reproduce"]
    (folder / rep["plan_file"]).write_text(yaml.safe_dump(rep["plan_document"]),
                                           encoding="utf-8")
    checked = set()
    for entry in entries:
        argv = shlex.split(entry["command"])
        assert argv[0] == "supernode" and argv[-1] == "--json"
        result = CliRunner().invoke(app, argv[1:])
        expected = 1 if entry["stage"] == "rules" and data["verdict"]["errors"] else 0
        assert result.exit_code == expected, (entry["command"], result.output[-2000:])
        out = json.loads(result.stdout)
        for figure in entry["figures"]:
            assert _json_at(out, figure["command_json"]) == _json_at(data, figure["results"]), (
                entry["command"], figure)
            checked.add(figure["results"])
    return checked


def test_flagship_topology_plan_facility_and_memory_commands_give_the_reviews_figures(
        tmp_path, monkeypatch):
    register_all()
    data = example_design("flagship", simulate=False).to_dict()
    rep = data["reproduce"]
    assert data["memory"] is not None and data["memory"]["remote"] is not None
    assert data["facility"]["power_cap"] is not None
    monkeypatch.chdir(tmp_path)
    entries = [c for c in rep["commands"] if c["stage"] in STAGES]
    assert {c["stage"] for c in entries} == STAGES
    facility = next(c for c in entries if c["stage"] == "facility")
    assert "--simulate" not in shlex.split(facility["command"])  # the review did not simulate
    checked = _run_entries(data, entries, tmp_path)
    # the memory section's judged figures and the facility's, every one
    assert {"memory/paths", "memory/remote", "facility/power", "facility/energy",
            "facility/power_cap", "topology"} <= checked


def test_a_review_at_a_given_global_batch_is_reproduced_by_every_json_command(
        tmp_path, monkeypatch):
    register_all()
    data = design(DesignInput("hgx-h100", "llama3-8b", simulate=False,
                              global_batch=64)).to_dict()
    assert data["reviewed_plan"] is not None and data["memory"] is None
    assert data["reproduce"]["plan_document"]["global_batch_sequences"] == 64
    entries = [c for c in data["reproduce"]["commands"] if "--json" in c["command"]]
    rules = shlex.split(next(c for c in entries if c["stage"] == "rules")["command"])
    assert rules[rules.index("--global-batch") + 1] == "64" and "--no-simulate" in rules
    monkeypatch.chdir(tmp_path)
    checked = _run_entries(data, entries, tmp_path)
    assert {"verdict", "findings", "facility/energy", "topology",
            "reviewed_plan/step_time_s"} <= checked

"""Issue 26 on the flagship (a memory section; reviewed without simulation): the commands
its report prints for the cluster, the plans, the facility and the memory sections, run
from a folder holding the reviewed plan, give the review's figures exactly. (The flawed
example's report runs every printed command, check included: tests/test_design_report.py.)"""

from __future__ import annotations

import json
import shlex

import yaml
from designs import example_design
from typer.testing import CliRunner

from supernode.commands import app, register_all

STAGES = {"topology", "plan", "facility", "memory"}


def _json_at(data, path: str):
    for part in path.split("/") if path else ():
        data = data[int(part)] if isinstance(data, list) else data[part]
    return data


def test_flagship_topology_plan_facility_and_memory_commands_give_the_reviews_figures(
        tmp_path, monkeypatch):
    register_all()
    data = example_design("flagship", simulate=False).to_dict()
    rep = data["reproduce"]
    assert data["memory"] is not None and data["memory"]["remote"] is not None
    assert data["facility"]["power_cap"] is not None
    (tmp_path / rep["plan_file"]).write_text(yaml.safe_dump(rep["plan_document"]),
                                             encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    entries = [c for c in rep["commands"] if c["stage"] in STAGES]
    assert {c["stage"] for c in entries} == STAGES
    checked = set()
    for entry in entries:
        argv = shlex.split(entry["command"])
        assert argv[0] == "supernode" and argv[-1] == "--json"
        if entry["stage"] == "facility":
            assert "--simulate" not in argv  # the review did not simulate
        result = CliRunner().invoke(app, argv[1:])
        assert result.exit_code == 0, (entry["command"], result.output[-2000:])
        out = json.loads(result.stdout)
        for figure in entry["figures"]:
            assert _json_at(out, figure["command_json"]) == _json_at(data, figure["results"]), (
                entry["command"], figure)
            checked.add(figure["results"])
    # the memory section's judged figures and the facility's, every one
    assert {"memory/paths", "memory/remote", "facility/power", "facility/energy",
            "facility/power_cap", "topology"} <= checked

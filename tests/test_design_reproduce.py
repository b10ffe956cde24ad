"""Issue 26 on two more reviews than the flawed example's (whose report runs every printed
command: tests/test_design_report.py). The flagship (a memory section; reviewed without
simulation): the commands for the cluster, the plans, the facility and the memory
sections, run from a folder holding the reviewed plan, give the review's figures
exactly. One HGX H100 server reviewed at ``--global-batch 64``: every printed command
with a ``--json``, check included, gives them too (the batch carried to check), and so
they do for the same review run with a ``--calibration`` file (carried to each command
whose figures it changes)."""

from __future__ import annotations

import json
import shlex

import yaml
from calibration_data import synthetic_sets
from designs import design, example_design
from typer.testing import CliRunner

from supernode.commands import app, register_all
from supernode.design import DesignInput
from supernode.design.reproduce import CALIBRATED_STAGES
from supernode.measurements.setfile import render_yaml

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


def test_a_calibrated_review_prints_commands_that_carry_its_calibration(
        tmp_path, monkeypatch):
    """``design --calibration FILE``: every printed command that costs collectives or step
    times carries the file, and every ``--json`` command gives the review's figures, which
    differ from the uncalibrated review's (the calibration is in force in both)."""
    register_all()
    sets = tmp_path / "sweeps.yaml"
    sets.write_text(render_yaml(synthetic_sets()))
    cal = tmp_path / "cal.yaml"
    made = CliRunner().invoke(app, ["calibrate", "--cluster", "dgx-h100-superpod-su",
                                    str(sets), "--out", str(cal)])
    assert made.exit_code == 0, made.output
    out = tmp_path / "review"
    args = ["design", "--cluster", "hgx-h100", "--workload", "llama3-8b", "--global-batch",
            "64", "--quiet", "--out", str(out)]
    result = CliRunner().invoke(app, [*args, "--calibration", str(cal)])
    assert result.exit_code in (0, 1), result.output[-2000:]
    data = json.loads((out / "results.json").read_text())
    plain = design(DesignInput("hgx-h100", "llama3-8b", global_batch=64)).to_dict()
    assert data["reviewed_plan"]["step_time_s"] != plain["reviewed_plan"]["step_time_s"]
    entries = data["reproduce"]["commands"]
    for entry in entries:
        argv = shlex.split(entry["command"])
        carries = "--calibration" in argv
        assert carries == (entry["stage"] in CALIBRATED_STAGES), entry["command"]
        if carries:
            assert argv[argv.index("--calibration") + 1] == str(cal.resolve())
    monkeypatch.chdir(out)
    json_entries = [c for c in entries if "--json" in c["command"]]
    assert {"plan", "simulate", "facility", "reliability", "rules"} <= {
        c["stage"] for c in json_entries}
    checked = _run_entries(data, json_entries, out)
    assert {"reviewed_plan/step_time_s", "simulation/step_time_s", "facility/energy",
            "findings", "verdict"} <= checked


def test_a_given_fp8_plan_is_reviewed_at_fp8_as_estimate_and_facility_cost_it(
        tmp_path, monkeypatch):
    """The review of a plan file that says ``precision: fp8`` costs the job at FP8 (its MFU
    against the FP8 peak, as ``estimate --plan`` gives it): the printed estimate and
    facility commands give the review's figures, and the MFU is not the BF16 one."""
    register_all()
    plan = tmp_path / "fp8.yaml"
    plan.write_text(yaml.safe_dump({"tp": 8, "pp": 1, "micro_batch": 1, "precision": "fp8",
                                    "global_batch_sequences": 64}))
    data = design(DesignInput("hgx-h100", "llama3-8b", plan=plan, simulate=False)).to_dict()
    bf16 = dict(yaml.safe_load(plan.read_text()), precision="bf16")
    plan.with_name("bf16.yaml").write_text(yaml.safe_dump(bf16))
    other = design(DesignInput("hgx-h100", "llama3-8b", plan=plan.with_name("bf16.yaml"),
                               simulate=False)).to_dict()
    assert data["reproduce"]["plan_document"]["precision"] == "fp8"
    assert data["reviewed_plan"]["mfu"] < other["reviewed_plan"]["mfu"]
    entries = [c for c in data["reproduce"]["commands"] if c["stage"] in ("plan", "facility")]
    monkeypatch.chdir(tmp_path)
    checked = _run_entries(data, entries, tmp_path)
    assert {"reviewed_plan/mfu", "reviewed_plan/step_time_s", "facility/energy"} <= checked

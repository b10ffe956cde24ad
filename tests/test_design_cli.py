"""Bad input anywhere in the design chain: one ``error:`` line naming the field, exit 2,
no report folder (and an existing one left as it was). Plus the bundled examples: the
packaged copies equal examples/design/, and each example runs."""

from __future__ import annotations

import filecmp
from pathlib import Path

import pytest
import yaml
from test_cli_errors import assert_bad_input, run

from supernode.commands.design import design_input
from supernode.design import FLAGSHIP, DesignInput, examples, run_design

ROOT = Path(__file__).resolve().parents[1]
FLAWED = ROOT / "examples" / "design" / "flawed"


def _cluster(tmp_path: Path, change) -> Path:
    data = yaml.safe_load((FLAWED / "cluster.yaml").read_text())
    change(data)
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def _reliability(tmp_path: Path, **block) -> list[str]:
    """Arguments reviewing the flawed cluster with ``block`` as its reliability block (the
    flawed example: 64 hosts, air-cooled, no CDU)."""
    path = _cluster(tmp_path, lambda d: d.update(reliability=block))
    return ["--cluster", str(path), "--workload", "llama3-70b"]


def _plan(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "plan.yaml"
    path.write_text(text)
    return path


CASES = {
    "cluster field": (lambda t: ["--cluster", str(_cluster(t, lambda d: d["scale_up"].update(
        size=0))), "--workload", "llama3-70b"], "scale_up.size"),
    "facility coolant": (lambda t: ["--cluster", str(_cluster(t, lambda d: d["facility"].update(
        coolant="glycol"))), "--workload", "llama3-70b"], "facility.coolant"),
    "rack fraction": (lambda t: ["--cluster", str(_cluster(t, lambda d: d["racks"].update(
        liquid_heat_fraction=1.5))), "--workload", "llama3-70b"],
        "racks.liquid_heat_fraction"),
    "reliability spares": (lambda t: _reliability(t, spare_hosts=65), "reliability.spare_hosts"),
    "reliability component": (lambda t: _reliability(t, failures_per_unit_year={"cdu": 0.1}),
                              "reliability.failures_per_unit_year.cdu"),
    "reliability unknown": (lambda t: _reliability(t, repair_h={"flux": 1.0}),
                            "reliability.repair_h.flux"),
    "reliability negative rate": (lambda t: _reliability(t, failures_per_unit_year={
        "gpu": -1.0}), "reliability.failures_per_unit_year.gpu"),
    "reliability standby": (lambda t: _reliability(t, hot_standby_share=1.5),
                            "reliability.hot_standby_share"),
    "reliability field": (lambda t: _reliability(t, checkpoint_mode="sometimes"),
                          "reliability.checkpoint_mode"),
    "workload": (lambda t: ["--cluster", str(FLAWED / "cluster.yaml"), "--workload",
                            "llama9-1t"], "workload"),
    "plan tp": (lambda t: ["--example", "flawed", "--plan", str(_plan(t, "tp: 16\n"))],
                "plan.tp"),
    "plan field": (lambda t: ["--example", "flawed", "--plan", str(_plan(t, "tq: 2\n"))],
                   "tq"),
    "plan gpus": (lambda t: ["--example", "flawed", "--plan",
                             str(_plan(t, "tp: 4\npp: 3\n"))], "plan.dp"),
    "rules id": (lambda t: ["--example", "flawed", "--rules",
                            str(_plan(t, "rules:\n  nope: {severity: error}\n"))],
                 "rules.nope"),
    "example": (lambda t: ["--example", "nope"], "--example"),
    "prometheus major": (lambda t: ["--example", "flawed", "--prometheus-major", "5"],
                         "--prometheus-major"),
    "half inputs": (lambda t: ["--cluster", str(FLAWED / "cluster.yaml")], "--workload"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_bad_input_exits_2_without_a_report(case, tmp_path):
    args, fragment = CASES[case]
    out = tmp_path / "report"
    assert_bad_input(run("design", *args(tmp_path), "--no-simulate", "--out", str(out)),
                     fragment)
    assert not out.exists()
    assert not [p for p in tmp_path.iterdir() if "staging" in p.name]


def test_failed_run_leaves_an_existing_folder_alone(tmp_path):
    out = tmp_path / "report"
    out.mkdir()
    (out / "report.html").write_text("previous")
    assert_bad_input(run("design", "--example", "flawed", "--no-simulate", "--plan",
                         str(_plan(tmp_path, "tp: 16\n")), "--out", str(out)), "plan.tp")
    assert [p.name for p in out.iterdir()] == ["report.html"]
    assert (out / "report.html").read_text() == "previous"


def test_out_that_is_a_file_is_refused_first(tmp_path):
    out = tmp_path / "file"
    out.write_text("keep")
    assert_bad_input(run("design", "--example", "flawed", "--out", str(out)), "--out")
    assert out.read_text() == "keep"


def test_check_bad_input_exits_2(tmp_path):
    assert_bad_input(run("check", "--example", "flawed", "--no-simulate", "--rules",
                         str(tmp_path / "missing.yaml")), "--rules")


def test_no_arguments_means_the_flagship():
    inputs = design_input(None, None, None, None, None, True, 0, None)
    assert inputs.example == FLAGSHIP and inputs.workload == "llama3-405b"
    assert Path(inputs.cluster).is_file()


def test_packaged_examples_equal_the_repository_copies():
    repo = ROOT / "examples" / "design"
    for name, e in examples().items():
        for path in [e.cluster] + ([e.plan] if e.plan else []):
            assert filecmp.cmp(path, repo / name / path.name, shallow=False), path
    assert filecmp.cmp(Path(examples()[FLAGSHIP].cluster).parents[1] / "examples.yaml",
                       repo / "examples.yaml", shallow=False)


@pytest.mark.parametrize("name", ["h100-servers", "deepseek-v3-nvl72"])
def test_other_examples_run(name):
    e = examples()[name]
    result = run_design(DesignInput(e.cluster, e.workload, e.plan, simulate=False))
    data = result.to_dict()
    assert data["reviewed_plan"] is not None and data["plans"]["feasible"]
    assert data["facility"]["power"]["cluster_at_tdp_w"] > 0
    statuses = {f["id"]: f["status"] for f in data["findings"]}
    if name == "deepseek-v3-nvl72":
        assert statuses["experts_inside_supernode"] == "pass"
        assert data["facility"]["cooling"]["coolant"] == "pg25"
    else:
        assert statuses["experts_inside_supernode"] == "not_applicable"


def test_no_schedule_leaves_the_replay_out_and_check_is_told_so(tmp_path):
    """``--no-schedule``: ``scheduling`` is null with a note saying why, the reproduce list
    has no ``scheduling`` entry, and the printed ``check`` carries the same switch (so its
    findings are the review's); the other stages are those of a full review."""
    import json

    from supernode.design.operations import NOT_REPLAYED

    e = examples()["flawed"]
    off = run_design(DesignInput(e.cluster, e.workload, e.plan, simulate=False,
                                 schedule=False)).to_dict()
    on = run_design(DesignInput(e.cluster, e.workload, e.plan, simulate=False)).to_dict()
    assert off["scheduling"] is None and on["scheduling"] is not None
    assert NOT_REPLAYED in off["notes"] and NOT_REPLAYED not in on["notes"]
    assert off["inputs"]["schedule"] is False and on["inputs"]["schedule"] is True
    stages = {c["stage"]: c["command"] for c in off["reproduce"]["commands"]}
    assert "scheduling" not in stages and "scheduling" in \
        {c["stage"] for c in on["reproduce"]["commands"]}
    assert "--no-schedule" in stages["rules"]
    assert off["reliability"] == on["reliability"] and off["facility"] == on["facility"]
    out = tmp_path / "r"
    result = run("design", "--example", "flawed", "--no-simulate", "--no-schedule",
                 "--quiet", "--json", "--out", str(out))
    assert json.loads(result.stdout)["scheduling"] is None

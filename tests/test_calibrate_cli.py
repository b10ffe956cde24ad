"""CLI: supernode calibrate, and --calibration on estimate, plan, simulate, design, compare."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from calibration_data import synthetic_sets
from typer.testing import CliRunner

from supernode.commands import app, register_all
from supernode.measurements.setfile import render_yaml

DATA = Path(__file__).parent / "data"
NCCL = DATA / "nccl_tests"
EXAMPLES = Path(__file__).parents[1] / "examples"
GB300 = str(EXAMPLES / "gb300-nvl72-3rack.yaml")
GB300_RUNS = sorted(str(p) for p in NCCL.glob("oci-gb300-*.txt"))


def run(*args: str):
    register_all()
    return CliRunner().invoke(app, list(args))


@pytest.fixture(scope="module")
def gb300_cal(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("cal") / "gb300.yaml"
    result = run("calibrate", "--cluster", GB300, *GB300_RUNS, "--out", str(out),
                 "--date", "2025-06-01")
    assert result.exit_code == 0, result.output
    return out


@pytest.fixture(scope="module")
def h100_cal(tmp_path_factory) -> Path:
    """A calibration of synthetic H100 sweeps (nvlink4, infiniband_ndr)."""
    folder = tmp_path_factory.mktemp("h100")
    sets = folder / "sweeps.yaml"
    sets.write_text(render_yaml(synthetic_sets()))
    out = folder / "cal.yaml"
    result = run("calibrate", "--cluster", "dgx-h100-superpod-su", str(sets), "--out", str(out))
    assert result.exit_code == 0, result.output
    return out


def test_calibrate_writes_a_documented_file(gb300_cal):
    doc = yaml.safe_load(gb300_cal.read_text())
    assert doc["schema"] == "supernode-calibration/1"
    assert doc["cluster"] == "gb300-nvl72-3rack" and doc["date"] == "2025-06-01"
    assert [s["path"] for s in doc["sources"]] == GB300_RUNS
    assert all(len(s["sha256"]) == 64 and s["rows"] == 2 for s in doc["sources"])
    assert doc["fit"]["rows"] == 16 and doc["fit"]["groups"] == 8
    assert doc["fit"]["rms_log_error_calibrated"] < doc["fit"]["rms_log_error_packaged"]
    fitted = {f"{p['table']}.{p['parameter']}" for p in doc["parameters"]
              if p["status"] == "fitted"}
    assert "infiniband_xdr.simple_efficiency" in fitted
    assert all(p["reason"] for p in doc["parameters"] if p["status"] != "fitted")


def test_calibrate_output_is_deterministic_and_json_is_the_file(gb300_cal, tmp_path):
    again = tmp_path / "again.yaml"
    run("calibrate", "--cluster", GB300, *GB300_RUNS, "--out", str(again), "--date",
        "2025-06-01")
    assert again.read_bytes() == gb300_cal.read_bytes()
    result = run("calibrate", "--cluster", GB300, *GB300_RUNS, "--date", "2025-06-01",
                 "--json")
    data = json.loads(result.output)
    assert data.pop("output") is None
    assert data == yaml.safe_load(gb300_cal.read_text())


def test_calibrate_summary_names_fitted_and_refused_parameters():
    result = run("calibrate", "--cluster", GB300, *GB300_RUNS)
    assert result.exit_code == 0, result.output
    out = result.output
    assert "16 rows in 8 group(s) from 8 file(s)" in out
    assert "infiniband_xdr.simple_efficiency" in out and "fitted" in out
    assert "not identified, no measured row depends on them" in out
    assert "nothing written (--out FILE to save the calibration)" in out


def test_compare_gates_against_the_calibrated_prediction(gb300_cal):
    """OCI's GB300 all-to-all over two racks fails a 90 % gate on the packaged tables (25 %
    of the prediction) and passes it against the cluster's own calibration."""
    runs = str(NCCL / "oci-gb300-alltoall-2rack.txt")
    plain = run("compare", "--cluster", GB300, runs, "--fail-below", "0.9")
    assert plain.exit_code == 1
    calibrated = run("compare", "--cluster", GB300, runs, "--fail-below", "0.9",
                     "--calibration", str(gb300_cal), "--json")
    assert calibrated.exit_code == 0, calibrated.output
    data = json.loads(calibrated.output)
    assert data["gate"]["passed"] and data["calibration"]["cluster"] == "gb300-nvl72-3rack"
    assert data["calibration"]["packaged_tables_changed"] is False
    assert {f["parameter"] for f in data["calibration"]["fitted"]} >= {"simple_efficiency"}
    text = run("compare", "--cluster", GB300, runs, "--calibration", str(gb300_cal)).output
    assert "predictions calibrated on gb300-nvl72-3rack (gb300.yaml)" in text


def _estimate(*extra: str) -> dict:
    result = run("estimate", "--cluster", "dgx-h100-superpod-su", "--workload", "llama3-70b",
                 "--global-batch", "256", "--tp", "8", "--pp", "1", "--no-overlap-dp",
                 "--json", *extra)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_estimate_and_plan_cost_collectives_with_the_calibration(h100_cal):
    plain, calibrated = _estimate(), _estimate("--calibration", str(h100_cal))
    assert calibrated["breakdown_s"]["tp_comm"] > plain["breakdown_s"]["tp_comm"]
    assert calibrated["breakdown_s"]["compute"] == plain["breakdown_s"]["compute"]
    assert any("collective efficiencies calibrated on dgx-h100-superpod-su" in n
               for n in calibrated["notes"])
    assert not any("calibrated on" in n for n in plain["notes"])
    planned = run("plan", "--cluster", "dgx-h100-superpod-su", "--workload", "llama3-8b",
                  "--gpus", "16", "--top", "1", "--calibration", str(h100_cal), "--json")
    assert planned.exit_code == 0, planned.output
    assert "calibrated on dgx-h100-superpod-su" in planned.output


def test_simulate_runs_with_the_calibration(h100_cal):
    args = ("simulate", "--cluster", "hgx-h100", "--workload", "llama3-8b", "--tp", "8",
            "--global-batch", "16", "--json", "--quiet")
    plain = json.loads(run(*args).output)
    result = run(*args, "--calibration", str(h100_cal))
    assert result.exit_code == 0, result.output
    calibrated = json.loads(result.output)
    assert calibrated["jobs"][0]["step_time_s"] > plain["jobs"][0]["step_time_s"]
    assert any("calibrated on" in n for n in calibrated["notes"])


def test_design_records_the_calibration_in_results(h100_cal, tmp_path):
    out = tmp_path / "design"
    result = run("design", "--example", "h100-servers", "--no-simulate", "--quiet",
                 "--calibration", str(h100_cal), "--out", str(out))
    assert result.exit_code == 0, result.output
    data = json.loads((out / "results.json").read_text())
    record = data["inputs"]["calibration"]
    assert record["path"] == str(h100_cal) and record["cluster"] == "dgx-h100-superpod-su"
    assert record["fitted"] and len(record["sha256"]) == 64
    assert "collective efficiencies calibrated on" in json.dumps(data["plans"])


def test_a_calibration_of_other_packaged_tables_says_so(gb300_cal, tmp_path):
    doc = yaml.safe_load(gb300_cal.read_text())
    doc["efficiency_sha256"] = "f" * 64
    old = tmp_path / "old.yaml"
    old.write_text(yaml.safe_dump(doc))
    result = run("compare", "--cluster", GB300, str(NCCL / "oci-gb300-alltoall-2rack.txt"),
                 "--calibration", str(old), "--json")
    assert json.loads(result.output)["calibration"]["packaged_tables_changed"] is True


def _bad(tmp_path: Path, name: str, edit) -> Path:
    path = tmp_path / name
    doc = edit(yaml.safe_load((Path(__file__).parent / "data" / "calibration" /
                               "gb300-nvl72-3rack.yaml").read_text()))
    path.write_text(yaml.safe_dump(doc))
    return path


def _set(doc: dict, key: str, value) -> dict:
    target = doc
    parts = key.split(".")
    for part in parts[:-1]:
        target = target[int(part)] if part.isdigit() else target[part]
    target[parts[-1]] = value
    return doc


@pytest.mark.parametrize("key, value, message", [
    ("schema", "supernode-measurements/1", "not a supernode-calibration/1 file"),
    ("parameters.0.table", "nvlink9", "unknown efficiency table 'nvlink9'"),
    ("parameters.0.parameter", "speed", "parameters[0].parameter"),
    ("parameters.0.status", "guessed", "parameters[0].status"),
    ("parameters.0.value", 7.5, "outside simple_efficiency's physical bounds"),
    ("date", "yesterday", "not an ISO date"),
    ("sources", [], "sources"),
])
def test_a_bad_calibration_file_is_one_error_line(tmp_path, key, value, message):
    path = _bad(tmp_path, "bad.yaml", lambda d: _set(d, key, value))
    result = run("estimate", "--cluster", "hgx-h100", "--workload", "llama3-8b",
                 "--global-batch", "8", "--calibration", str(path))
    assert result.exit_code == 2 and result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and message in lines[0]


@pytest.mark.parametrize("args, message", [
    (["--cluster", GB300, "nope.txt"], "no such file"),
    (["--cluster", GB300, GB300_RUNS[0], "--date", "June"], "--date"),
    (["--cluster", GB300, GB300_RUNS[0], "--placement", "sideways"], "--placement"),
    (["--cluster", GB300, str(DATA / "perftest" / "dgx-spark-ib_write_lat.txt")],
     "nothing to calibrate"),
    (["--cluster", "gb300-nvl72", str(NCCL / "oci-gb300-allreduce-2rack.txt")],
     "accelerators"),
])
def test_calibrate_bad_input_is_one_error_line(args, message):
    result = run("calibrate", *args)
    assert result.exit_code == 2 and result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and message in lines[0]


def test_calibrate_never_clobbers_its_input(tmp_path):
    target = tmp_path / "run.txt"
    target.write_text(Path(GB300_RUNS[0]).read_text())
    result = run("calibrate", "--cluster", GB300, str(target), "--out", str(target))
    assert result.exit_code == 2 and target.read_text() == Path(GB300_RUNS[0]).read_text()

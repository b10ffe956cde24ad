"""CLI: supernode compare, supernode bench-plan, supernode import results."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from supernode.commands import app, register_all

DATA = Path(__file__).parent / "data"
EXAMPLES = Path(__file__).parents[1] / "examples"
GB300_RACK = str(DATA / "nccl_tests" / "oci-gb300-allreduce-1rack.txt")


def run(*args: str):
    register_all()
    return CliRunner().invoke(app, list(args))


def _rows(*args: str) -> list[dict]:
    result = run("compare", *args, "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.output)["collectives"][0]["rows"]


def test_compare_table_and_findings():
    args = ("--cluster", str(EXAMPLES / "gb300-nvl72-3rack.yaml"),
            str(DATA / "nccl_tests" / "oci-gb300-alltoall-2rack.txt"))
    result = run("compare", *args)
    assert result.exit_code == 0, result.output
    out = result.output
    assert "128 ranks (rank list) on 2 domain(s) of 64" in out
    row = _rows(*args)[-1]                                         # 16 GiB
    assert row["measured_busbw_gbyte_per_s"] == pytest.approx(47.67)
    assert row["binding_tier"] == row["model_binding_tier"] == "scale_out"
    assert row["algorithm"] == "direct" and row["protocol"] == "simple"
    for figure in (f"{row['measured_busbw_gbyte_per_s']:.1f}",
                   f"{row['predicted_busbw_gbyte_per_s']:.1f}",
                   f"{row['measured_over_predicted']:.0%}"):
        assert figure in out                                       # the table shows the JSON
    assert "warning" in out and "NCCL_IB_HCA:" in out and "NCCL_CROSS_NIC:" in out


def test_compare_json_and_plot(tmp_path):
    result = run("compare", "--cluster", "gb300-nvl72", GB300_RACK, "--json",
                 "--plot", str(tmp_path / "plots"))
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    (entry,) = data["collectives"]
    assert entry["job"]["ranks"] == 64 and entry["op"] == "all_reduce"
    row = entry["rows"][-1]
    assert row["measured_busbw_gbyte_per_s"] == pytest.approx(930.48)
    assert row["bounds"][0]["tier"] == "scale_up" and 0 < row["bounds"][0]["share"] < 1
    assert data["gate"] is None
    (plot,) = data["plots"]
    assert Path(plot).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_gate_exit_codes():
    low, high = (r["measured_over_predicted"] for r in _rows("--cluster", "gb300-nvl72",
                                                             GB300_RACK))
    between = round((low + high) / 2, 3)
    assert low < between < high
    failed = run("compare", "--cluster", "gb300-nvl72", GB300_RACK, "--fail-below",
                 str(between))
    assert failed.exit_code == 1
    assert f"gate FAILED: 1 of 2 rows under {between:.0%} of the prediction" in failed.output
    passed = run("compare", "--cluster", "gb300-nvl72", GB300_RACK, "--fail-below",
                 str(round(0.99 * low, 3)), "--json")
    assert passed.exit_code == 0 and json.loads(passed.output)["gate"]["passed"] is True


@pytest.mark.parametrize("args, message", [
    (["--cluster", "gb300-nvl72", "nope.txt"], "no such file"),
    (["--cluster", "gb300-nvl72", GB300_RACK, "--fail-below", "-1"], "--fail-below"),
    (["--cluster", "gb300-nvl72", GB300_RACK, "--ranks", "8"], "contradicts the device list"),
    (["--cluster", "gb300-nvl72", str(DATA / "nccl_tests" / "oci-gb300-allreduce-2rack.txt")],
     "accelerators"),
    (["--cluster", "gb300-nvl72", GB300_RACK, "--placement", "sideways"], "--placement"),
    (["--cluster", "gb300-nvl72", str(DATA / "nccl_tests" / "sources.yaml")],
     "not a results file"),
])
def test_bad_input_is_one_error_line(args, message):
    result = run("compare", *args)
    assert result.exit_code == 2 and result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and message in lines[0]
    assert "Traceback" not in result.stderr


def test_truncated_output_exit_2_names_the_line(tmp_path):
    lines = Path(GB300_RACK).read_text().splitlines()
    cut = next(i for i, line in enumerate(lines) if line.strip().startswith("17179869184"))
    path = tmp_path / "cut.log"
    path.write_text("\n".join(lines[:cut] + [lines[cut][:50]]) + "\n")
    result = run("compare", "--cluster", "gb300-nvl72", str(path))
    assert result.exit_code == 2
    assert f"line {cut + 1}: row is cut off" in result.output


def test_bench_plan_script_json_and_file(tmp_path):
    script = run("bench-plan", "--cluster", "gb200-nvl72-superpod")
    assert script.exit_code == 0, script.output
    assert script.output.startswith("#!/usr/bin/env bash")
    assert "NCCL_TESTS_SPLIT='MOD 72'" in script.output
    assert "all_gather_perf" in script.output and "sendrecv_perf" in script.output
    data = json.loads(run("bench-plan", "--cluster", "gb200-nvl72-superpod", "--json").output)
    names = [r["name"] for r in data["runs"]]
    assert names[0] == "scale_up-all_reduce" and "scale_out-all_reduce" in names
    pinned = {p for r in data["runs"] for p in r["pins"]}
    assert {"nvlink5.in_network_efficiency", "nvlink5.simple_efficiency",
            "infiniband_ndr.step_latency_us"} <= pinned
    out = tmp_path / "bench.sh"
    written = run("bench-plan", "--cluster", "hgx-h100", "--launcher", "srun", "--out", str(out))
    assert written.exit_code == 0 and "4 runs" in written.output
    assert "srun --nodes=1" in out.read_text()
    bad = run("bench-plan", "--cluster", "hgx-h100", "--launcher", "pdsh")
    assert bad.exit_code == 2 and "--launcher" in bad.output


def test_import_results_writes_a_set_compare_reads(tmp_path):
    out = tmp_path / "sets.yaml"
    result = run("import", "results", GB300_RACK,
                 str(DATA / "perftest" / "dgx-spark-ib_write_lat.txt"), "--output", str(out))
    assert result.exit_code == 0 and "2 measurement set(s)" in result.output
    doc = yaml.safe_load(out.read_text())
    assert doc["schema"] == "supernode-measurements/1" and len(doc["sets"]) == 2
    again = run("compare", "--cluster", "gb300-nvl72", str(out), "--json")
    assert again.exit_code == 0, again.output
    direct = run("compare", "--cluster", "gb300-nvl72", GB300_RACK, "--json")
    a = json.loads(again.output)["collectives"][0]["rows"]
    b = json.loads(direct.output)["collectives"][0]["rows"]
    assert [r["predicted_busbw_gbyte_per_s"] for r in a] == pytest.approx(
        [r["predicted_busbw_gbyte_per_s"] for r in b])

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
    assert row["measured_busbw_gbyte_per_s"] == pytest.approx(47.67, abs=5e-3)  # print: 0.01
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
    assert row["measured_busbw_gbyte_per_s"] == pytest.approx(930.48, rel=5e-5)
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
    assert (f"gate FAILED: 1 of 2 rows (all rows) under {between:.0%} of the prediction"
            in failed.output)
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


def _nccl_table(path: Path, rows: list[tuple[int, float]], ranks: int = 128) -> Path:
    """A nccl-tests all_reduce output of ``ranks`` ranks (8 per host) with ``(size, time
    in us)`` rows, its rates printed as nccl-tests prints them (rounded to 0.01 GB/s)."""
    lines = ["# Collective test starting: all_reduce_perf", "#", "# Using devices"]
    lines += [f"#  Rank {r:3d} Group  0 Pid {1000 + r:6d} on node{r // 8:03d} device {r % 8:2d}"
              f" [0000:{r % 8:02x}:00] NVIDIA H100 80GB HBM3" for r in range(ranks)]
    lines += ["#", "#       size         count      type   redop    root     time   algbw   "
              "busbw #wrong     time   algbw   busbw #wrong"]
    for size, t_us in rows:
        alg = size / (t_us * 1e-6) / 1e9
        bus = alg * 2 * (ranks - 1) / ranks
        cells = f"{t_us:8.1f} {alg:7.2f} {bus:7.2f}      0"
        lines.append(f"{size:12d} {size // 4:13d}     float     sum      -1 {cells} {cells}")
    lines += ["# Out of bounds values : 0 OK", "# Collective test concluded: all_reduce_perf"]
    path.write_text("\n".join(lines) + "\n")
    return path


def _model_times(path: Path) -> dict[int, float]:
    rows = _rows("--cluster", "dgx-h100-superpod-su", str(path))
    return {r["message_bytes"]: r["predicted_time_s"] for r in rows}


def test_small_sizes_use_the_time_not_the_rounded_rate(tmp_path):
    """128 B at 49.2 us: nccl-tests prints busbw 0.01 (rounded); the share of the model is
    the time ratio (model time / measured time), not 0.01 over the model's rate."""
    probe = _nccl_table(tmp_path / "probe.txt", [(128, 49.2), (1024, 52.0)])
    rows = _rows("--cluster", "dgx-h100-superpod-su", str(probe))
    assert "0.01" in probe.read_text()
    for r in rows:
        assert r["measured_over_predicted"] == pytest.approx(
            r["predicted_time_s"] / r["measured_time_s"], rel=1e-9)
        assert 0.8 < r["measured_over_predicted"] < 1.1


def test_share_of_line_rate_against_hand_derived_bounds(tmp_path):
    """128 H100 ranks on 16 DGX hosts (8 x 400G NICs, 450 GB/s NVLink), all-reduce at 349
    GB/s busbw: a ring crosses each host's boundary once per channel, so the NICs allow
    8 x 50 GB/s = 400 GB/s of busbw (87 %); on NVLink the ring's 7 of 8 hops per host
    allow 8/7 x 450 GB/s. The tiers' columns differ, and the model's share is separate."""
    size, busbw = 8 * 2**30, 349e9
    t_us = size / (busbw / (2 * 127 / 128)) * 1e6
    path = _nccl_table(tmp_path / "h100.txt", [(size, t_us)])
    (row,) = _rows("--cluster", "dgx-h100-superpod-su", str(path))
    rates = {b["tier"]: b for b in row["line_rates"]}
    assert rates["scale_out"]["line_rate_busbw_gbyte_per_s"] == pytest.approx(8 * 50)
    assert rates["scale_up"]["line_rate_busbw_gbyte_per_s"] == pytest.approx(8 / 7 * 450)
    assert rates["scale_out"]["share"] == pytest.approx(349 / 400, rel=1e-3)
    assert rates["scale_up"]["share"] == pytest.approx(349 / (8 / 7 * 450), rel=1e-3)
    assert row["line_rate_tier"] == "scale_out"
    out = run("compare", "--cluster", "dgx-h100-superpod-su", str(path)).output
    assert "share of line rate (scale_up | scale_out)" in out and "68% | 87%" in out
    assert "share of model" in out


def test_gate_judges_only_the_sizes_asked_and_says_why_rows_fail(tmp_path):
    """Large sizes at 95 % of the model, small ones at 50 %: the gate from 64 MiB up
    passes; over every row it fails and prints one reason per failing row."""
    probe = _nccl_table(tmp_path / "probe.txt", [(s, 1000.0) for s in (1024, 2**20, 2**26,
                                                                        2**30)])
    model = _model_times(probe)
    rows = [(s, model[s] * 1e6 / (0.95 if s >= 2**26 else 0.5)) for s in sorted(model)]
    path = _nccl_table(tmp_path / "sweep.txt", rows)
    cluster = ("--cluster", "dgx-h100-superpod-su")
    passed = run("compare", *cluster, str(path), "--fail-below", "0.9", "--min-bytes", "64MiB")
    assert passed.exit_code == 0, passed.output
    assert "gate passed: 0 of 2 rows (64 MiB and up) under 90%" in passed.output
    assert "2 row(s) outside it not judged" in passed.output
    failed = run("compare", *cluster, str(path), "--fail-below", "0.9")
    assert failed.exit_code == 1
    reasons = [line for line in failed.output.splitlines() if "gate fails sweep.txt" in line]
    assert len(reasons) == 2
    assert "all_reduce 1 KiB: 50% of the prediction, under 90%" in reasons[0]
    assert "latency-bound" in reasons[0]
    data = json.loads(run("compare", *cluster, str(path), "--fail-below", "0.9", "--json",
                          "--max-bytes", "1M").output)["gate"]
    assert (data["rows"], data["failed_rows"], data["scope"]) == (2, 2, "up to 1 MiB")
    assert all(f["reason"] for f in data["failures"])
    other = run("compare", *cluster, str(path), "--fail-below", "0.9", "--gate-op",
                "all_to_all")
    assert other.exit_code == 0 and "0 of 0 rows (all sizes of all_to_all)" in other.output


@pytest.mark.parametrize("args, option", [
    (("--min-bytes", "64MiB"), "--min-bytes"),
    (("--fail-below", "0.9", "--min-bytes", "lots"), "--min-bytes"),
    (("--fail-below", "0.9", "--min-bytes", "1G", "--max-bytes", "1M"), "--max-bytes"),
    (("--fail-below", "0.9", "--gate-op", "all_reduction"), "--gate-op"),
])
def test_gate_options_refused_with_one_line(args, option):
    result = run("compare", "--cluster", "gb300-nvl72", GB300_RACK, *args)
    assert result.exit_code == 2
    assert result.output.count("error:") == 1 and option in result.output

"""``supernode schedule``, ``supernode export`` and ``supernode import nccl-xml`` through the
CLI: --json keys, plots, files, and bad input (exit 2, one ``error:`` line)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from supernode.commands import app, register_all

PHILLY_HEADER = "timestamp,duration,num_gpus,gpu_time,cluster\n"


def run(*args: str):
    register_all()
    return CliRunner().invoke(app, [str(a) for a in args])


def assert_bad_input(result, fragment: str = "") -> None:
    assert result.exit_code == 2, (result.exit_code, result.stdout, result.stderr)
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:"), result.stderr
    assert fragment in lines[0], lines[0]


def test_schedule_json_and_plots(tmp_path):
    result = run("schedule", "--cluster", "gb200-nvl72-superpod", "--trace", "philly",
                 "--jobs", "400", "--json", "--plot", tmp_path / "plots")
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert [p["policy"] for p in data["policies"]] == ["random", "first-fit", "node-pack",
                                                       "best-fit", "slurm-block", "preempt"]
    assert (data["options"]["shapes"], data["options"]["pricing"]) == ("memory-tp",
                                                                        "per-group")
    for key in ("policy", "utilisation", "mean_queue_s", "fragmentation", "tp_crossing_share",
                "slowdown_spread"):
        assert all(key in p for p in data["policies"])
    assert data["trace"]["jobs"] == 400 and data["cluster"]["gpus"] == 576
    assert sorted(Path(p).name for p in data["plots"]) == [
        "schedule_metrics.png", "schedule_slowdown_cdf.png", "schedule_timeline.png"]
    for p in data["plots"]:
        assert Path(p).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_schedule_table_and_synthetic_trace():
    result = run("schedule", "--cluster", "dgx-h100-superpod-su", "--trace", "synthetic",
                 "--jobs", "300", "--load", "1.1", "--policy", "first-fit", "--policy",
                 "best-fit", "--seed", "3")
    assert result.exit_code == 0, result.stderr
    assert "first-fit" in result.stdout and "best-fit" in result.stdout
    assert "random" not in result.stdout.split("caption")[0].split("policy")[1]


def test_shape_rule_and_pricing_options():
    base = ("schedule", "--cluster", "gb200-nvl72-superpod", "--trace", "philly", "--jobs",
            "300", "--policy", "first-fit", "--json")
    result = run(*base, "--shapes", "uniform-tp", "--pricing", "all-split")
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert (data["options"]["shapes"], data["options"]["pricing"]) == ("uniform-tp",
                                                                        "all-split")
    assert_bad_input(run(*base, "--shapes", "bogus"), "--shapes")
    assert_bad_input(run(*base, "--pricing", "bogus"), "--pricing")


def test_bad_trace_rows_and_skip_bad_rows(tmp_path):
    trace = tmp_path / "t.csv"
    trace.write_text(PHILLY_HEADER + "2017-10-01 00:00:00,100.0,1,100,vc\n"
                     "2017-10-01 00:00:01,-5,1,0,vc\n"
                     "2017-10-01 00:00:02,100.0,4096,0,vc\n"
                     "2017-10-01 00:00:03,200.0,8,1600,vc\n")
    bad = run("schedule", "--cluster", "gb200-nvl72-superpod", "--trace", trace)
    assert_bad_input(bad, "line 3: duration: must be a positive run time in seconds, got -5 "
                          "(1 more bad row: line 4)")
    ok = run("schedule", "--cluster", "gb200-nvl72-superpod", "--trace", trace,
             "--skip-bad-rows", "--json", "--policy", "best-fit")
    assert ok.exit_code == 0, ok.stderr
    assert ok.stderr.splitlines() == [
        "skipped line 3: duration: must be a positive run time in seconds, got -5",
        "skipped line 4: num_gpus: 4,096 GPUs is larger than the cluster (576 GPUs)"]
    data = json.loads(ok.stdout)
    assert data["trace"]["jobs"] == 2
    assert [r["line"] for r in data["skipped_rows"]] == [3, 4]


@pytest.mark.parametrize("args, fragment", [
    (["--trace", "nope.csv"], "no such file"),
    (["--trace", "philly", "--policy", "magic"], "unknown policy 'magic'"),
    (["--trace", "philly", "--load", "0.5"], "need --trace synthetic"),
    (["--trace", "philly", "--backfill-depth", "0"],
     "--backfill-depth: got 0; must be in 1..1,000,000"),
    (["--trace", "philly", "--checkpoint-interval-s", "nan"], "--checkpoint-interval-s"),
    (["--trace", "synthetic", "--size-law", "zipf"], "size_law"),
    (["--trace", "synthetic", "--max-gpus", "4096", "--size-law", "pow2"], "do not fit"),
    (["--trace", "design-replay", "--jobs", "5"], "--jobs: the design replay sets its own"),
    (["--trace", "design-replay", "--load", "0.5"], "need --trace synthetic"),
])
def test_schedule_bad_options(args, fragment):
    assert_bad_input(run("schedule", "--cluster", "gb200-nvl72-superpod", *args), fragment)


def test_schedule_missing_columns_and_plot_path_checked_first(tmp_path):
    trace = tmp_path / "pods.csv"
    trace.write_text("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,1000,1024,1,1000\n")
    assert_bad_input(run("schedule", "--cluster", "gb200-nvl72-superpod", "--trace", trace),
                     "missing columns creation_time, scheduled_time, deletion_time")
    afile = tmp_path / "afile"
    afile.write_text("x")
    assert_bad_input(run("schedule", "--cluster", "gb200-nvl72-superpod", "--trace",
                         "philly", "--plot", afile), "is not a folder")


def test_export_all_formats_then_again_into_the_same_folder(tmp_path):
    out = tmp_path / "out"
    first = run("export", "--cluster", "gb200-nvl72-superpod", "--format", "all", "--out",
                out, "--json")
    assert first.exit_code == 0, first.stderr
    data = json.loads(first.stdout)
    assert [f["format"] for f in data["formats"]] == [
        "slurm-tree", "slurm-yaml", "k8s-labels", "kueue", "volcano", "nccl-xml"]
    assert data["nodes"] == 144 and len(data["switches"]) == 6
    names = sorted(p.name for p in out.iterdir())
    assert names == ["kueue-topology.yaml", "label-nodes.sh", "nccl-topo-gb200-compute-tray.xml",
                     "node-labels.yaml", "topology.conf", "topology.yaml",
                     "volcano-hypernodes.yaml"]
    again = run("export", "--cluster", "gb200-nvl72-superpod", "--format", "slurm-block",
                "--out", out)
    assert again.exit_code == 0, again.stderr
    assert (out / "topology.conf").read_text().count("BlockName=") == 8
    assert (out / "topology.yaml").exists()                       # other files are kept


@pytest.mark.parametrize("args, fragment", [
    (["--cluster", "gb200-nvl72-superpod", "--format", "slurm"], "unknown format 'slurm'"),
    (["--cluster", "gb200-nvl72-superpod", "--format", "slurm-tree", "--format",
      "slurm-block"], "both write topology.conf"),
    (["--cluster", "mi300x-8", "--format", "all"], "describe NVIDIA GPUs"),
    (["--cluster", "gb200-nvl72-superpod", "--format", "k8s-labels", "--fabric-label",
      "bad key"], "--fabric-label"),
    (["--cluster", "gb200-nvl72-superpod", "--format", "all", "--gpus", "0"], "--gpus"),
])
def test_export_bad_input_writes_nothing(args, fragment, tmp_path):
    out = tmp_path / "out"
    assert_bad_input(run("export", *args, "--out", out), fragment)
    assert not out.exists()


def test_import_nccl_xml_round_trip_through_files(tmp_path):
    out = tmp_path / "out"
    assert run("export", "--cluster", "dgx-h100-superpod-su", "--format", "nccl-xml",
               "--out", out).exit_code == 0
    xml = out / "nccl-topo-dgx-h100.xml"
    shown = run("import", "nccl-xml", xml, "--accelerator", "h100-sxm-80gb", "--json")
    assert shown.exit_code == 0, shown.stderr
    host = json.loads(shown.stdout)["host"]
    assert host["accelerators_per_host"] == 8 and host["nics"] == {"count": 8,
                                                                   "speed_gbit_per_s": 400}
    target = tmp_path / "host.yaml"
    written = run("import", "nccl-xml", xml, "--accelerator", "h100-sxm-80gb", "--output",
                  target)
    assert written.exit_code == 0 and yaml.safe_load(target.read_text())["host"] == host
    assert_bad_input(run("import", "nccl-xml", tmp_path / "missing.xml"), "no such file")
    junk = tmp_path / "junk.xml"
    junk.write_text("<system")
    assert_bad_input(run("import", "nccl-xml", junk, "--accelerator", "h100-sxm-80gb"),
                     "not well-formed XML")

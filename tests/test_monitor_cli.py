"""``supernode monitor rules|list`` and ``supernode health``: files, JSON, grouped alerts,
and bad input as one ``error:`` line with exit code 2."""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from supernode.cluster.load import load_cluster
from supernode.commands import app, register_all
from supernode.monitor.dcgm import field_table, parse_counters_csv
from supernode.monitor.exposition import parse_exposition
from supernode.monitor.pack import build_pack

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "monitor" / "dgx-h100-su"


def run(*args: str):
    register_all()
    return CliRunner().invoke(app, list(args))


def bad(*args: str) -> str:
    result = run(*args)
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert "Traceback" not in result.output
    return lines[0]


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("monitor") / "dgx"
    result = run("monitor", "rules", "--cluster", "dgx-h100-superpod-su", "--out", str(out),
                 "--prometheus-major", "2", "--json")
    assert result.exit_code == 0, result.output
    return out, json.loads(result.stdout)


def test_monitor_rules_writes_every_artefact(generated):
    out, manifest = generated
    assert sorted(p.name for p in out.iterdir()) == sorted(
        ["rules.yaml", "rules-tests.yaml", "rules-tests-long.yaml", "dcgm-counters.csv",
         "grafana-dashboard.json", "topology.prom", "alertmanager-inhibit.yaml",
         "manifest.json"])
    assert manifest["alerting_rules"] == 29 and manifest["prometheus_major"] == 2
    assert manifest["topology"] == {"gpus": 256, "hosts": 32, "nics": 256, "switches": 12,
                                    "racks": 8}
    assert {r["id"] for r in manifest["rules"]} >= {"SwitchPortDrops", "GpuXidErrorsRising"}
    assert list(manifest) == ["cluster", "files", "alerting_rules", "recording_rules",
                              "groups", "topology", "rules", "notes", "prometheus_major",
                              "promtool"]


def test_the_default_prometheus_major_is_fixed_not_the_machines(tmp_path, monkeypatch):
    """Without --prometheus-major and --check the test values follow Prometheus 3 whatever
    promtool is installed (output never depends on the machine); with --check they follow
    the promtool that checks them (issue 25: Debian's 2.42 passed with no flag); an
    explicit major that promtool is not is one error line saying which to pass."""
    from supernode.monitor import promtool

    monkeypatch.setattr(promtool, "find_promtool", lambda: "/opt/fake/promtool")
    monkeypatch.setattr(promtool, "promtool_version", lambda binary: (2, 42, 0))
    result = run("monitor", "rules", "--cluster", "gb200-nvl72", "--out", str(tmp_path / "a"),
                 "--json")
    assert result.exit_code == 0 and json.loads(result.stdout)["prometheus_major"] == 3
    message = bad("monitor", "rules", "--cluster", "gb200-nvl72", "--out",
                  str(tmp_path / "b"), "--check", "--prometheus-major", "3")
    assert "--prometheus-major" in message and "pass --prometheus-major 2" in message
    monkeypatch.setattr(promtool, "promtool_version", lambda binary: (4, 0, 0))
    message = bad("monitor", "rules", "--cluster", "gb200-nvl72", "--out",
                  str(tmp_path / "c"), "--check")
    assert message.startswith("error: --check:") and "4.x" in message


def test_check_follows_the_installed_promtool(tmp_path):
    """``monitor rules --check`` with no flag: the test values follow the promtool on PATH
    (2.x or 3.x) and both promtool runs pass."""
    from supernode.monitor import promtool

    binary = promtool.find_promtool()
    if binary is None:
        if os.environ.get("SUPERNODE_REQUIRE_TOOLS"):
            pytest.fail("promtool is required (SUPERNODE_REQUIRE_TOOLS is set) but not on PATH")
        pytest.skip("promtool not on PATH (apt-get install prometheus); CI requires it")
    result = run("monitor", "rules", "--cluster", "gb200-nvl72", "--out", str(tmp_path / "r"),
                 "--check", "--json")
    assert result.exit_code == 0, result.output
    manifest = json.loads(result.stdout)
    assert manifest["prometheus_major"] == promtool.promtool_version(binary)[0]
    assert [r["ok"] for r in manifest["promtool"]] == [True, True]


def test_counters_csv_enables_every_dcgm_field_the_rules_read(generated):
    out, _ = generated
    fields = parse_counters_csv((out / "dcgm-counters.csv").read_text())
    pack = build_pack(load_cluster("dgx-h100-superpod-su"))
    read = {m for m in pack.metrics_read() if m.startswith("DCGM_")}
    assert read <= set(fields)
    assert "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL" in fields  # not a default field
    for name, (kind, help_text) in fields.items():
        assert (kind, help_text) == field_table()[name]
        assert kind in ("gauge", "counter")


def test_dashboard_has_one_repeated_row_per_supernode(generated):
    out, _ = generated
    model = json.loads((out / "grafana-dashboard.json").read_text())
    rows = [p for p in model["panels"] if p["type"] == "row"]
    assert [r.get("repeat") for r in rows] == [None, "supernode"]
    variable = next(v for v in model["templating"]["list"] if v["name"] == "supernode")
    assert "supernode:gpu_info:dedup" in variable["query"]["query"]
    titles = [p["title"] for p in model["panels"] if p["type"] != "row"]
    assert titles[2:] == ["GPU utilisation", "NVLink traffic", "Errors", "GPU power",
                          "Rack air outlet-inlet dT"]  # air-cooled: rack air, not coolant


def test_topology_file_parses_and_covers_the_cluster(generated):
    out, _ = generated
    snap = parse_exposition((out / "topology.prom").read_text(), "topology.prom")
    names = [dict(labels)["__name__"] for labels, _, _ in snap.samples]
    assert names.count("supernode_gpu_info") == 256
    assert names.count("supernode_nic_info") == 256
    assert names.count("supernode_switch_info") == 12  # 8 leaves + 4 spines


def test_monitor_list_prints_the_rules():
    result = run("monitor", "list", "--cluster", "gb200-nvl72")
    assert result.exit_code == 0
    assert "CoolantDeltaTCritical" in result.stdout and "seed 001 §4.4" in result.stdout
    data = json.loads(run("monitor", "list", "--cluster", "gb200-nvl72", "--json").stdout)
    assert len(data["rules"]) == 23 and data["cluster"] == "gb200-nvl72"


def test_health_groups_the_example_faults_by_topology():
    result = run("health", str(EXAMPLE), "--cluster", "dgx-h100-superpod-su")
    assert result.exit_code == 0, result.output
    text = result.stdout
    assert "8 firing, 0 pending" in text
    assert text.index("LinkFaultsUnderLeafSwitch: leaf leaf03: 3 NIC links") < \
        text.index("supernode sn000 / rack rack000")
    assert "switch leaf03" in text and "port 17 discarded 50 packets" in text
    assert "NvlinkRecoveryErrors: GPU 2 of dgx-h100-superpod-su-0001" in text


def test_health_json_and_fail_on():
    result = run("health", str(EXAMPLE), "--cluster", "dgx-h100-superpod-su", "--json",
                 "--fail-on", "critical")
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    fired = {(a["alertname"], a["labels"].get("hostname", "")) for a in report["alerts"]}
    assert ("GpuXidErrorsRising", "dgx-h100-superpod-su-0003") in fired
    assert sum(1 for name, _ in fired if name == "LinkDown") == 3
    # not read by the rules: DCGM_FI_DEV_SM_CLOCK (96) and the last-Xid gauge (32 GPUs x 6)
    assert report["skipped"]["samples"] == 96 + 192
    assert "NvlinkCrcErrors" in {n["rule"] for n in report["no_data"]}
    assert run("health", str(EXAMPLE / "snapshot-0.prom"), "--fail-on", "warning").exit_code == 0


def test_health_pending_alerts_say_when_they_fire(tmp_path):
    lines = ['DCGM_FI_DEV_GPU_TEMP{gpu="0",hostname="h1"} 50']
    for k in range(3):
        value = 100 + 600 * k  # 10 NVLink CRC flit errors a second
        text = "\n".join(lines + [f'DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL{{gpu="0",'
                                  f'hostname="h1"}} {value}']) + "\n"
        (tmp_path / f"s{k}.prom").write_text(text)
    report = json.loads(run("health", str(tmp_path), "--json").stdout)
    crc = next(a for a in report["alerts"] if a["alertname"] == "NvlinkCrcErrors")
    assert crc["state"] == "pending" and crc["fires_at_s"] == 60 + 600
    # rate() over 5 minutes from 3 samples: 1,200 errors, extrapolated 10 s back to the
    # counter's zero point (Prometheus extrapolatedRate): 1,200 * 130/120 / 300 s.
    assert crc["annotations"]["summary"] == "GPU 0 of h1: 4.33 NVLink crc_flit errors/s"


def test_example_snapshots_are_what_the_script_writes(tmp_path):
    spec = importlib.util.spec_from_file_location("make_snapshots", EXAMPLE.parent /
                                                  "make_snapshots.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for path in module.main(tmp_path):
        assert path.read_text() == (EXAMPLE / path.name).read_text(), path.name


@pytest.mark.parametrize("content, message", [
    ('DCGM_FI_DEV_GPU_TEMP{gpu="0" 52\n', "line 1: malformed sample"),
    ("DCGM_FI_DEV_GPU_TEMP{" + ",".join(f'l{i}="v"' for i in range(80)) + "} 1\n",
     "80 labels; the limit is 64"),
    ("DCGM_FI_DEV_GPU_TEMP 1\nDCGM_FI_DEV_GPU_TEMP 2\n", "line 2: duplicate series"),
    ("\x00\x01\xff garbage", "not UTF-8"),
])
def test_health_refuses_bad_snapshots(tmp_path, content, message):
    path = tmp_path / "bad.prom"
    path.write_bytes(content.encode("latin-1"))
    line = bad("health", str(path))
    assert message in line and "bad.prom" in line


def test_health_input_errors(tmp_path):
    stamped, bare = tmp_path / "a.prom", tmp_path / "b.prom"
    stamped.write_text("DCGM_FI_DEV_GPU_TEMP 1 1700000000000\n")
    bare.write_text("DCGM_FI_DEV_GPU_TEMP 1\n")
    assert "timestamps in every snapshot or in none" in bad("health", str(stamped), str(bare))
    assert "no such file" in bad("health", str(tmp_path / "missing.prom"))
    (tmp_path / "empty").mkdir()
    assert "holds no *.prom files" in bad("health", str(tmp_path / "empty"))
    assert "--fail-on" in bad("health", str(bare), "--fail-on", "sometimes")
    assert "--interval" in bad("health", str(bare), "--interval", "0")
    assert "--prometheus-major" in bad("health", str(bare), "--prometheus-major", "4")
    assert "no such file or preset" in bad("health", str(bare), "--cluster", "nope")


def test_monitor_rules_input_errors(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert "--out" in bad("monitor", "rules", "--cluster", "hgx-h100", "--out", str(blocker))
    config = tmp_path / "c.yaml"
    config.write_text("thresholds: {coolant_delta_t_fault_c: -1}\n")
    line = bad("monitor", "rules", "--cluster", "hgx-h100", "--out", str(tmp_path / "o"),
               "--config", str(config))
    assert "thresholds.coolant_delta_t_fault_c" in line
    assert not (tmp_path / "o").exists()  # nothing half-written

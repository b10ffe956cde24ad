"""The memory section of ``design`` and ``check``: when it appears, what the three memory
rules measure (each against the memory model computed independently here), the stage's
cost, the report section, and a bad ``memory:`` block refused before any stage."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import pytest
from typer.testing import CliRunner

from supernode.cluster.load import load_cluster
from supernode.commands import app, register_all
from supernode.design.memory import memory_results
from supernode.memory.defaults import fabric_defaults
from supernode.memory.model import memory_model
from supernode.report.all_sections import build_sections
from supernode.report.markdown import block_md
from supernode.report.sections_memory import memory_section
from supernode.rules import RULES, Facts
from supernode.rules.pack import settings
from supernode.units import NS

PRESETS = resources.files("supernode") / "data" / "clusters"


def _cluster_file(tmp_path: Path, preset: str, memory_yaml: str) -> Path:
    """The preset's cluster file with a ``memory:`` block appended."""
    text = (PRESETS / f"{preset}.yaml").read_text(encoding="utf-8")
    path = tmp_path / f"{preset}-memory.yaml"
    path.write_text(text.rstrip() + "\n" + memory_yaml, encoding="utf-8")
    return path


def _finding(cluster, rule_id: str):
    """The rule's outcome on ``cluster``'s memory section (the rules read nothing else)."""
    facts = Facts(cluster=cluster, workload={}, topology={}, facility={},
                  memory=memory_results(cluster))
    return RULES[rule_id].evaluate(facts, settings()[rule_id].threshold)


def test_section_only_when_the_design_says_something_about_memory(tmp_path):
    assert memory_results(load_cluster("hgx-h100")) is None  # x86 host, no memory: block
    for rule_id in ("remote_memory_latency", "memory_feeds_interconnect",
                    "remote_stream_link_load"):
        assert _finding(load_cluster("hgx-h100"), rule_id).status == "not_applicable"
    assert memory_results(load_cluster("gb200-nvl72"))["source"] == "data for Grace"
    own = load_cluster(_cluster_file(tmp_path, "hgx-h100", "memory: {line_bytes: 64}\n"))
    assert memory_results(own)["source"] == "memory block"


def _one_way_ns(cluster, tier: str) -> float:
    """One-way latency of the accelerators' ``tier``, from the model's round trip."""
    model = memory_model(cluster)
    acc = model.kinds[0]
    path = next(p for p in model.paths if p.requester == p.target == acc.name
                and p.tier == tier)
    directory_s = float(fabric_defaults()["directory_latency_ns"]) * NS
    return (path.latency_s - directory_s - acc.local_latency_s) / 2 / NS


def test_remote_latency_is_judged_on_the_farthest_tier_one_way():
    nvl72 = load_cluster("gb200-nvl72")
    out = _finding(nvl72, "remote_memory_latency")
    assert out.status == "pass"
    assert out.measured == pytest.approx(_one_way_ns(nvl72, "same switch"))
    # cloudmatrix384's cross-tier path climbs L1 -> L2 -> L1: over a microsecond one-way
    cm = load_cluster("cloudmatrix384")
    out = _finding(cm, "remote_memory_latency")
    far = _one_way_ns(cm, "cross tier")
    assert far > 1000 and out.status == "fail" and out.severity == "warning"
    assert out.measured == pytest.approx(far)
    assert f"margin {100 * (1000 - far) / 1000:+.1f}% of the limit" in out.detail
    assert "same switch" in out.fix


def test_memory_that_cannot_feed_its_link_fails(tmp_path):
    ok = _finding(load_cluster("gb200-nvl72"), "memory_feeds_interconnect")
    assert ok.status == "pass" and ok.measured == pytest.approx(512 / 450)  # Grace on C2C
    slow = load_cluster(_cluster_file(tmp_path, "gb200-nvl72", (
        "memory:\n  units:\n    - {unit: cpu, bandwidth_gbyte_per_s: 300}\n")))
    out = _finding(slow, "memory_feeds_interconnect")
    assert out.status == "fail" and out.measured == pytest.approx(300 / 450)
    assert "Grace (cpu)" in out.detail and "450 GB/s" in out.fix


def test_interleaving_loads_the_link_and_by_unit_does_not(tmp_path):
    by_unit = _finding(load_cluster("gb200-nvl72"), "remote_stream_link_load")
    assert by_unit.status == "pass" and by_unit.measured == 0.0
    inter = load_cluster(_cluster_file(tmp_path, "gb200-nvl72",
                                       "memory: {mapping: interleaved}\n"))
    model = memory_model(inter)
    acc = model.kinds[0]
    remote = next(p for p in model.paths if p.requester == p.target == acc.name
                  and p.tier == "same switch")
    expected = (acc.count - 1) / acc.count * acc.bandwidth_bytes_per_s \
        / remote.bandwidth_bytes_per_s
    out = _finding(inter, "remote_stream_link_load")
    assert out.status == "fail" and out.measured == pytest.approx(expected)
    assert expected > settings()["remote_stream_link_load"].threshold
    assert "by_unit" in out.fix and out.predicted_value == 0.0


def test_report_has_the_memory_section_only_with_memory():
    build_sections  # noqa: B018  (imports the section modules: registers memory's)
    results = {"memory": memory_results(load_cluster("gb200-nvl72"))}
    section = memory_section(results)
    assert section is not None and len(section.blocks) == 5  # space, remote, 2 tables, assumed
    assert len(section.blocks[3].rows) == len(results["memory"]["paths"])
    text = "\n".join(line for block in section.blocks for line in block_md(block, results))
    assert "500 ns" in text and "Grace" in text and "same switch" in text
    assert memory_section({"memory": None}) is None and memory_section({}) is None


def _check(*args: str):
    register_all()
    return CliRunner().invoke(app, ["check", *args])


def test_check_runs_the_memory_rules_and_refuses_a_bad_block(tmp_path):
    bad = _cluster_file(tmp_path, "gb200-nvl72", "memory:\n  units:\n    - {unit: matrix}\n")
    out = _check("--cluster", str(bad), "--workload", "llama3-70b", "--no-simulate",
                 "--quiet")
    assert out.exit_code == 2
    assert out.output.count("error:") == 1 and "memory.units[0].unit" in out.output
    assert "Traceback" not in out.output
    inter = _cluster_file(tmp_path, "gb200-nvl72", "memory: {mapping: interleaved}\n")
    out = _check("--cluster", str(inter), "--workload", "llama3-70b", "--no-simulate",
                 "--json")
    assert out.exit_code in (0, 1), out.output
    findings = {f["id"]: f for f in json.loads(out.stdout)["findings"]}
    assert findings["remote_stream_link_load"]["status"] == "fail"
    assert findings["remote_stream_link_load"]["severity"] == "warning"
    assert findings["remote_memory_latency"]["status"] == "pass"
    assert findings["memory_feeds_interconnect"]["seed"] == "seed 003 §2.1"

"""`supernode memory`: the map summary, the check's exit codes, litmus, bad input."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from supernode.commands import app, register_all


def _run(*args: str):
    register_all()
    return CliRunner().invoke(app, ["memory", *args])


@pytest.mark.parametrize("preset", ["gb200-nvl72", "cloudmatrix384"])
def test_map_summary_of_the_presets_as_a_whole_process(preset: str) -> None:
    """The whole process answers (its time, <= 2 s by issue 28, is a row of
    benchmarks/wait_bench.py, not a unit test's)."""
    done = subprocess.run([sys.executable, "-m", "supernode.cli", "memory", "--cluster",
                           preset], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert "global address map" in done.stdout and "same switch" in done.stdout


def test_map_json_keys() -> None:
    out = _run("--cluster", "gb200-nvl72", "--json")
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert {"cluster", "mapping", "global_bytes", "kinds", "regions", "translation",
            "paths", "churn"} <= set(data)
    assert data["kinds"][1]["name"] == "Grace"
    tiers = {(p["requester"], p["target"], p["tier"]) for p in data["paths"]}
    assert ("Grace", "gb200", "same host") in tiers


def test_map_json_review_is_the_design_memory_section(tmp_path) -> None:
    """Issue 26: ``map --json`` -> ``review`` is the review's memory section (one-way
    latencies, the farthest tier, the streaming link load) less its source, on a
    by_unit preset and on an interleaved map whose streaming load is not 0."""
    from pathlib import Path

    from supernode.cluster.load import load_cluster
    from supernode.design.memory import memory_results

    presets = Path(__file__).parent.parent / "src" / "supernode" / "data" / "clusters"
    text = (presets / "gb200-nvl72.yaml").read_text(encoding="utf-8")
    interleaved = tmp_path / "nvl72-interleaved.yaml"
    interleaved.write_text(text.rstrip() + "\nmemory: {mapping: interleaved}\n",
                           encoding="utf-8")
    for cluster in ("gb200-nvl72", str(interleaved)):
        review = json.loads(_run("--cluster", cluster, "--json").stdout)["review"]
        design = memory_results(load_cluster(cluster))
        assert design.pop("source") in ("data for Grace", "memory block")
        assert review == design
    # interleaved over 72 units: 71/72 of the accesses remote at 8 TB/s local over 800 GB/s
    assert review["remote"]["remote_share"] == 71 / 72
    assert review["remote"]["stream_link_load"] == pytest.approx(71 / 72 * 10, rel=1e-12)
    shown = _run("--cluster", str(interleaved)).stdout
    assert "one-way ns" in shown
    assert "link load 986%" in shown and "500 ns one-way" in shown


def test_check_exit_codes_and_minimal_history() -> None:
    ok = _run("check", "--cluster", "gb200-nvl72", "--seed", "1")
    assert ok.exit_code == 0 and "consistent" in ok.stdout
    bad = _run("check", "--cluster", "gb200-nvl72", "--seed", "1", "--inject",
               "lost-invalidation")
    assert bad.exit_code == 1 and "INCONSISTENT" in bad.stdout
    assert "minimal failing history" in bad.stdout
    data = json.loads(_run("check", "--cluster", "cloudmatrix384", "--seed", "2", "--inject",
                           "flow-control", "--json").stdout)
    assert data["consistent"] is False and data["minimal_history"]


def test_check_runs_the_clusters_update_policy(tmp_path) -> None:
    from pathlib import Path

    presets = Path(__file__).parent.parent / "src" / "supernode" / "data" / "clusters"
    text = (presets / "gb200-nvl72.yaml").read_text(encoding="utf-8")
    path = tmp_path / "nvl72-update.yaml"
    path.write_text(text.rstrip() + "\nmemory: {policy: update}\n", encoding="utf-8")
    ok = _run("check", "--cluster", str(path), "--seed", "1")
    assert ok.exit_code == 0, ok.output
    assert "MESI update, no fault injected" in ok.stdout and "SWMR" not in ok.stdout
    bad = _run("check", "--cluster", str(path), "--seed", "1", "--inject",
               "lost-invalidation", "--json")
    data = json.loads(bad.stdout)
    assert bad.exit_code == 1 and data["policy"] == "update" and data["minimal_history"]


@pytest.mark.parametrize(("args", "where"), [
    (["check", "--cluster", "gb200-nvl72", "--units", "-1"], "--units"),
    (["check", "--cluster", "gb200-nvl72", "--units", "9"], "--units"),
    (["check", "--cluster", "gb200-nvl72", "--inject", "bitflip"], "--inject"),
    (["check"], "--cluster"),
    (["--cluster", "no-such-cluster"], "no such file or preset"),
    (["frobnicate", "--cluster", "gb200-nvl72"], "ACTION"),
    (["litmus"], "--out"),
    (["published", "--units", "0"], "--units"),
])
def test_bad_input_is_one_error_line(args: list[str], where: str) -> None:
    out = _run(*args)
    assert out.exit_code == 2
    lines = [line for line in out.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:") and where in lines[0]


def test_litmus_program_runs_and_imports_back(tmp_path) -> None:
    folder = tmp_path / "litmus"
    out = _run("litmus", "--out", str(folder))
    assert out.exit_code == 0, out.output
    assert sorted(p.name for p in folder.iterdir()) == ["README.md", "litmus.py"]
    results = folder / "litmus-results.json"
    done = subprocess.run([sys.executable, str(folder / "litmus.py"), "--iterations", "40",
                           "--out", str(results)], capture_output=True, text=True,
                          check=False, timeout=120)
    assert done.returncode == 0, done.stderr
    data = json.loads(results.read_text())
    assert set(data["tests"]) == {"MP", "SB", "IRIW"}
    assert all(sum(t["outcomes"].values()) == 40 for t in data["tests"].values())
    imported = CliRunner().invoke(app, ["import", "litmus", str(results), "--json"])
    assert imported.exit_code == 0, imported.output
    rows = json.loads(imported.stdout)["tests"]
    assert {r["test"] for r in rows} == {"MP", "SB", "IRIW"}


def test_place_shows_the_saving_and_map_json_has_coherence() -> None:
    out = _run("place", "--cluster", "cloudmatrix384", "--seed", "1", "--json")
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert data["saving"] > 0.3 and data["units"] == 16 and data["group"] == 8
    rows = json.loads(_run("--cluster", "gb200-nvl72", "--json").stdout)["coherence"]
    assert {r["sharers"] for r in rows} == {2, 4, 8}
    assert all(r["messages_per_write"] >= 1 for r in rows)


def _norm(line: str) -> str:
    return " ".join("".join(" " if "\u2500" <= c <= "\u257f" else c for c in line).split())


def test_docs_examples_are_the_real_output() -> None:
    """Every `$ supernode memory ...` example of docs/memory.md prints what it shows."""
    import shlex
    from pathlib import Path

    doc = (Path(__file__).parent.parent / "docs" / "memory.md").read_text(encoding="utf-8")
    blocks = doc.split("```")[1::2]
    examples = 0
    for block in blocks:
        lines = block.strip("\n").splitlines()
        if not lines or not lines[0].startswith("$ supernode memory"):
            continue
        examples += 1
        argv = shlex.split(lines[0][2:])[1:]
        register_all()
        result = CliRunner().invoke(app, argv)
        produced = {_norm(line) for line in result.output.splitlines()}
        for shown in lines[1:]:
            if _norm(shown):
                assert _norm(shown) in produced, shown
    assert examples == 2

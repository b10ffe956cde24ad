"""Examples are tests: examples/netsim/README.md commands and run_examples.py, checked."""

from __future__ import annotations

import importlib.util
import json
import re
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from supernode.commands import app, register_all

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples" / "netsim"


def readme_commands() -> list[str]:
    text = (EXAMPLES / "README.md").read_text()
    return [line.strip() for block in re.findall(r"```\n(.*?)```", text, re.S)
            for line in block.splitlines() if line.strip().startswith("supernode simulate")]


def simulate(command: str, tmp_path: Path) -> dict:
    args = shlex.split(command)[1:]
    args = [str(tmp_path / a) if a.startswith("out/") else
            str(ROOT / a) if a.startswith("examples/") else a for a in args]
    register_all()
    result = CliRunner().invoke(app, [*args, "--json"])
    assert result.exit_code == 0, (command, result.stderr)
    return json.loads(result.stdout)


def test_readme_lists_commands() -> None:
    assert len(readme_commands()) == 9


@pytest.mark.parametrize("command", readme_commands())
def test_readme_command_runs(command: str, tmp_path: Path) -> None:
    data = simulate(command, tmp_path)
    assert data["step_time_s"] > 0 and data["events"] > 0
    if "--plot" in command:
        assert any(p.endswith("utilization.png") for p in data["plots"])
    if "--placement" in command:
        assert [j["name"] for j in data["jobs"]] == ["llama-70b", "llama-8b"]
    if "--fail" in command:
        assert data["failures"]


def test_readme_numbers_for_the_training_step(tmp_path: Path) -> None:
    two_to_one = readme_commands()[5]
    assert "2to1" in two_to_one and "llama3-70b" in two_to_one
    data = simulate(two_to_one, tmp_path)
    # the README says the estimate, which charges the per-leaf port ratio only to the
    # traffic that crosses the uplinks, agrees with the simulation on 2:1 within a few %
    assert 0.9 < data["step_time_s"] / data["estimate_step_time_s"] < 1.12


def test_run_examples_reproduces_the_seed_findings(tmp_path: Path, capsys) -> None:
    spec = importlib.util.spec_from_file_location("run_examples",
                                                  EXAMPLES / "run_examples.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    rows = module.main(tmp_path)
    out = capsys.readouterr().out
    assert "oversubscription" in out and "ECMP collisions" in out
    # 2:1 (4 leaves of 32 hosts on 16 uplinks per rail): the all-to-all slows by
    # 32/16 * 96/128 (spray), the halves exchange by 32/16
    ratio = rows["a2a-rail0 2to1 spray"] / rows["a2a-rail0 1to1 spray"]
    assert ratio == pytest.approx(32 / 16 * 96 / 128 * 128 / 127, rel=0.02)
    halves = rows["halves-exchange 2to1 spray"] / rows["halves-exchange 1to1 spray"]
    assert halves == pytest.approx(32 / 16, rel=0.02)
    assert rows["hot spine links 2to1 spray"] > 0
    # ECMP bursts lose bandwidth; staggering restores > 90 %; adaptive routing has it all
    assert rows["burst ecmp mean"] < 0.7
    assert rows["staggered ecmp mean"] > 0.9
    assert rows["burst adaptive mean"] > 0.95
    assert rows["burst adaptive makespan"] < rows["burst ecmp makespan"]
    for sub in ("cross-leaf-2to1", "burst-ecmp", "staggered-ecmp"):
        assert (tmp_path / sub / "timeline.png").exists()
    assert (tmp_path / "cross-leaf-2to1" / "utilization.png").exists()

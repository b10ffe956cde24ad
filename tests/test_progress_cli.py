"""Progress on stderr: one line per step when output is not a terminal, nothing with
--quiet or --json, and stdout untouched (commands/_progress.py)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from supernode.commands import app, register_all

NCCL = Path(__file__).parent / "data" / "nccl_tests"


def run(*args: str):
    register_all()
    return CliRunner().invoke(app, list(args))


def test_check_prints_one_line_per_stage_when_piped_and_quiet_silences_it():
    """Under the test runner stderr is no terminal (as in CI or ``| tee``): each stage is
    one line, ``check: i/12 stages, <stage> (t s)``, once the run has lasted a second (a
    quick run or bad input stays silent, one ``error:`` line); stdout keeps only the
    report."""
    result = run("check", "--no-simulate")
    assert result.exit_code in (0, 1), result.output
    lines = [line for line in result.stderr.splitlines() if line.startswith("check: ")]
    # the first line once the run has lasted SILENT_FOR_S (the plan stage takes ~3 s)
    assert len(lines) >= 3 and all(" stages, " in line for line in lines)
    assert any(", rules (" in line for line in lines)
    assert "stages" not in result.stdout
    quiet = run("check", "--no-simulate", "--quiet")
    assert quiet.stderr == "" and quiet.stdout == result.stdout


def test_compare_reports_each_file_and_json_stays_clean(monkeypatch):
    import supernode.commands._progress as shown

    monkeypatch.setattr(shown, "SILENT_FOR_S", 0.0)   # two small files take < 1 s
    files = [str(NCCL / "oci-gb300-allreduce-1rack.txt"),
             str(NCCL / "oci-gb300-alltoall-1rack.txt")]
    result = run("compare", "--cluster", "gb300-nvl72", *files)
    assert result.exit_code == 0, result.output
    lines = [line for line in result.stderr.splitlines() if line.startswith("compare: ")]
    assert [line.split(" (")[0] for line in lines] == [
        "compare: 1/2 files, oci-gb300-allreduce-1rack.txt",
        "compare: 2/2 files, oci-gb300-alltoall-1rack.txt"]
    as_json = run("compare", "--cluster", "gb300-nvl72", *files, "--json")
    assert as_json.stderr == "" and json.loads(as_json.stdout)["collectives"]


def test_counting_commands_print_a_few_lines_when_piped(monkeypatch):
    """schedule (events), reliability (Monte Carlo runs) and simulate (tasks) report through
    the same progress as design: piped, a line when the step changes, at most one more per
    LINE_EVERY_S while it keeps its name, and the last count; --json silences it."""
    import supernode.commands._progress as shown

    monkeypatch.setattr(shown, "SILENT_FOR_S", 0.0)
    monkeypatch.setattr(shown, "LINE_EVERY_S", 3600.0)
    sched = run("schedule", "--cluster", "gb200-nvl72-superpod", "--trace", "synthetic",
                "--jobs", "300", "--policy", "first-fit", "--policy", "best-fit")
    assert sched.exit_code == 0, sched.output
    lines = [x for x in sched.stderr.splitlines() if x.startswith("schedule: ")]
    policies = [x.split(" events, ")[1].split(" (")[0] for x in lines]
    assert set(policies) == {"first-fit", "best-fit"} and len(lines) <= 5, lines
    done, total = lines[-1].split(": ")[1].split(" ")[0].split("/")
    assert done == total == "1,200"      # 2 policies x 2 events x 300 jobs
    rel = run("reliability", "--cluster", "gb200-nvl72", "--workload", "llama3-8b",
              "--runs", "40")
    assert rel.exit_code == 0, rel.output
    lines = [x for x in rel.stderr.splitlines() if x.startswith("reliability: ")]
    assert 1 <= len(lines) <= 2 and lines[-1].startswith("reliability: 40/40 runs, Monte Carlo")
    quiet = run("reliability", "--cluster", "gb200-nvl72", "--workload", "llama3-8b",
                "--runs", "40", "--json")
    assert quiet.stderr == ""

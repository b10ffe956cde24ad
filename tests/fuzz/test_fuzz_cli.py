"""Fuzz suite: every command, mutated documents and flags, hostile paths, bounded memory.

The commands are discovered from the typer app at run time (:func:`fuzz_cases.commands`), so
commands added by later issues are fuzzed too. Each case runs in a persistent worker
process under a 4 GiB address-space limit and a 60 s time limit (:mod:`fuzz_harness`), in a
fresh folder, and must keep the CLI's promises (:func:`fuzz_harness.problems`): exit 0 or 2,
never a traceback, one ``error:`` line on exit 2 and nothing left behind.

Budget: ``FUZZ_EXAMPLES`` cases per command. The CI budget, what ``pytest`` and
``.ci/run`` run: 64 per command under the derandomised ``ci`` profile (40 for the three
commands whose cases run the planner: :data:`HEAVY_CI_EXAMPLES`), the same cases every
run (about 1,730 invocations over 31 commands, about 3 CPU minutes on an idle machine, shared by the
pytest-xdist workers: each starts its own fuzz worker process). The long profile is a
separate command that draws fresh random cases every run (one to two hours on 2 cores)::

    HYPOTHESIS_PROFILE=explore FUZZ_EXAMPLES=2000 .venv/bin/pytest tests/fuzz

(``HYPOTHESIS_PROFILE=explore`` alone runs 300 per command.) With ``FUZZ_LOG=FILE`` every
case appends one JSON line (command, exit code, seconds, what went wrong) to ``FILE``, for
counts per command (:func:`fuzz_harness.outcome_record`).
"""

from __future__ import annotations

import itertools
import json
import os
import shlex
import shutil
from pathlib import Path

import pytest
from fuzz_cases import Case, commands, invocation
from fuzz_harness import Outcome, Worker, outcome_record, problems, run_case
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

COMMANDS = commands()
PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "ci")
EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", 300 if PROFILE == "explore" else 48))
#: The CI budget of the commands whose every case runs the planner, a design review, a
#: sweep or a rule pack (0.4-1.9 s a case against 0.1-0.3 s elsewhere: `check` took 76 s,
#: `monitor rules` 53 s, `sweep` 33 s, `size` 23 s at the budgets before (`size` 24 s at
#: 32 cases: each cross-checks its sizing with a plan search), pytest
#: --durations on a 2-core machine): fewer derandomised cases, so that .ci/run stays in
#: its 10 minutes; the long profile and an explicit FUZZ_EXAMPLES give them the full count.
HEAVY_CI_EXAMPLES = {"fit": 40, "check": 16, "design": 40, "serve": 8, "monitor rules": 24,
                     "sweep": 24, "size": 16}


def examples_for(command_id: str) -> int:
    """Cases to run for ``command_id`` under the current profile and budget."""
    if PROFILE == "explore" or "FUZZ_EXAMPLES" in os.environ:
        return EXAMPLES
    return min(EXAMPLES, HEAVY_CI_EXAMPLES.get(command_id, EXAMPLES))
LOG = os.environ.get("FUZZ_LOG")


@pytest.fixture(scope="module")
def worker():
    """One worker process for the module (restarted by itself after a crash)."""
    process = Worker()
    yield process
    process.close()


def report(case: Case, outcome: Outcome, found: list[str]) -> str:
    """A failure message that reproduces the case."""
    files = {name: (content if isinstance(content, str) else content[:300])
             for name, content in case.files.items()}
    return (f"\n$ supernode {shlex.join(case.argv)}\nfiles: {files}\nexit {outcome.code} "
            f"in {outcome.wall_s:.2f} s\nstdout: {outcome.stdout[-1500:]}\nstderr: "
            f"{outcome.stderr[-3000:]}\n" + "\n".join(f"PROBLEM: {p}" for p in found))


def test_every_command_is_discovered() -> None:
    """The suite sees the app's commands (and would see new ones: nothing is listed)."""
    ids = {c.id for c in COMMANDS}
    assert {"topology", "estimate", "plan", "simulate", "sweep", "collective",
            "catalog show", "import nvidia-smi-topo", "facility"} <= ids
    assert all(c.params or c.id in ("catalog list",) for c in COMMANDS if c.id != "schema")


@pytest.mark.parametrize("command", COMMANDS, ids=[c.id for c in COMMANDS])
def test_fuzz_command(command, worker: Worker, tmp_path: Path) -> None:
    """Mutated documents and flags for one command: every promise holds on every case."""
    counter = itertools.count()

    @settings(max_examples=examples_for(command.id), deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                     HealthCheck.filter_too_much])
    @given(st.data())
    def check(data: st.DataObject) -> None:
        case = data.draw(invocation(command), label="case")
        folder = tmp_path / f"case{next(counter)}"
        outcome, before, after = run_case(worker, case, folder)
        found = problems(case, outcome, before, after)
        if LOG:
            with open(LOG, "a", encoding="utf-8") as handle:
                record = outcome_record(command.id, outcome, found, case.argv)
                handle.write(json.dumps(record) + "\n")
        assert not found, report(case, outcome, found)
        shutil.rmtree(folder, ignore_errors=True)

    check()

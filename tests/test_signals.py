"""SIGTERM and SIGINT in the middle of ``simulate --plot`` and ``sweep --workers 2``.

Each run is a real process. The signal is sent to it alone (not to its process group:
the harder case, where the CLI itself must stop its workers) at a moment where there is
something to clean up: while the plots are being written into their staging folder, or
while the sweep's workers are busy. Afterwards there must be no temporary file, no
staging folder, no output folder, no live child process, and the exit code of the shell's
convention (143 for SIGTERM, 130 for SIGINT), with no traceback.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

SIGNALS = {"SIGTERM": (signal.SIGTERM, 143), "SIGINT": (signal.SIGINT, 130)}


def _start(args: list[str], cwd: Path) -> subprocess.Popen[str]:
    def defaults() -> None:  # a background shell may have left SIGINT ignored
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)

    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    return subprocess.Popen([sys.executable, "-m", "supernode.cli", *args], cwd=cwd,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=defaults, env=env)


def descendants(pid: int) -> set[int]:
    """Every live process below ``pid`` (from /proc)."""
    parents: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8") as stream:
                fields = stream.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z":
            parents.setdefault(int(fields[1]), []).append(int(entry))
    out, todo = set(), [pid]
    while todo:
        for child in parents.get(todo.pop(), []):
            if child not in out:
                out.add(child)
                todo.append(child)
    return out


def alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie does not count)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as stream:
            return stream.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def leftovers(folder: Path) -> list[str]:
    """Temporary files and staging folders anywhere under ``folder``."""
    return [str(p) for p in folder.rglob("*") if p.name.endswith((".tmp", ".staging"))
            or ".staging" in p.name]


def wait_for(condition, timeout_s: float, process: subprocess.Popen) -> bool:
    """Poll ``condition`` every 5 ms while ``process`` runs; True once it holds."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and process.poll() is None:
        if condition():
            return True
        time.sleep(0.005)
    return False


def finish(process: subprocess.Popen, children: set[int]) -> tuple[int, str, list[int]]:
    """Wait for the process; then give its children 10 s to be gone. A process still
    running (or an orphan holding its pipes) after 120 s is killed, with its children,
    and the test fails: nothing is left running either way."""
    try:
        _, err = process.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        for pid in [process.pid, *children, *descendants(process.pid)]:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        process.communicate()
        pytest.fail("the process or its orphaned workers were still running after 120 s")
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(alive(c) for c in children):
        time.sleep(0.05)
    orphans = sorted(c for c in children if alive(c))
    for pid in orphans:  # reported by the caller; not left running
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    return process.returncode, err, orphans


@pytest.mark.parametrize("name", list(SIGNALS))
def test_signal_while_simulate_writes_plots(tmp_path: Path, name: str) -> None:
    sig, code = SIGNALS[name]
    out = tmp_path / "plots"
    args = ["simulate", "--cluster", "dgx-h100-superpod-su", "--workload", "llama3-70b",
            "--tp", "8", "--pp", "4", "--global-batch", "256", "--plot", str(out), "--quiet"]
    caught = False
    for _attempt in range(6):  # the staging folder lives ~0.7 s; catch it
        process = _start(args, tmp_path)
        staged = wait_for(lambda: any(".staging" in p.name for p in tmp_path.iterdir()),
                          120, process)
        children = descendants(process.pid)
        if staged:
            process.send_signal(sig)
        returncode, err, orphans = finish(process, children)
        if staged and out.exists():  # the signal came after the set was committed: whole
            assert {p.name for p in out.iterdir()} >= {"timeline.png", "utilization.png"}
            assert leftovers(tmp_path) == [] and not orphans
            shutil.rmtree(out)
            continue
        caught = staged
        if staged:
            break
    assert caught, "the plots' staging folder was never caught with a signal"
    assert returncode == code, (returncode, err[-2000:])
    assert "Traceback" not in err
    assert not out.exists() and leftovers(tmp_path) == []
    assert not orphans


def interrupt_once_forked(args: list[str], cwd: Path, name: str, what: str,
                          children_needed: int = 1, settle_s: float = 0.0) -> None:
    """Start the command, wait for its ``children_needed`` child processes (``what``),
    let it run ``settle_s`` more, send signal ``name`` to it alone; then it must exit as
    interrupted, with no traceback and no child left running."""
    sig, code = SIGNALS[name]
    process = _start(args, cwd)
    forked = wait_for(lambda: len(descendants(process.pid)) >= children_needed, 120, process)
    assert forked, f"{what} never started"
    time.sleep(settle_s)
    children = descendants(process.pid)
    process.send_signal(sig)
    returncode, err, orphans = finish(process, children)
    assert returncode == code, (returncode, err[-2000:])
    assert "Traceback" not in err
    assert not orphans, f"orphaned {what}: {orphans}"


@pytest.mark.parametrize("name", list(SIGNALS))
def test_signal_while_sweep_workers_run(tmp_path: Path, name: str) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(yaml.safe_dump({
        "name": "sig", "base": {"cluster": "dgx-h100-superpod-su", "workload": "llama3-70b"},
        "axes": {"plan.global_batch": [128, 256, 512, 1024, 2048, 4096]}}), encoding="utf-8")
    out = tmp_path / "results"
    interrupt_once_forked(["sweep", str(spec), "--workers", "2", "--out", str(out),
                           "--quiet"], tmp_path, name, "the pool's workers",
                          children_needed=2, settle_s=1.0)  # let them pick up variants
    assert not out.exists() and leftovers(tmp_path) == []


@pytest.mark.parametrize("name", list(SIGNALS))
def test_signal_while_the_monte_carlo_workers_run(tmp_path: Path, name: str) -> None:
    """The reliability Monte Carlo's pool (the same fan-out as the sweep's) is stopped at
    once, its pending runs cancelled."""
    interrupt_once_forked(["reliability", "--cluster", "dgx-h100-superpod-su", "--workload",
                           "llama3-70b", "--runs", "100000", "--days", "365", "--workers", "2",
                           "--json"],
                          tmp_path, name, "the Monte Carlo's workers", children_needed=2,
                          settle_s=1.0)


@pytest.mark.parametrize("name", list(SIGNALS))
def test_signal_while_the_plan_search_runs_on_forked_workers(tmp_path: Path, name: str
                                                             ) -> None:
    """The search's forked worker is ended with its parent: signalled alone, the parent
    kills and reaps it before exiting as interrupted."""
    interrupt_once_forked(["plan", "--cluster", "gb200-nvl72-superpod", "--workload",
                           "deepseek-v3", "--global-batch", "1024", "--workers", "2",
                           "--json"], tmp_path, name, "the search's worker")


@pytest.mark.parametrize("name", list(SIGNALS))
def test_signal_while_design_runs_its_stages_beside(tmp_path: Path, name: str) -> None:
    """design forks the scheduling replay (and its search workers): signalled alone, it
    ends them, writes no report folder and exits as interrupted."""
    out = tmp_path / "report"
    interrupt_once_forked(["design", "--out", str(out), "--quiet", "--no-simulate"],
                          tmp_path, name, "design's scheduling replay",
                          settle_s=0.3)  # into the plan search
    assert not out.exists() and leftovers(tmp_path) == []

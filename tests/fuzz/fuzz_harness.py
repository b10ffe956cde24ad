"""Running fuzz cases and judging them.

:class:`Worker` keeps one worker process (:mod:`fuzz_worker`) alive across cases, under a
memory limit, and restarts it after a crash or a time-out. :func:`run_case` creates a
case's files in a fresh folder, runs it there, and returns the outcome with a snapshot of
the folder before and after; :func:`problems` lists what the outcome breaks:

* the exit code is 0 or 2 (1 is a defect reported as an internal error; a crash, a
  time-out or a memory error is a defect);
* no traceback on stdout or stderr;
* exit 2: exactly one line on stderr, starting ``error:``, and nothing on stdout; the
  folder is exactly as it was (no output file or folder left, nothing changed);
* exit 0: no temporary file or staging folder left; with ``--json``, stdout is one JSON
  document (finite numbers only).
"""

from __future__ import annotations

import json
import os
import select
import stat
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fuzz_cases import Case

WORKER = Path(__file__).with_name("fuzz_worker.py")
#: The memory cap of every invocation (the issue's: 4 GiB of address space).
MEMORY_LIMIT_BYTES = 4 * 2**30
#: Longest an invocation may run before it counts as a hang.
TIMEOUT_S = 60.0
TEMPORARY = (".tmp", ".staging")


@dataclass
class Outcome:
    """What one invocation did."""

    code: int
    stdout: str
    stderr: str
    wall_s: float
    note: str = ""


class Worker:
    """A persistent worker process under ``RLIMIT_AS`` (restarted when it dies)."""

    def __init__(self, limit_bytes: int = MEMORY_LIMIT_BYTES, timeout_s: float = TIMEOUT_S):
        self.limit_bytes, self.timeout_s = limit_bytes, timeout_s
        self.process: subprocess.Popen[str] | None = None

    def _start(self) -> None:
        env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
               "MKL_NUM_THREADS": "1", "MALLOC_ARENA_MAX": "2", "SUPERNODE_TRACEBACK": "1",
               "COLUMNS": "160"}
        self.process = subprocess.Popen(
            [sys.executable, str(WORKER), str(self.limit_bytes)], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env,
            cwd=str(WORKER.parent))
        ready = self._read(120.0)
        if ready is None or not ready.get("ready"):
            raise RuntimeError("the fuzz worker did not start")

    def _read(self, timeout_s: float) -> dict[str, Any] | None:
        assert self.process is not None and self.process.stdout is not None
        ready, _, _ = select.select([self.process.stdout], [], [], timeout_s)
        if not ready:
            return None
        line = self.process.stdout.readline()
        return json.loads(line) if line else None

    def run(self, argv: list[str], cwd: Path) -> Outcome:
        """Run one invocation in ``cwd``; a dead or hung worker is an outcome, not a raise."""
        if self.process is None or self.process.poll() is not None:
            self._start()
        assert self.process is not None and self.process.stdin is not None
        self.process.stdin.write(json.dumps({"argv": argv, "cwd": str(cwd)}) + "\n")
        self.process.stdin.flush()
        reply = self._read(self.timeout_s)
        if reply is None:
            code = self.process.poll()
            self.close()
            note = f"no answer within {self.timeout_s:.0f} s (a hang)" if code is None else \
                f"the worker died (exit {code}: a crash or the memory limit)"
            return Outcome(-1, "", "", self.timeout_s, note)
        return Outcome(reply["code"], reply["stdout"], reply["stderr"], reply["wall_s"],
                       reply.get("exception", ""))

    def close(self) -> None:
        """Stop the worker process (and forget it)."""
        if self.process is not None:
            self.process.kill()
            self.process.wait()
            for stream in (self.process.stdin, self.process.stdout):
                if stream is not None:
                    stream.close()
        self.process = None


def make_files(folder: Path, files: dict[str, Any]) -> None:
    """Create a case's files (bytes), folders, FIFOs and symlinks in ``folder``."""
    for name, content in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if content == "dir":
            path.mkdir(exist_ok=True)
        elif content == "fifo":
            os.mkfifo(path)
        elif isinstance(content, str) and content.startswith("symlink:"):
            os.symlink(content[len("symlink:"):], path)
        else:
            path.write_bytes(content)


def snapshot(folder: Path) -> dict[str, tuple]:
    """Every entry under ``folder`` (symlinks not followed): kind, size, mtime, mode."""
    out: dict[str, tuple] = {}
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            path = os.path.join(root, name)
            info = os.lstat(path)
            kind = stat.S_IFMT(info.st_mode)
            size = info.st_size if stat.S_ISREG(info.st_mode) else 0
            out[os.path.relpath(path, folder)] = (kind, size, info.st_mtime_ns,
                                                  info.st_mode)
    return out


def run_case(worker: Worker, case: Case, folder: Path) -> tuple[Outcome, dict, dict]:
    """Create the case's files in ``folder``, run it there; (outcome, before, after)."""
    folder.mkdir(parents=True)
    make_files(folder, case.files)
    before = snapshot(folder)
    outcome = worker.run(case.argv, folder)
    return outcome, before, snapshot(folder)


def _json_problem(text: str) -> str | None:
    def refuse(name: str) -> None:
        raise ValueError(f"{name} in JSON output")

    try:
        json.loads(text, parse_constant=refuse)
    except ValueError as exc:
        return f"--json output is not one JSON document: {exc}"
    return None


#: Commands whose exit code 1 is a documented verdict (a failed design rule, a benchmark
#: under the gate, a firing alert), with the option that turns it on (None: always on).
VERDICT_EXITS = {"check": None, "compare": "--fail-below", "health": "--fail-on",
                 "memory": "--inject"}


def verdict_exit(argv: list[str]) -> bool:
    """True when ``argv`` runs a command that may exit 1 by design (VERDICT_EXITS)."""
    if not argv or argv[0] not in VERDICT_EXITS:
        return False
    option = VERDICT_EXITS[argv[0]]
    return option is None or any(a == option or a.startswith(option + "=") for a in argv)


def problems(case: Case, outcome: Outcome, before: dict, after: dict) -> list[str]:
    """What ``outcome`` breaks of the promises in the module docstring (empty: none)."""
    found: list[str] = []
    if outcome.note:
        found.append(outcome.note)
    if outcome.code not in (0, 2) and not (outcome.code == 1 and verdict_exit(case.argv)):
        found.append(f"exit code {outcome.code} (0 or 2 allowed)")
    if outcome.code == 1 and "internal error" in outcome.stderr:
        found.append(f"internal error: {outcome.stderr[:300]!r}")
    if "Traceback" in outcome.stdout + outcome.stderr:
        found.append("a traceback was printed")
    touched = sorted(n for n in case.inputs if n in before and after.get(n) != before[n])
    if touched:
        found.append(f"an input was replaced or removed: {touched[:3]}")
    if "PWNED" in after:
        found.append("a hostile name ran a command (PWNED exists)")
    leftovers = [p for p in after if p not in before
                 and any(t in os.path.basename(p) for t in TEMPORARY)]
    if leftovers:
        found.append(f"temporary files left: {leftovers[:3]}")
    if outcome.code == 2:
        lines = outcome.stderr.splitlines()
        if len(lines) != 1 or not lines[0].startswith("error:"):
            found.append(f"exit 2 without exactly one 'error:' line on stderr: "
                         f"{outcome.stderr[:300]!r}")
        if outcome.stdout:
            found.append(f"exit 2 with output on stdout: {outcome.stdout[:200]!r}")
        if after != before:
            changed = sorted(set(after) ^ set(before)) or \
                [k for k in after if after[k] != before.get(k)]
            found.append(f"exit 2 left the folder changed: {changed[:5]}")
    if outcome.code == 0 and "--json" in case.argv and "--help" not in case.argv:
        problem = _json_problem(outcome.stdout)
        if problem:
            found.append(problem)
    return found


def outcome_record(command: str, outcome: Outcome, found: list[str],
                   argv: list[str] | None = None) -> dict[str, Any]:
    """One case as a log record: the command, exit code, wall seconds, and whether it was
    an internal error (exit 70), over the memory cap (the worker died) or over the time
    limit, with the problems found (and ``argv`` when there are any)."""
    return {"command": command, "code": outcome.code, "wall_s": round(outcome.wall_s, 3),
            "internal": outcome.code == 70 or "internal error" in outcome.stderr,
            "memory": "died" in outcome.note or "out of memory" in outcome.stderr,
            "time": "hang" in outcome.note, "problems": found,
            "argv": argv if found else None}

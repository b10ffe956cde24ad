"""One way to measure every benchmark: what a user would see, and what the library spends.

Every case runs as a fresh process, several times (``--repeats``, 3 by default), and the
tables show medians:

* **process wall s / CPU s / peak MiB**: the whole process as ``/usr/bin/time`` reports it
  (elapsed, user + system of the process and the workers it waited for, maximum resident
  set), interpreter start-up and imports included; without ``/usr/bin/time`` they come
  from ``getrusage(RUSAGE_CHILDREN)`` (peak: the largest child so far);
* **library s**: the time the case measures around the library call itself, inside the
  process (what the library spends, without start-up);
* **load**: the 1-minute load average when each repeat starts, next to the machine's CPU
  count; on a shared machine wall time grows with the load while CPU time hardly does.

A case is either ``module:function`` of a ``benchmarks/`` script (run in a child through
``python benchmarks/harness.py --child``; the function returns a dict of figures, its
``library_s`` among them) or a plain command line (start-up benchmarks), optionally in
its own folder (``cwd``) and under an address-space limit (``memory_bytes``).

Bytecode: the toolkit's modules are compiled once before the first case
(:func:`warm_bytecode`), as any first run leaves them, even where
``PYTHONDONTWRITEBYTECODE`` is set (the children run without it): a user's second run
does not compile the sources, so neither does a measured one.
"""

from __future__ import annotations

import compileall
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
MARK = "BENCH-RESULT "
#: GNU time, for the whole-process figures (as a user measures them); else os.wait4
TIME = "/usr/bin/time" if Path("/usr/bin/time").is_file() else None


@dataclass(frozen=True)
class Case:
    """A benchmark case: ``target`` (``module:function`` in ``benchmarks/``) called with
    ``kwargs`` in a fresh process, or ``command`` (argv) run as it is."""

    name: str
    target: str = ""
    kwargs: dict[str, Any] = field(default_factory=dict)
    command: tuple[str, ...] = ()
    cwd: str | None = None
    memory_bytes: int | None = None

    def argv(self) -> list[str]:
        """The command line of one repeat."""
        if self.command:
            return list(self.command)
        return [sys.executable, str(HERE / "harness.py"), "--child", self.target,
                json.dumps(self.kwargs)]


@dataclass
class Run:
    """One repeat: whole-process figures, load at its start, what the case reported."""

    wall_s: float
    cpu_s: float
    peak_mib: float
    load: float
    result: dict[str, Any]
    returncode: int = 0
    stderr: str = ""


@dataclass
class Measured:
    """Every repeat of a case."""

    case: Case
    runs: list[Run]

    def values(self, key: str) -> list[float]:
        """One figure over the repeats (process figures, ``load`` or a reported key)."""
        out = []
        for r in self.runs:
            value = getattr(r, key) if key in ("wall_s", "cpu_s", "peak_mib", "load") \
                else r.result.get(key)
            if isinstance(value, int | float):
                out.append(float(value))
        return out

    def median(self, key: str) -> float | None:
        """Median of a figure over the repeats (None if no repeat reported it)."""
        values = self.values(key)
        return statistics.median(values) if values else None

    def first(self, key: str) -> Any:
        """A reported figure that does not vary (counts, names): the first repeat's."""
        return self.runs[0].result.get(key) if self.runs else None

    @property
    def error(self) -> str | None:
        """The case's refusal or failure, if it had one."""
        for r in self.runs:
            if "error" in r.result:
                return str(r.result["error"])
            if r.returncode:
                return f"exit code {r.returncode}"
        return None


_WARMED = False


def warm_bytecode() -> None:
    """Compile the toolkit's modules once (what any first run leaves behind)."""
    global _WARMED
    if not _WARMED:
        compileall.compile_dir(str(ROOT / "src" / "supernode"), quiet=1)
        _WARMED = True


def _environment() -> dict[str, str]:
    env = dict(os.environ, PYTHONHASHSEED="0")
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _limit(memory_bytes: int | None) -> Callable[[], None] | None:
    if memory_bytes is None:
        return None

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))

    return cap


def _timed(case: Case) -> tuple[float, float, float, str, str, int]:
    """Run one repeat of ``case``; (wall s, CPU s, peak MiB, stdout, stderr, exit code)."""
    argv, cwd, env = case.argv(), case.cwd or str(ROOT), _environment()
    cap = _limit(case.memory_bytes)
    if TIME:
        stats = HERE / f".time-{os.getpid()}.txt"
        start = time.perf_counter()
        proc = subprocess.run([TIME, "-f", "%e %U %S %M", "-o", str(stats), *argv],
                              capture_output=True, text=True, cwd=cwd, env=env,
                              preexec_fn=cap)
        wall = time.perf_counter() - start
        text = stats.read_text().split()[-4:]
        stats.unlink()
        elapsed, user, system, rss = (float(x) for x in text)
        return max(elapsed, 0.0) or wall, user + system, rss / 1024, proc.stdout, \
            proc.stderr, proc.returncode
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True, cwd=cwd, env=env,
                          preexec_fn=cap)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    # the largest resident set of any child so far (the best os-level figure without time)
    return wall, cpu, after.ru_maxrss / 1024, proc.stdout, proc.stderr, proc.returncode


def measure(case: Case, repeats: int = 3) -> Measured:
    """Run ``case`` ``repeats`` times, each in a fresh process."""
    warm_bytecode()
    runs = []
    for _ in range(max(1, repeats)):
        load = os.getloadavg()[0]
        wall, cpu, peak, out, err, code = _timed(case)
        lines = [line for line in out.splitlines() if line.startswith(MARK)]
        result = json.loads(lines[-1][len(MARK):]) if lines else {}
        runs.append(Run(wall, cpu, peak, load, result, code, err))
        if "error" in result:
            break
    return Measured(case, runs)


def machine(measured: Sequence[Measured]) -> str:
    """One line: CPUs, load during the runs, repeats, software versions."""
    import numpy

    loads = [v for m in measured for v in m.values("load")]
    cpus = os.cpu_count() or 0
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else cpus
    repeats = max((len(m.runs) for m in measured), default=0)
    load = (f"load (1-min) {statistics.median(loads):.1f}, {min(loads):.1f}–{max(loads):.1f}"
            if loads else "load unknown")
    return (f"{usable} of {cpus} CPUs, {load} during the runs; medians of {repeats} "
            f"fresh processes each; Python {platform.python_version()}, numpy "
            f"{numpy.__version__}; whole-process figures from "
            f"{'/usr/bin/time' if TIME else 'getrusage'}")


def table(header: Sequence[str], rows: Sequence[Sequence[str]], right: int = 1) -> str:
    """A markdown table; columns from ``right`` on are right-aligned."""
    align = ["---" if i < right else "---:" for i in range(len(header))]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(align) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def num(value: float | None, digits: int = 2) -> str:
    """A figure with thousands separators (– when missing)."""
    return "–" if value is None else f"{value:,.{digits}f}"


def process_columns(m: Measured) -> list[str]:
    """Process wall s, CPU s, peak MiB and library s (medians) of a case."""
    return [num(m.median("wall_s")), num(m.median("cpu_s")), num(m.median("peak_mib"), 0),
            num(m.median("library_s"))]


PROCESS_HEADER = ["process wall s", "CPU s", "peak MiB", "library s"]


def cli(argv: Sequence[str] | None = None) -> tuple[int, bool]:
    """Common options of the benchmark scripts: ``(repeats, quick)``."""
    args = list(sys.argv[1:] if argv is None else argv)
    repeats = 3
    if "--repeats" in args:
        repeats = int(args[args.index("--repeats") + 1])
    return repeats, "--quick" in args


def idle(seconds: float) -> dict[str, Any]:
    """A calibration case: sleep ``seconds`` (library time = the sleep)."""
    start = time.perf_counter()
    time.sleep(seconds)
    return {"library_s": time.perf_counter() - start, "slept_s": seconds}


def refuse(message: str) -> dict[str, Any]:
    """A case that refuses (as a design the library rejects does)."""
    return {"error": message}


def _child(target: str, kwargs: str) -> None:
    """Inside the fresh process: call the case and print its figures."""
    sys.path.insert(0, str(HERE))
    module, _, name = target.partition(":")
    func: Callable[..., dict[str, Any]] = getattr(__import__(module), name)
    result = func(**json.loads(kwargs))
    print(MARK + json.dumps(result, default=float), flush=True)


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        _child(sys.argv[2], sys.argv[3])
    else:
        sys.exit("usage: harness.py --child module:function JSON-KWARGS")

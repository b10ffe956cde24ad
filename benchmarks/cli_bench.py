"""Benchmark: the command line as a user runs it, whole processes.

Run: ``.venv/bin/python benchmarks/cli_bench.py [--repeats N]`` (medians of N; see
``harness.py``): ``supernode --help``, ``catalog list``, ``estimate`` and ``plan`` on a
preset, each timed whole by ``/usr/bin/time`` (start-up, imports, the answer, exit).
Target (issue 16): each <= 0.5 s on the 2-core machine; exits 1 if one is missed.
"""

from __future__ import annotations

import sys
from pathlib import Path

from harness import Case, cli, machine, measure, num, table

TARGET_S = 0.5
EXE = str(Path(sys.executable).with_name("supernode"))
PLAN = ("--cluster", "dgx-h100-superpod-su", "--workload", "llama3-70b")
COMMANDS = {
    "supernode --help": ("--help",),
    "supernode catalog list": ("catalog", "list"),
    "supernode estimate (preset, TP8 PP4)": ("estimate", *PLAN, "--tp", "8", "--pp", "4",
                                             "--global-batch", "256"),
    "supernode plan (preset)": ("plan", *PLAN, "--global-batch", "512", "--top", "3"),
    "python -c 'import numpy' (floor)": (),
}


def main(repeats: int = 3, quick: bool = False) -> int:
    """Print the table; return 1 if a command misses 0.5 s."""
    cases = [Case(name, command=(EXE, *args) if args else
                  (sys.executable, "-c", "import numpy"))
             for name, args in COMMANDS.items()]
    measured = [measure(c, repeats) for c in cases]
    rows, ok = [], True
    for m in measured:
        wall = m.median("wall_s") or float("inf")
        floor = m.case.name.startswith("python")
        ok &= floor or wall <= TARGET_S
        ok &= m.error is None
        verdict = "–" if floor else ("met" if wall <= TARGET_S else "MISSED")
        rows.append([m.case.name, num(wall), num(m.median("cpu_s")),
                     num(m.median("peak_mib"), 0), f"failed ({m.error})" if m.error
                     else verdict])
    print(table(["command", "process wall s", "CPU s", "peak MiB",
                 f"<= {TARGET_S} s"], rows))
    print(f"\n{machine(measured)}\n")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(*cli()))

"""Benchmark: how fast each documented size limit is refused (target: within 2 s,
docs/limits.md).

Run: ``.venv/bin/python benchmarks/limits_bench.py [--repeats N]`` (every case a fresh
process, medians of N; see ``harness.py``). Every case of ``tests/limit_cases.py`` (one
input just past one limit) runs as a user runs it (``python -m supernode.cli``,
interpreter start and imports included), under a 4 GiB address-space limit, in its own
folder holding its input files. The table shows the whole-process time to the refusal,
the exit code and the start of the one error line; the script exits 1 if a case is not
refused with exit 2, misses its limit in the message, or takes longer than 2 s.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from harness import Case, cli, machine, measure, num, table

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from limit_cases import cases, make_files  # noqa: E402

TARGET_S = 2.0
MEMORY_BYTES = 4 * 2**30


def _first_line(text: str) -> str:
    lines = text.strip().splitlines()
    return lines[0] if lines else ""


def main(repeats: int = 3, quick: bool = False) -> int:
    """Run every case; print the table; 1 if one misses the target."""
    rows, measured, failed = [], [], 0
    for name, argv, files, fragment in cases():
        with tempfile.TemporaryDirectory() as folder:
            make_files(Path(folder), files)
            m = measure(Case(name, command=(sys.executable, "-m", "supernode.cli", *argv),
                             cwd=folder, memory_bytes=MEMORY_BYTES), repeats)
        measured.append(m)
        wall = m.median("wall_s") or float("inf")
        line = _first_line(m.runs[-1].stderr)
        codes = {r.returncode for r in m.runs}
        ok = codes == {2} and fragment in line and wall <= TARGET_S
        failed += not ok
        shown = line[:90].replace("|", "\\|") + ("..." if len(line) > 90 else "")
        rows.append([name, ",".join(str(c) for c in sorted(codes)),
                     num(wall) + ("" if ok else " MISS"), num(m.median("cpu_s")),
                     num(m.median("peak_mib"), 0), f"`{shown}`"])
    print(table(["limit", "exit", "process wall s", "CPU s", "peak MiB", "error line"], rows))
    print(f"\n{machine(measured)}\n")
    print(f"{len(rows) - failed} of {len(rows)} refused with their limit within "
          f"{TARGET_S:g} s: {'met' if not failed else 'MISSED'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(*cli()))

"""Regenerate every benchmark table: run each script and write its output into
``benchmarks/README.md``.

Run: ``.venv/bin/python benchmarks/run_all.py [--repeats N] [--only NAME ...]
[--no-write]``. Each script of :data:`SCRIPTS` (and any other ``benchmarks/*_bench.py``)
runs as its own process with ``--repeats N`` (3 by default); its output replaces the text
between ``<!-- begin NAME -->`` and ``<!-- end NAME -->`` in the README (a script
without such markers is only printed). Exits 1 if a script missed a target or failed;
the README is still updated with what was measured. Then every marked figure of
README.md and docs/*.md is rewritten from the recorded tables (``figures.py``).
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

import figures

HERE = Path(__file__).resolve().parent
README = HERE / "README.md"
#: Scripts on the shared harness, in the order the README shows them.
SCRIPTS = ("wait_bench", "cli_bench", "topology_bench", "estimate_bench", "plan_search",
           "netsim_bench", "plot_bench", "reliability_bench", "compare_bench", "design_bench",
           "monitor_bench", "schedule_bench", "limits_bench", "serve_bench")


def scripts() -> list[str]:
    """Every benchmark script: the known ones, then any other ``*_bench.py``."""
    found = sorted(p.stem for p in HERE.glob("*_bench.py"))
    return list(SCRIPTS) + [name for name in found if name not in SCRIPTS]


def run(name: str, repeats: int) -> tuple[str, int, float]:
    """Run one script; (its output, exit code, seconds)."""
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, str(HERE / f"{name}.py"), "--repeats",
                           str(repeats)], capture_output=True, text=True, cwd=HERE.parent)
    out = proc.stdout.strip()
    if proc.returncode not in (0, 1):
        out += f"\n\n(failed with exit code {proc.returncode}: {proc.stderr.strip()[-300:]})"
    return out, proc.returncode, time.perf_counter() - start


def write(text: str, name: str, output: str) -> tuple[str, bool]:
    """``text`` with the block of ``name`` replaced by ``output`` (False: no markers)."""
    pattern = re.compile(rf"(<!-- begin {name} -->\n).*?(<!-- end {name} -->)", re.S)
    if not pattern.search(text):
        return text, False
    return pattern.sub(lambda m: m.group(1) + output.rstrip("\n") + "\n" + m.group(2),
                       text), True


def main(argv: list[str]) -> int:
    """Run the scripts, print and record their tables; 1 if any missed or failed."""
    repeats = int(argv[argv.index("--repeats") + 1]) if "--repeats" in argv else 3
    only = [a for a in argv if not a.startswith("--") and not a.isdigit()]
    names = [n for n in scripts() if not only or n in only]
    text, status = README.read_text(), 0
    for name in names:
        output, code, seconds = run(name, repeats)
        status |= code != 0
        print(f"## {name} ({seconds:.0f} s, exit {code})\n\n{output}\n", flush=True)
        text, marked = write(text, name, output)
        if not marked:
            print(f"(no <!-- begin {name} --> block in {README.name}: printed only)\n")
    if "--no-write" not in argv:
        README.write_text(text)
        for problem in figures.rewrite_docs():  # the docs' marked figures, from the tables
            print(f"marker without a table cell: {problem}")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Benchmark: what plots cost next to the simulation they draw, whole processes.

Run: ``.venv/bin/python benchmarks/plot_bench.py [--repeats N]`` (medians of N; see
``harness.py``): ``supernode simulate`` of one llama3-70b iteration (TP 8, PP 4) on the DGX
H100 SuperPOD SU grown to 4,096 and 16,384 GPUs, without and with ``--plot``
(``utilization.png``, a heatmap panel per tier, and ``timeline.png``), each timed whole by
``/usr/bin/time``.
Target (issue 16): with plots within 2x the time without; exits 1 if missed.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from harness import Case, cli, machine, measure, num, table

TARGET_RATIO = 2.0
EXE = str(Path(sys.executable).with_name("supernode"))


def simulate(gpus: int) -> tuple[str, ...]:
    """The simulate command line at ``gpus`` GPUs (global batch 256 sequences per 1,024)."""
    return ("simulate", "--cluster", "dgx-h100-superpod-su", "--workload", "llama3-70b",
            "--gpus", str(gpus), "--tp", "8", "--pp", "4", "--global-batch",
            str(gpus // 4), "--quiet")


def main(repeats: int = 3, quick: bool = False) -> int:
    """Print the table; return 1 if plotting more than doubles the run."""
    with tempfile.TemporaryDirectory() as folder:
        pairs = [(measure(Case(f"simulate, {gpus:,} GPUs", command=(EXE, *simulate(gpus))),
                          repeats),
                  measure(Case(f"simulate --plot, {gpus:,} GPUs",
                               command=(EXE, *simulate(gpus), "--plot", folder)), repeats))
                 for gpus in (4096, 16384)]
        pngs = len(list(Path(folder).glob("*.png")))
    rows, ratios = [], []
    for pair in pairs:
        base = pair[0].median("wall_s") or float("inf")
        ratios.append((pair[1].median("wall_s") or float("inf")) / base)
        rows += [[m.case.name, num(m.median("wall_s")), num(m.median("cpu_s")),
                  num(m.median("peak_mib"), 0), num((m.median("wall_s") or 0) / base),
                  f"failed ({m.error})" if m.error else ""] for m in pair]
    print(table(["case", "process wall s", "CPU s", "peak MiB", "x without plots", ""],
                rows))
    measured = [m for pair in pairs for m in pair]
    ratio = ratios[0]
    ok = ratio <= TARGET_RATIO and all(m.error is None for m in measured) and pngs > 0
    print(f"\n{pngs} PNG files; {machine(measured)}\n")
    print(f"target at 4,096 GPUs (with plots <= {TARGET_RATIO:g}x without): {ratio:.2f}x: "
          f"{'met' if ok else 'MISSED'}; at 16,384 GPUs {ratios[1]:.2f}x")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(*cli()))

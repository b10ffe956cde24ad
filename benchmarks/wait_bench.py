"""Benchmark: what a user waits for, as ratios to this machine's own floor.

Run: ``.venv/bin/python benchmarks/wait_bench.py [--repeats N] [--quick]`` (medians of N
fresh processes; see ``harness.py``). The floor is ``python -c "import numpy"`` measured in
the same run, so the ratios carry from a fast machine to a slow or loaded one where the
absolute seconds do not. Each row is a whole process as a user runs it, except the
scheduler replay, whose target is in CPU seconds of the library (workers included):

==========================================  ===============================================
row                                         target
==========================================  ===============================================
``supernode design`` (flagship example)     <= 30x the floor
the same with ``--workers 1``               (shown: the review in one process)
one ``estimate`` (preset, TP 8 PP 4)        <= 2x the floor
``plan`` DeepSeek-V3 on 2,048 H100          (shown; the rate target is plan_search's)
``schedule``, 100,000 jobs x 16,384 GPUs    <= 30 CPU-s, <= 20 s wall with 2 workers
``simulate --plot`` at 4,096 GPUs           <= 1.5x the same run without plots
``serve`` DeepSeek-V3 on 72 GB200           <= 5 s whole process
``memory`` map of gb200-nvl72, cloudmatrix  <= 2 s whole process each (issue 28)
==========================================  ===============================================

Exits 1 when a target is missed (``--quick``: 10,000 jobs and no target on them).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from harness import Case, cli, machine, measure, num, table

EXE = str(Path(sys.executable).with_name("supernode"))
FLOOR = Case("python -c 'import numpy' (floor)", command=(sys.executable, "-c", "import numpy"))
DESIGN_FLOOR_RATIO = 30.0
ESTIMATE_FLOOR_RATIO = 2.0
SCHEDULE_CPU_S, SCHEDULE_WALL_S = 30.0, 20.0
PLOT_RATIO = 1.5
SERVE_S = 5.0
MEMORY_S = 2.0
MEMORY_PRESETS = ("gb200-nvl72", "cloudmatrix384")


def _simulate(gpus: int, *extra: str) -> tuple[str, ...]:
    return (EXE, "simulate", "--cluster", "dgx-h100-superpod-su", "--workload", "llama3-70b",
            "--gpus", str(gpus), "--tp", "8", "--pp", "4", "--global-batch", str(gpus // 4),
            "--quiet", *extra)


def main(repeats: int = 3, quick: bool = False) -> int:
    """Print the table; return 1 if a target is missed."""
    jobs = 10_000 if quick else 100_000
    with tempfile.TemporaryDirectory() as folder:
        cases = {
            "floor": FLOOR,
            "design": Case("supernode design (flagship)", command=(EXE, "design", "--quiet"),
                           cwd=folder),
            "design1": Case("supernode design (flagship), --workers 1", command=(
                EXE, "design", "--quiet", "--workers", "1"), cwd=folder),
            "estimate": Case("supernode estimate (preset, TP8 PP4)", command=(
                EXE, "estimate", "--cluster", "dgx-h100-superpod-su", "--workload",
                "llama3-70b", "--tp", "8", "--pp", "4")),
            "plan": Case("supernode plan deepseek-v3, 2,048 H100", command=(
                EXE, "plan", "--cluster", "dgx-h100-superpod-su", "--workload", "deepseek-v3",
                "--gpus", "2048", "--top", "1")),
            "schedule": Case(f"schedule, {jobs:,} jobs x 16,384 H100, all policies",
                             "schedule_bench:run_case", {"case": "synthetic", "jobs": jobs}),
            "simulate": Case("simulate, 4,096 GPUs", command=_simulate(4096)),
            "plot": Case("simulate --plot, 4,096 GPUs",
                         command=_simulate(4096, "--plot", str(Path(folder) / "plots"))),
            "serve": Case("serve deepseek-v3 on gb200-nvl72 (72 GPUs)", command=(
                EXE, "serve", "--cluster", "gb200-nvl72", "--model", "deepseek-v3", "--isl",
                "2000", "--osl", "500", "--precision", "fp8", "--tpot-ms", "50", "--json")),
            **{f"memory-{preset}": Case(f"memory --cluster {preset}", command=(
                EXE, "memory", "--cluster", preset)) for preset in MEMORY_PRESETS},
        }
        m = {key: measure(case, repeats) for key, case in cases.items()}
    floor = m["floor"].median("wall_s") or float("nan")

    def wall(key: str) -> float:
        return m[key].median("wall_s") or float("inf")

    sched_cpu = m["schedule"].median("library_cpu_s") or float("inf")
    sched_wall = m["schedule"].median("library_s") or float("inf")
    plot_ratio = wall("plot") / wall("simulate")
    checks = {
        "design": (f"<= {DESIGN_FLOOR_RATIO:g}x floor", wall("design") / floor
                   <= DESIGN_FLOOR_RATIO),
        "estimate": (f"<= {ESTIMATE_FLOOR_RATIO:g}x floor", wall("estimate") / floor
                     <= ESTIMATE_FLOOR_RATIO),
        "plan": ("–", None),
        "schedule": (f"<= {SCHEDULE_CPU_S:g} CPU-s, <= {SCHEDULE_WALL_S:g} s wall "
                     f"(library: {num(sched_cpu)} CPU-s, {num(sched_wall)} s)",
                     None if quick else sched_cpu <= SCHEDULE_CPU_S
                     and sched_wall <= SCHEDULE_WALL_S),
        "simulate": ("–", None),
        "plot": (f"<= {PLOT_RATIO:g}x without plots ({plot_ratio:.2f}x)",
                 plot_ratio <= PLOT_RATIO),
        "serve": (f"<= {SERVE_S:g} s", wall("serve") <= SERVE_S),
        **{f"memory-{p}": (f"<= {MEMORY_S:g} s", wall(f"memory-{p}") <= MEMORY_S)
           for p in MEMORY_PRESETS},
    }
    rows, ok = [], True
    for key, measured in m.items():
        target, met = checks.get(key, ("–", None))
        failed = measured.error is not None
        ok &= not failed and met is not False
        verdict = f"failed ({measured.error})" if failed else \
            "–" if met is None else ("met" if met else "MISSED")
        rows.append([measured.case.name, num(measured.median("wall_s")),
                     num(measured.median("cpu_s")), f"{wall(key) / floor:.1f}x", target,
                     verdict])
    print(table(["what a user waits for", "process wall s", "CPU s", "x floor", "target",
                 "verdict"], rows))
    print(f"\nfloor: {num(floor, 3)} s; {machine(list(m.values()))}\n")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(*cli()))

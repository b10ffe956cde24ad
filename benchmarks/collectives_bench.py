"""Benchmark: the α-β model against the flow simulator at 1,152 ranks, where the suite
stops.

Run: ``.venv/bin/python benchmarks/collectives_bench.py [--repeats N]`` (every case a fresh
process, medians of N; see ``harness.py``). Cases are the differential test's own
(``tests/test_collectives_differential.py``: the same fabrics, schedules, sizes and 3 %
tolerance): the hierarchical all-to-all on 288 four-GPU trays at 576 ranks (what the
suite runs) and at 1,152 ranks (what it no longer runs: 1,325,952 flows per size, three
separate runs, about ten times the CPU), and the direct all-to-all on the flat
1,152-port fabric (in the suite, for scale). Each case reports the simulator's worst
relative distance from the model over 1 KiB, 1 MiB and 1 GiB. Exits 1 if a case is
off by more than the tolerance.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from harness import PROCESS_HEADER, Case, cli, machine, measure, process_columns, table

TESTS = Path(__file__).resolve().parents[1] / "tests"
CASES = (("trays", "all_to_all", "hierarchical_a2a", 576),
         ("trays", "all_to_all", "hierarchical_a2a", 1152),
         ("flat", "all_to_all", "direct", 1152))


def differential(fabric: str, op: str, algorithm: str, n: int) -> dict:
    """Child: the test's model and simulation of one case; the worst relative error."""
    import numpy as np

    sys.path.insert(0, str(TESTS))
    import test_collectives_differential as case

    start = time.perf_counter()
    net, topo = case._net(fabric)
    view = case.consecutive_view(topo, n)
    analytic = case.choose(op, np.array(case.SIZES), n, view, algorithm, tables=case.TABLES)
    simulated = case.simulate(net, topo, op, algorithm, np.arange(n), case.SIZES)
    worst = max(abs(s / a - 1.0) for s, a in zip(simulated, analytic.time_s, strict=True))
    return {"library_s": time.perf_counter() - start, "worst": worst, "tolerance": case.TOL,
            "flows": n * (n - 1)}


def main(repeats: int = 3, quick: bool = False) -> int:
    """Print the table; return 1 if a case is off by more than the test's tolerance."""
    rows, measured, missed = [], [], False
    for fabric, op, algorithm, n in CASES:
        m = measure(Case(f"{fabric} {algorithm} {n}", "collectives_bench:differential",
                         {"fabric": fabric, "op": op, "algorithm": algorithm, "n": n}),
                    repeats)
        measured.append(m)
        if m.error:
            rows.append([f"{fabric}: {op} {algorithm}", f"{n:,}", f"failed: {m.error}",
                         *[""] * 5])
            missed = True
            continue
        worst, tol = m.first("worst"), m.first("tolerance")
        missed |= worst > tol
        rows.append([f"{fabric}: {op} {algorithm}", f"{n:,}", f"{m.first('flows'):,}",
                     *process_columns(m), f"{100 * worst:.3f} %"])
    header = ["case", "ranks", "flows per size", *PROCESS_HEADER,
              "worst distance from the model"]
    print(table(header, rows, right=1))
    print(f"\n{machine(measured)}\n")
    print(f"target (the test's tolerance, 3 %): {'MISSED' if missed else 'met'}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main(*cli()))

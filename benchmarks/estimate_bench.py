"""Benchmark of the step-time model: one ``estimate`` call, and plans/s in vectorised form.

Run: ``.venv/bin/python benchmarks/estimate_bench.py [--repeats N]`` (every case a fresh
process, medians of N; see ``harness.py``). Library time of one estimate is the best of 5
calls after a warm-up (knob search included, then knobs fixed); the vectorised model is
timed over 200,000 random plans (the planner's inner loop), best of 2.
"""

from __future__ import annotations

import sys
import time

from harness import PROCESS_HEADER, Case, cli, machine, measure, process_columns, table

PLANS = 200_000


def _best_of(func, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        func()
        best = min(best, time.perf_counter() - start)
    return best


def one_estimate(fixed: bool) -> dict:
    """Child: best-of-5 time of one ``estimate_plan`` (llama3-70b, TP8 PP4 DP8)."""
    from supernode.cluster.load import load_cluster
    from supernode.estimate.model import estimate_plan
    from supernode.estimate.system import system_from_cluster
    from supernode.spec.plan import ParallelPlan
    from supernode.workload import load_workload

    system = system_from_cluster(load_cluster("dgx-h100-superpod-su"))
    workload = load_workload("llama3-70b")
    plan = ParallelPlan(tp=8, pp=4, dp=8, global_batch_sequences=256,
                        distributed_optimizer=True)
    if fixed:
        plan = plan.model_copy(update={"micro_batch": 1, "recompute": "selective", "vpp": 2,
                                       "sequence_parallel": True})
    estimate_plan(workload, plan, system)  # warm caches
    return {"library_s": _best_of(lambda: estimate_plan(workload, plan, system), 5)}


def vectorised() -> dict:
    """Child: the vectorised step model over 200,000 random plans (best of 2)."""
    import numpy as np

    from supernode.cluster.load import load_cluster
    from supernode.estimate.calibration import default_calibration
    from supernode.estimate.step import step_arrays
    from supernode.estimate.system import system_from_cluster
    from supernode.spec.plan import PlanArrays
    from supernode.workload import load_workload

    system = system_from_cluster(load_cluster("dgx-h100-superpod-su"))
    workload = load_workload("llama3-70b")
    rng = np.random.default_rng(0)
    tp = rng.choice([1, 2, 4, 8], PLANS)
    pp = rng.choice([1, 2, 4, 8], PLANS)
    plans = PlanArrays.from_columns(
        tp=tp, pp=pp, dp=256 // (tp * pp), micro_batch=rng.choice([1, 2, 4], PLANS),
        recompute=rng.choice([0, 1, 2], PLANS),
        vpp=np.where(pp > 1, rng.choice([1, 2], PLANS), 1), sequence_parallel=tp > 1,
        global_batch_sequences=1536, distributed_optimizer=True)
    cal = default_calibration()
    seconds = _best_of(lambda: step_arrays(workload, plans, system, cal), 2)
    return {"library_s": seconds, "plans_per_s": PLANS / seconds}


def main(repeats: int = 3, quick: bool = False) -> int:
    """Print the table (target: one estimate <= 20 ms)."""
    cases = [Case("estimate, one plan, unpublished knobs searched",
                  "estimate_bench:one_estimate", {"fixed": False}),
             Case("estimate, one plan, knobs fixed", "estimate_bench:one_estimate",
                  {"fixed": True}),
             Case(f"vectorised step model, {PLANS:,} plans", "estimate_bench:vectorised")]
    measured = [measure(c, repeats) for c in cases]
    rows = []
    for m in measured:
        lib = m.median("library_s") or 0.0
        rate = m.median("plans_per_s")
        shown = f"{lib * 1e3:.1f} ms" if lib < 1 else f"{lib:.2f} s"
        rows.append([m.case.name, *process_columns(m)[:3], shown,
                     "–" if rate is None else f"{rate:,.0f}"])
    print(table(["case", *PROCESS_HEADER[:3], "library time", "plans/s"], rows))
    print(f"\n{machine(measured)}\n")
    ok = (measured[0].median("library_s") or 1.0) <= 0.020
    print(f"target (one estimate <= 20 ms): {'met' if ok else 'MISSED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(*cli()))

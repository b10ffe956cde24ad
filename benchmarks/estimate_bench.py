"""Benchmark of the step-time model: one `estimate` call, and plans/s in vectorised form.

Run: .venv/bin/python benchmarks/estimate_bench.py
Prints a table: library time of one estimate (knob search included) and the throughput of
the vectorised model over a large array of plans (the planner's inner loop).
"""

from __future__ import annotations

import time

import numpy as np

from supernode.estimate.calibration import default_calibration
from supernode.estimate.model import estimate_plan
from supernode.estimate.step import step_arrays
from supernode.estimate.system import system_from_cluster
from supernode.spec.clusterfile import load_cluster
from supernode.spec.plan import ParallelPlan, PlanArrays
from supernode.workload import load_workload


def _best_of(func, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        func()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    system = system_from_cluster(load_cluster("dgx-h100-superpod-su"))
    workload = load_workload("llama3-70b")
    plan = ParallelPlan(tp=8, pp=4, dp=8, global_batch_sequences=256, distributed_optimizer=True)
    fixed = plan.model_copy(update={"micro_batch": 1, "recompute": "selective", "vpp": 2,
                                    "sequence_parallel": True})
    estimate_plan(workload, plan, system)  # warm caches
    one_search = _best_of(lambda: estimate_plan(workload, plan, system), 5)
    one_fixed = _best_of(lambda: estimate_plan(workload, fixed, system), 5)

    n = 200_000
    rng = np.random.default_rng(0)
    tp = rng.choice([1, 2, 4, 8], n)
    pp = rng.choice([1, 2, 4, 8], n)
    plans = PlanArrays.from_columns(
        tp=tp, pp=pp, dp=256 // (tp * pp), micro_batch=rng.choice([1, 2, 4], n),
        recompute=rng.choice([0, 1, 2], n), vpp=np.where(pp > 1, rng.choice([1, 2], n), 1),
        sequence_parallel=tp > 1, global_batch_sequences=1536, distributed_optimizer=True)
    cal = default_calibration()
    vector = _best_of(lambda: step_arrays(workload, plans, system, cal), 2)

    rows = [
        ("estimate, one plan, knobs searched", f"{one_search * 1e3:.1f} ms", "target <= 20 ms"),
        ("estimate, one plan, knobs fixed", f"{one_fixed * 1e3:.1f} ms", ""),
        (f"vectorised step model, {n:,} plans", f"{vector:.2f} s",
         f"{n / vector:,.0f} plans/s"),
    ]
    width = max(len(r[0]) for r in rows)
    print(f"{'case':<{width}}  {'time':>10}  note")
    for name, value, note in rows:
        print(f"{name:<{width}}  {value:>10}  {note}")


if __name__ == "__main__":
    main()

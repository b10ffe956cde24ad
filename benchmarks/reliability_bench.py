"""Benchmark: Monte Carlo goodput of one year of a 100,000-GPU cluster, 1,000 runs.

Local process pool (target <= 30 s on 2 cores) and Ray: wall time, and whether the two give
the same runs bit for bit. Prints a table (benchmarks/README.md).

    .venv/bin/python benchmarks/reliability_bench.py
"""

from __future__ import annotations

import os
import time

import numpy as np

RUNS, DAYS, GPUS = 1_000, 365.0, 100_000


def _cluster():
    from supernode.spec.cluster import ClusterSpec
    from supernode.spec.loader import validate_document
    from supernode.spec.resolve import resolve_cluster

    doc = {"name": "bench-100k", "supernodes": GPUS // 8,
           "host": {"accelerator": "h100-sxm-80gb", "accelerators_per_host": 8,
                    "nics": {"count": 8, "speed_gbit_per_s": 400}},
           "scale_up": {"kind": "nvswitch", "size": 8, "switch": "nvswitch-gen3",
                        "switch_chips": 4},
           "scale_out": {"tiers": 3, "switch": "spectrum4-sn5600-400g"}}
    return resolve_cluster(validate_document(doc, ClusterSpec))


def main() -> None:
    from supernode.reliability.assess import ReliabilityOptions, assess_reliability
    from supernode.reliability.montecarlo import METRICS
    from supernode.reliability.parallel import run_monte_carlo
    from supernode.spec.plan import plan_from_data
    from supernode.workload.presets import load_workload

    cluster = _cluster()
    plan = plan_from_data({"tp": 8, "pp": 4, "dp": GPUS // 32, "global_batch_sequences":
                           2 * GPUS // 32})
    start = time.perf_counter()
    result = assess_reliability(cluster, load_workload("llama3-70b"), plan,
                                ReliabilityOptions(days=DAYS, runs=1, what_if=False))
    setup = time.perf_counter() - start
    spec = result.scenario.spec
    workers = os.cpu_count() or 2
    rows = {}
    for name, kwargs in (("local pool", {"workers": workers}),
                         ("ray", {"workers": workers, "use_ray": True})):
        start = time.perf_counter()
        rows[name] = (run_monte_carlo(spec, RUNS, **kwargs), time.perf_counter() - start)
    same = np.array_equal(rows["local pool"][0], rows["ray"][0])
    events = rows["local pool"][0][:, 0].mean()
    print(f"one year of {GPUS:,} GPUs ({cluster.hosts:,} hosts), {RUNS:,} runs, "
          f"{len(spec.classes)} failure classes, {events:,.0f} interruptions per run; "
          f"model set-up {setup:.2f} s; {workers} workers")
    print("| engine | wall s | runs/s | goodput mean | p5 | p95 | identical to pool |")
    print("|---|---:|---:|---:|---:|---:|---|")
    i = len(METRICS) + spec.intervals_s.index(result.scenario.interval_s)
    for name, (data, wall) in rows.items():
        g = data[:, i]
        print(f"| {name} | {wall:.2f} | {RUNS / wall:,.0f} | {g.mean():.4f} | "
              f"{np.percentile(g, 5):.4f} | {np.percentile(g, 95):.4f} | "
              f"{'yes' if name == 'local pool' or same else 'NO'} |")
    target = rows["local pool"][1] <= 30.0
    print(f"target (local pool <= 30 s on 2 cores): {'met' if target else 'MISSED'}")


if __name__ == "__main__":
    main()

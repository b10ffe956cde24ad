"""Benchmark of the planner: full searches on two production-scale jobs.

Run: ``.venv/bin/python benchmarks/plan_search.py [--repeats N]`` (every case a fresh
process, medians of N; see ``harness.py``). Cases:

* ``llama3-405b`` on 16,384 H100 GPUs: ``dgx-h100-superpod-su`` scaled to 64 scalable
  units (the scale-out tree grows to three tiers), global batch 2,048 x 8K (Llama 3's).
* ``deepseek-v3`` on 2,048 H800-class GPUs: the same SuperPOD unit with an H800 defined
  inline (an H100 whose NVLink is cut to 400 GB/s bidirectional = 200 GB/s per
  direction: 8 links of 25 GB/s), global batch 1,024 x 4K.

Each process searches three times: the first search (``cold s``: what one process pays
after start-up), the second (warm caches, ``library s``, and its plans/s), both in one
process, and a third shared between processes as ``supernode plan`` does by default
(``workers``, ``shared s`` and the speed-up over the second; its answer must be the
same). Targets: at least 1,000,000 plans/s and the whole warm search within 5 s on 2
cores, in one process.
"""

from __future__ import annotations

import sys
import time

from harness import PROCESS_HEADER, Case, cli, machine, measure, num, process_columns, table

TARGET_PLANS_PER_S = 1_000_000
TARGET_WALL_S = 5.0
CASES = (
    ("llama3-405b on 16,384 H100 (64 SUs)", "dgx-h100-superpod-su", "llama3-405b", 16_384,
     2_048),
    ("deepseek-v3 on 2,048 H800 (8 SUs)", None, "deepseek-v3", 2_048, 1_024),
)


def _h800_cluster():
    from supernode.cluster.load import load_cluster_spec
    from supernode.spec.hardware import AcceleratorSpec

    #: H800 SXM: H100 compute and memory, NVLink cut to 8 links (400 GB/s bidirectional).
    h800 = AcceleratorSpec(
        name="h800-sxm-80gb", vendor="NVIDIA",
        display_name="H800 SXM5 80GB (benchmark, inline)",
        peak_dense_tflops={"bf16": 989, "fp8": 1979}, memory_gbyte=80,
        memory_bandwidth_tbyte_per_s=3.35, scale_up_ports=8,
        scale_up_port_bandwidth_gbyte_per_s=25, scale_up_name="NVLink 4 (8 links)",
        tdp_w=700,
        source=["benchmark assumption: H100 SXM with 400 GB/s bidirectional NVLink "
                "(DeepSeek-V3 report §3.1: H800 NVLink 400 GB/s)"],
    )
    spec = load_cluster_spec("dgx-h100-superpod-su")
    host = spec.host.model_copy(update={"accelerator": h800})
    return spec.model_copy(update={"name": "h800-superpod-su", "host": host})


def _search(cluster, workload: str, gpus: int, batch: int, workers: int | None = 1):
    from supernode.planner.build import build_target
    from supernode.planner.report import plan_job

    start = time.perf_counter()
    target, _ = build_target(cluster, workload, gpus, batch)
    return plan_job(target, top=5, workers=workers), time.perf_counter() - start


def search(index: int) -> dict:
    """Child: the case's search twice (cold, then warm); figures of both."""
    _, preset, workload, gpus, batch = CASES[index]
    cluster = preset or _h800_cluster()
    _, cold = _search(cluster, workload, gpus, batch)
    report, warm = _search(cluster, workload, gpus, batch)
    shared, _ = _search(cluster, workload, gpus, batch, workers=None)
    if [r.layout for r in shared.outcome.ranked] != [r.layout for r in report.outcome.ranked]:
        raise AssertionError("the shared search ranked differently")
    s, best = report.outcome.stats, report.plans[0]
    return {"library_s": warm, "cold_s": cold, "layouts": s.layouts_considered,
            "evaluated": s.candidates_evaluated, "pruned": s.candidates_pruned_by_memory,
            "legal": s.legal_candidates, "search_s": s.wall_time_s,
            "plans_per_s": s.plans_per_s, "workers": shared.outcome.stats.workers,
            "shared_s": shared.outcome.stats.wall_time_s,
            "speedup": s.wall_time_s / shared.outcome.stats.wall_time_s,
            "best": f"TP{best.layout.tp} PP{best.layout.pp} DP{best.layout.dp} "
                    f"CP{best.layout.cp} EP{best.layout.ep}, {best.step_time_s:.3g} s, "
                    f"MFU {best.mfu:.0%}"}


def main(repeats: int = 3, quick: bool = False) -> int:
    """Print the table; return 1 if a target is missed."""
    measured = [measure(Case(name, "plan_search:search", {"index": i}), repeats)
                for i, (name, *_) in enumerate(CASES)]
    rows, ok = [], True
    for m in measured:
        rate, lib = m.median("plans_per_s") or 0.0, m.median("library_s") or 1e9
        ok &= rate >= TARGET_PLANS_PER_S and lib <= TARGET_WALL_S
        rows.append([m.case.name, *process_columns(m), num(m.median("cold_s")),
                     f"{m.first('layouts'):,}", f"{m.first('evaluated'):,}",
                     f"{m.first('pruned'):,}", f"{m.first('legal'):,}",
                     num(m.median("search_s")), f"{rate:,.0f}", str(m.first("workers")),
                     num(m.median("shared_s")), f"{m.median('speedup') or 0:.2f}x",
                     m.first("best")])
    header = ["case", *PROCESS_HEADER, "cold s", "layouts", "plans scored",
              "pruned by memory", "legal", "search s", "plans/s", "workers", "shared s",
              "speed-up", "best"]
    print(table(header, rows))
    print(f"\n{machine(measured)}\n")
    print(f"targets (>= {TARGET_PLANS_PER_S:,} plans/s, warm search <= {TARGET_WALL_S:.0f} "
          f"s): {'met' if ok else 'MISSED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(*cli()))

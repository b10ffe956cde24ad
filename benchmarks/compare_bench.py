"""Benchmark: reading benchmark outputs and comparing them with the model.

Run: ``.venv/bin/python benchmarks/compare_bench.py [--repeats N]`` (every case a fresh
process, medians of N; see ``harness.py``). Cases: every real nccl-tests, perftest,
nvbandwidth and NCCL-log file of ``tests/data`` read and compared on its cluster as
``supernode compare`` does it (findings included); a synthetic 20,000-row
``all_reduce_perf`` log (far longer than any real sweep of ~35 sizes) read, then compared;
the bench plan of the largest preset; the drain thresholds of every link generation.
Targets: the real files <= 5 s and the 20,000-row log (read + compare) <= 10 s of library
time; exits 1 if one is missed.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from harness import PROCESS_HEADER, Case, cli, machine, measure, process_columns, table

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
ROWS = 20_000
REAL_TARGET_S, LOG_TARGET_S = 5.0, 10.0


def synthetic_log(rows: int) -> str:
    """An all_reduce_perf log of ``rows`` sizes, 8 ranks, nccl-tests layout."""
    header = ("# Collective test starting: all_reduce_perf\n#       size         count      type"
              "   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n")
    lines = []
    for i in range(rows):
        size = 1024 * (i + 1)
        t = 10.0 + size / 200e3
        algbw = size / t / 1e3
        lines.append(f"{size:12d}  {size // 4:12d}     float     sum      -1  {t:7.1f}  "
                     f"{algbw:6.2f}  {algbw * 1.75:6.2f}      0  {t:7.1f}  {algbw:6.2f}  "
                     f"{algbw * 1.75:6.2f}      0")
    return header + "\n".join(lines) + "\n"


def real_outputs() -> dict:
    """Child: every real output of tests/data compared on its cluster, findings included."""
    from supernode.cluster.load import load_cluster
    from supernode.measurements import compare_results

    groups = [("gb200-nvl72-superpod", sorted((DATA / "nccl_tests").glob("oci-gb200-*rack.txt"))),
              (str(ROOT / "examples" / "gb300-nvl72-3rack.yaml"),
               sorted((DATA / "nccl_tests").glob("oci-gb300-*rack.txt"))),
              ("gb200-nvl72-superpod", sorted((DATA / "perftest").glob("*.txt"))
               + sorted((DATA / "nvbandwidth").glob("*.txt"))
               + sorted((DATA / "nccl_debug").glob("*.txt")))]
    ranks = {"oci-gb200-alltoall-2rack.txt": 128, "oci-gb200-alltoall-3rack.txt": 192}
    start = time.perf_counter()
    reports = [compare_results(load_cluster(cluster), [f], ranks=ranks.get(f.name))
               for cluster, files in groups for f in files]
    seconds = time.perf_counter() - start
    files = sum(len(f) for _, f in groups)
    rows = sum(len(c.rows) for r in reports for c, _ in r.collectives)
    return {"library_s": seconds, "size": f"{files} files, {rows} rows"}


def log_read() -> dict:
    """Child: read the synthetic 20,000-row log."""
    from supernode.measurements.reader import results_from_text

    text = synthetic_log(ROWS)
    start = time.perf_counter()
    results_from_text(text, "synthetic.log", ranks=8)
    return {"library_s": time.perf_counter() - start,
            "size": f"{ROWS:,} rows, {len(text) / 1e6:.1f} MB"}


def log_compare() -> dict:
    """Child: compare the synthetic log (already read) with the model."""
    from supernode.cluster.load import load_cluster
    from supernode.measurements.compare import compare_set
    from supernode.measurements.reader import results_from_text

    (big,) = results_from_text(synthetic_log(ROWS), "synthetic.log", ranks=8)
    cluster = load_cluster("hgx-h100")
    start = time.perf_counter()
    compare_set(big, cluster)
    return {"library_s": time.perf_counter() - start, "size": f"{ROWS:,} rows, 1 tier"}


def bench_plan_case() -> dict:
    """Child: the bench plan of the largest preset."""
    from supernode.cluster.load import load_cluster
    from supernode.measurements import bench_plan

    cluster = load_cluster("dgx-b200-superpod-4su")
    start = time.perf_counter()
    bench_plan(cluster)
    return {"library_s": time.perf_counter() - start, "size": "dgx-b200-superpod-4su"}


def drain_thresholds() -> dict:
    """Child: the drain thresholds of every link generation (bisection included)."""
    from supernode.links import ber_thresholds, link_generations

    start = time.perf_counter()
    names = link_generations()
    for name in names:
        ber_thresholds.__wrapped__(name)
    return {"library_s": time.perf_counter() - start, "size": f"{len(names)} generations"}


CASES = (("real outputs, findings included", "real_outputs"),
         ("synthetic log: read", "log_read"), ("synthetic log: compare", "log_compare"),
         ("bench-plan, largest preset", "bench_plan_case"),
         ("drain thresholds", "drain_thresholds"))


def main(repeats: int = 3, quick: bool = False) -> int:
    """Print the table; return 1 if a target is missed."""
    measured = [measure(Case(name, f"compare_bench:{func}"), repeats) for name, func in CASES]
    rows = [[m.case.name, str(m.first("size") or m.error), *process_columns(m)]
            for m in measured]
    print(table(["case", "size", *PROCESS_HEADER], rows, right=2))
    print(f"\n{machine(measured)}\n")
    real = measured[0].median("library_s") or float("inf")
    log = (measured[1].median("library_s") or float("inf")) + \
        (measured[2].median("library_s") or float("inf"))
    ok = real <= REAL_TARGET_S and log <= LOG_TARGET_S and all(m.error is None
                                                              for m in measured)
    print(f"targets (real files <= {REAL_TARGET_S:.0f} s: {real:.2f} s; {ROWS:,}-row log "
          f"read + compare <= {LOG_TARGET_S:.0f} s: {log:.2f} s): "
          f"{'met' if ok else 'MISSED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(*cli()))

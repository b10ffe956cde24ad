"""Benchmark of reading benchmark outputs and comparing them with the model.

Run: .venv/bin/python benchmarks/compare_bench.py
Prints a table: every real output of tests/data read and compared (as `supernode compare`
does it, findings included), a synthetic 20,000-row nccl-tests log (a file far larger
than any real sweep) read and compared, a bench plan of the largest preset, and the drain
thresholds of every link generation. Exits 1 if the real outputs take over 5 s or the
20,000-row log over 10 s.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from supernode.links import ber_thresholds, link_generations
from supernode.measurements import bench_plan, compare_results
from supernode.measurements.compare import compare_set
from supernode.measurements.reader import results_from_text
from supernode.spec.clusterfile import load_cluster

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"


def _timed(func):
    start = time.perf_counter()
    value = func()
    return value, time.perf_counter() - start


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


def main() -> int:
    groups = [("gb200-nvl72-superpod", sorted((DATA / "nccl_tests").glob("oci-gb200-*rack.txt"))),
              (str(ROOT / "examples" / "gb300-nvl72-3rack.yaml"),
               sorted((DATA / "nccl_tests").glob("oci-gb300-*rack.txt"))),
              ("gb200-nvl72-superpod", sorted((DATA / "perftest").glob("*.txt"))
               + sorted((DATA / "nvbandwidth").glob("*.txt"))
               + sorted((DATA / "nccl_debug").glob("*.txt")))]
    ranks = {"oci-gb200-alltoall-2rack.txt": 128, "oci-gb200-alltoall-3rack.txt": 192}

    def compare_all():
        return [compare_results(load_cluster(cluster), [f], ranks=ranks.get(f.name))
                for cluster, files in groups for f in files]

    report, real_s = _timed(compare_all)
    count = sum(len(files) for _, files in groups)
    rows = sum(len(c.rows) for r in report for c, _ in r.collectives)
    text = synthetic_log(20_000)
    (big,), parse_s = _timed(lambda: results_from_text(text, "synthetic.log", ranks=8))
    _, compare_s = _timed(lambda: compare_set(big, load_cluster("hgx-h100")))
    _, plan_s = _timed(lambda: bench_plan(load_cluster("dgx-b200-superpod-4su")))
    _, links_s = _timed(lambda: [ber_thresholds.__wrapped__(n) for n in link_generations()])
    table = [
        ("real outputs, findings included", f"{count} files, {rows} rows", real_s),
        ("synthetic log: read", f"20,000 rows, {len(text) / 1e6:.1f} MB", parse_s),
        ("synthetic log: compare", "20,000 rows, 1 tier", compare_s),
        ("bench-plan dgx-b200-superpod-4su", "", plan_s),
        ("drain thresholds", f"{len(link_generations())} generations", links_s),
    ]
    print(f"{'case':36s} {'size':28s} {'seconds':>8s}")
    for name, size, seconds in table:
        print(f"{name:36s} {size:28s} {seconds:8.3f}")
    return 0 if real_s <= 5.0 and parse_s + compare_s <= 10.0 else 1


if __name__ == "__main__":
    sys.exit(main())

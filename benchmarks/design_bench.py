"""Benchmark of `supernode design` on the bundled flagship (target: <= 30 s on 2 cores).

Run: .venv/bin/python benchmarks/design_bench.py
Runs the whole review once, as the command does (validate, topology, plan, simulate,
reliability, facility, monitoring, scheduling, artefacts, rules, then the report folder
with its exported files), in a fresh temporary folder, and prints a table of seconds per
stage, with the scheduling stage's bound (jobs replayed, step times estimated). Exits 1
when the total misses the target.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from supernode.design import FLAGSHIP, DesignInput, example, run_design
from supernode.report import write_report

TARGET_S = 30.0


def main() -> int:
    """Time one flagship design; print the table; 1 if over the target."""
    e = example(FLAGSHIP)
    start = time.perf_counter()
    result = run_design(DesignInput(e.cluster, e.workload, e.plan, example=e.name))
    designed = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        files = write_report(result.to_dict(), Path(tmp) / "report", artefacts=result.files)
        size = sum(f.stat().st_size for f in files)
    end = time.perf_counter()
    data = result.to_dict()
    print(f"supernode design: {data['cluster']['name']} ({data['cluster']['accelerators']:,} "
          f"GPUs) x {data['workload']['name']}")
    print(f"{'stage':<12}{'seconds':>10}")
    sch = data["scheduling"]
    notes = {"scheduling": f"   ({sch['trace_source']['jobs']:,} {sch['trace_source']['kind']} "
                           f"jobs x {len(sch['policies'])} policies, "
                           f"{sch['schedule']['shapes']['step_times_estimated']} step times)"
             if sch else "", "artefacts": f"   ({data['artefacts']['count']} files)"}
    for stage, seconds in result.timings_s.items():
        print(f"{stage:<12}{seconds:>10.2f}{notes.get(stage, '')}")
    print(f"{'report':<12}{end - designed:>10.2f}   ({len(files)} files, {size / 1e6:.2f} MB)")
    total = end - start
    print(f"{'total':<12}{total:>10.2f}   target <= {TARGET_S:.0f} s: "
          f"{'ok' if total <= TARGET_S else 'MISSED'}")
    return 0 if total <= TARGET_S else 1


if __name__ == "__main__":
    sys.exit(main())

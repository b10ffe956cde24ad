"""Benchmark: ``supernode design`` on the bundled flagship (target: <= 30 s on 2 cores).

Run: ``.venv/bin/python benchmarks/design_bench.py [--repeats N]`` (every repeat a fresh
process, medians of N; see ``harness.py``). Each repeat runs the whole review as the
command does (validate, topology, plan, simulate, reliability, facility, monitoring,
scheduling, artefacts, rules, then the report folder with its exported files) into a
temporary folder, and reports seconds per stage. The target is the library time of the
whole review, report included (issue 11: <= 30 s); exits 1 when it is missed.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from harness import PROCESS_HEADER, Case, cli, machine, measure, num, process_columns, table

TARGET_S = 30.0


def flagship() -> dict:
    """Child: one flagship design review and its report folder; seconds per stage."""
    from supernode.design import FLAGSHIP, DesignInput, example, run_design
    from supernode.report import write_report

    e = example(FLAGSHIP)
    start = time.perf_counter()
    result = run_design(DesignInput(e.cluster, e.workload, e.plan, example=e.name))
    designed = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        files = write_report(result.to_dict(), Path(tmp) / "report", artefacts=result.files)
        size = sum(f.stat().st_size for f in files)
    end = time.perf_counter()
    data = result.to_dict()
    sch = data["scheduling"]
    return {"library_s": end - start, **{f"stage_{k}": v for k, v in result.timings_s.items()},
            "stage_report": end - designed, "stages": [*result.timings_s, "report"],
            "files": len(files), "mbytes": size / 1e6, "cluster": data["cluster"]["name"],
            "gpus": data["cluster"]["accelerators"], "workload": data["workload"]["name"],
            "scheduling": f"{sch['trace_source']['jobs']:,} {sch['trace_source']['kind']} jobs "
                          f"x {len(sch['policies'])} policies" if sch else "",
            "artefacts": data["artefacts"]["count"]}


def main(repeats: int = 3, quick: bool = False) -> int:
    """Print the tables; return 1 if the review misses 30 s."""
    m = measure(Case("supernode design, flagship", "design_bench:flagship"), repeats)
    if m.error:
        print(f"failed: {m.error}\n{m.runs[-1].stderr[-500:]}")
        return 1
    print(f"{m.first('cluster')} ({m.first('gpus'):,} GPUs) x {m.first('workload')}\n")
    print(table(["case", *PROCESS_HEADER], [[m.case.name, *process_columns(m)]]))
    notes = {"scheduling": m.first("scheduling"), "artefacts": f"{m.first('artefacts')} files",
             "report": f"{m.first('files')} files, {m.first('mbytes'):.2f} MB"}
    rows = [[stage, notes.get(stage, ""), num(m.median(f"stage_{stage}"))]
            for stage in m.first("stages")]
    print()
    print(table(["stage", "what", "library s (median)"], rows, right=2))
    print(f"\n{machine([m])}\n")
    total = m.median("library_s") or float("inf")
    ok = total <= TARGET_S
    print(f"target (the whole review <= {TARGET_S:.0f} s): {total:.2f} s library, "
          f"{m.median('wall_s'):.2f} s whole process: {'met' if ok else 'MISSED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(*cli()))

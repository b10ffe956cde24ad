"""Benchmark: the placement simulator at scale (every policy; CPU and wall time).

Run: ``.venv/bin/python benchmarks/schedule_bench.py [--repeats N] [--quick]`` (every
case a fresh process, medians of N; see ``harness.py``). Cases:

* 100,000 synthetic jobs (Philly GPU-count law, Philly-fitted log-normal run times cut at
  7 days, Poisson arrivals offering 0.9 of the cluster) on 16,384 H100: the DGX H100
  SuperPOD SU preset grown to 64 SUs (2,048 hosts, 2,048 NVSwitch domains of 8, a
  rail-optimised three-tier fat tree);
* the same cluster saturated: 100,000 jobs offering 3x its capacity (run times cut at one
  day), so queues build and the pre-empting policy works;
* the real Philly trace (82,247 jobs) on the GB200 NVL72 SuperPOD preset (576 GPUs).

Every policy of ``supernode schedule`` runs on each case (the job shapes are drawn once),
in two processes (``schedule(..., workers=2)``: 2 cores). The target (issue 13) is checked
on CPU time (the run and its workers, user + system), which is what the run costs
whatever else the shared machine runs: exits 1 if the first case needs more than 30
CPU-seconds (so at most 30 s of wall time even on one idle core). ``--quick`` runs 10 %
of the jobs.
"""

from __future__ import annotations

import resource
import sys
import time

from harness import PROCESS_HEADER, Case, cli, machine, measure, num, process_columns, table

TARGET_S = 30.0
#: Processes the policies run in (the target is for 2 cores).
WORKERS = 2


def _cpu_s() -> float:
    """CPU seconds of this process and its finished children (user + system)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _inputs(case: str, jobs: int):
    from supernode.cluster.load import load_cluster_spec
    from supernode.cluster.scaling import scale_cluster
    from supernode.scheduler import SyntheticSpec, TraceRules, load_trace, synthetic_trace

    if case == "philly":
        gb200 = scale_cluster(load_cluster_spec("gb200-nvl72-superpod")).cluster
        trace = load_trace("philly", TraceRules(gb200.accelerators))
        return gb200, trace.head(jobs) if jobs < len(trace) else trace
    h100 = scale_cluster(load_cluster_spec("dgx-h100-superpod-su"), 16_384).cluster
    load, cut = (0.9, 7 * 86400.0) if case == "synthetic" else (3.0, 86400.0)
    return h100, synthetic_trace(SyntheticSpec(jobs=jobs, load=load, max_duration_s=cut),
                                 h100.accelerators, seed=0)


def run_case(case: str, jobs: int) -> dict:
    """Child: every policy on one case; library time and CPU (workers included)."""
    from supernode.scheduler import DEFAULT_POLICIES, schedule

    cluster, trace = _inputs(case, jobs)
    start, cpu0 = time.perf_counter(), _cpu_s()
    result = schedule(cluster, trace, DEFAULT_POLICIES, seed=0, workers=WORKERS)
    policies = [{k: p[k] for k in ("policy", "cpu_time_s", "utilisation",
                                    "goodput_utilisation", "mean_queue_s", "fragmentation",
                                    "tp_crossing_share", "mean_slowdown", "slowdown_spread",
                                    "preemptions")} for p in result.policies]
    return {"library_s": time.perf_counter() - start, "library_cpu_s": _cpu_s() - cpu0,
            "jobs": len(trace), "gpus": cluster.accelerators,
            "estimates": result.shapes["step_times_estimated"], "policies": policies}


def _policy_table(m) -> str:
    rows = [[p["policy"], num(p["cpu_time_s"]), f"{p['utilisation']:.1%}",
             f"{p['goodput_utilisation']:.1%}", num(p["mean_queue_s"] / 3600),
             f"{p['fragmentation']:.2%}", f"{p['tp_crossing_share']:.1%}",
             f"{p['mean_slowdown']:.3f}", f"{p['slowdown_spread']:.1%}",
             f"{p['preemptions']:,}"] for p in m.first("policies") or []]
    return table(["policy", "engine CPU s", "util", "goodput", "mean queue h", "frag",
                  "TP-cross", "mean slowdown", "spread", "pre-emptions"], rows)


def main(repeats: int = 3, quick: bool = False) -> int:
    """Print the tables; return 1 if the first case needs more than 30 CPU-s."""
    jobs = 10_000 if quick else 100_000
    cases = [(f"{jobs:,} synthetic jobs, 16,384 H100, load 0.9", "synthetic", jobs),
             (f"{jobs:,} synthetic jobs, 16,384 H100, saturated", "saturated", jobs),
             ("Philly trace, GB200 NVL72 SuperPOD (576 GPUs)", "philly",
              8_000 if quick else 10**9)]
    measured = [measure(Case(name, "schedule_bench:run_case", {"case": case, "jobs": n}),
                        repeats) for name, case, n in cases]
    rows = [[m.case.name, f"{m.first('jobs') or 0:,}", f"{m.first('gpus') or 0:,}",
             *process_columns(m), num(m.median("library_cpu_s")),
             str(m.first("estimates"))] for m in measured]
    print(table(["case", "jobs", "GPUs", *PROCESS_HEADER, "library CPU s (workers incl.)",
                 "step times estimated"], rows))
    print(f"\nper policy, saturated case (first repeat; engine CPU seconds; util = GPUs held "
          f"over the arrival window):\n\n{_policy_table(measured[1])}")
    print(f"\n{machine(measured)}\n")
    cpu = measured[0].median("library_cpu_s") or float("inf")
    ok = cpu <= TARGET_S and all(m.error is None for m in measured)
    print(f"target (every policy on {jobs:,} jobs, 16,384 GPUs <= {TARGET_S:.0f} CPU-s, "
          f"{WORKERS} processes): {cpu:.1f} CPU-s, {measured[0].median('library_s'):.1f} s "
          f"wall: {'met' if ok else 'MISSED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(*cli()))

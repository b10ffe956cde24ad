"""Benchmark: the placement simulator at scale (every policy; CPU and wall time).

Run: ``.venv/bin/python benchmarks/schedule_bench.py [--quick]``. Cases:

* 100,000 synthetic jobs (Philly GPU-count law, Philly-fitted log-normal run times cut at
  7 days, Poisson arrivals offering 0.9 of the cluster) on 16,384 H100: the DGX H100
  SuperPOD SU preset grown to 64 SUs (2,048 hosts, 2,048 NVSwitch domains of 8, a
  rail-optimised three-tier fat tree);
* the same cluster saturated: 100,000 jobs offering 3x its capacity (run times cut at one
  day), so queues build and the pre-empting policy works;
* the real Philly trace (82,247 jobs) on the GB200 NVL72 SuperPOD preset (576 GPUs).

Every policy of ``supernode schedule`` runs on each case (the job shapes are drawn once),
in two processes (``schedule(..., workers=2)``: 2 cores). The target is checked on CPU
time (this process and its workers, user + system), which is what the run costs whatever
else the shared machine runs: the script exits 1 if the 100,000-job case needs more than
30 CPU-seconds (so at most 30 s of wall time even on one idle core). ``--quick`` runs 10 %
of the jobs.
"""

from __future__ import annotations

import os
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from supernode.planner.scaling import scale_cluster  # noqa: E402
from supernode.scheduler import (  # noqa: E402
    DEFAULT_POLICIES,
    SyntheticSpec,
    TraceRules,
    load_trace,
    schedule,
    synthetic_trace,
)
from supernode.spec.clusterfile import load_cluster_spec  # noqa: E402

TARGET_S = 30.0
#: Processes the policies run in (the target is for 2 cores).
WORKERS = 2


def _cases(quick: bool):
    h100 = scale_cluster(load_cluster_spec("dgx-h100-superpod-su"), 16_384).cluster
    jobs = 10_000 if quick else 100_000
    synth = synthetic_trace(SyntheticSpec(jobs=jobs, load=0.9, max_duration_s=7 * 86400.0),
                            h100.accelerators, seed=0)
    busy = synthetic_trace(SyntheticSpec(jobs=jobs, load=3.0, max_duration_s=86400.0),
                           h100.accelerators, seed=0)
    gb200 = scale_cluster(load_cluster_spec("gb200-nvl72-superpod")).cluster
    philly = load_trace("philly", TraceRules(gb200.accelerators))
    if quick:
        philly = philly.head(8_000)
    return [(f"{jobs:,} synthetic jobs, 16,384 H100", h100, synth, True),
            (f"{jobs:,} synthetic jobs, 16,384 H100, saturated", h100, busy, False),
            (f"Philly ({len(philly):,} jobs), GB200 NVL72 SuperPOD", gb200, philly, False)]


def _cpu_s() -> float:
    """CPU seconds of this process and its finished children (user + system)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def main() -> int:
    quick = "--quick" in sys.argv
    failed = False
    for label, cluster, trace, checked in _cases(quick):
        start, cpu0 = time.perf_counter(), _cpu_s()
        result = schedule(cluster, trace, DEFAULT_POLICIES, seed=0, workers=WORKERS)
        wall, cpu = time.perf_counter() - start, _cpu_s() - cpu0
        load = os.getloadavg()[0]
        print(f"\n{label}: {cluster.accelerators:,} GPUs, {len(trace):,} jobs, "
              f"{result.shapes['step_times_estimated']} step times estimated; all policies: "
              f"{cpu:.1f} CPU-s, {wall:.1f} s wall on {WORKERS} processes (load average "
              f"{load:.1f} on {os.cpu_count()} cores)")
        print("| policy | engine CPU s | util | goodput | mean queue h | frag | TP-cross | "
              "mean slowdown | spread | preemptions |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for p in result.policies:
            print(f"| {p['policy']} | {p['cpu_time_s']:.2f} | {p['utilisation']:.1%} | "
                  f"{p['goodput_utilisation']:.1%} | {p['mean_queue_s'] / 3600:.2f} | "
                  f"{p['fragmentation']:.2%} | {p['tp_crossing_share']:.1%} | "
                  f"{p['mean_slowdown']:.3f} | {p['slowdown_spread']:.1%} | "
                  f"{p['preemptions']:,} |")
        if checked and not quick and cpu > TARGET_S:
            print(f"MISSED: {cpu:.1f} CPU-s > {TARGET_S:.0f} s")
            failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

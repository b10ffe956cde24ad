"""Benchmark: the flow simulator at scale (wall time, peak memory, events, flow classes).

Run: ``.venv/bin/python benchmarks/netsim_bench.py [--quick]``. Every case runs in a fresh
process (``spawn``), so each peak resident memory (``ru_maxrss``, interpreter and imports
included) is its own. Cases:

* ``llama3-405b`` one iteration, TP 8 / PP 16 / DP 128 on 16,384 H100 (2,048 DGX-class
  hosts, 8 x 400G NICs each, rail-optimised): a *three-tier* fat tree of 64-port
  QM9700. Two tiers cannot hold 16,384 NIC ports with these switches (64^2/2 = 2,048
  endpoints non-blocking; 144-port Quantum-X800 reaches 10,368): three tiers of 64 ports
  hold 65,536. Global batch 2,048 sequences (16 micro-batches per pipeline).
* a direct all-to-all among 1,024 ranks (every GPU of the 4-SU example cluster,
  ``examples/netsim/h100-4su-1to1.yaml``): 1,047,552 flows, ECMP.
* scaling: the same plan shape (TP 8, PP 16, DP = GPUs / 128, 16 micro-batches) on
  1,024 / 4,096 / 16,384 / 65,536 GPUs, the same three-tier fabric family.

The script exits 1 if the 16k-GPU iteration misses 10 s or 8 GiB.
"""

from __future__ import annotations

import math
import multiprocessing as mp
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET_S, TARGET_MIB = 10.0, 8 * 1024


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def _cluster(hosts: int):
    from supernode.spec.cluster import ClusterSpec
    from supernode.spec.loader import validate_document
    from supernode.spec.resolve import resolve_cluster

    doc = {
        "name": f"h100-{hosts * 8}", "supernodes": hosts,
        "host": {"accelerator": "h100-sxm-80gb", "accelerators_per_host": 8,
                 "nics": {"count": 8, "speed_gbit_per_s": 400}},
        "scale_up": {"kind": "nvswitch", "size": 8, "switch": "nvswitch-gen3",
                     "switch_chips": 4},
        "scale_out": {"tiers": 3, "switch": "quantum2-qm9700", "rail_optimized": True},
    }
    return resolve_cluster(validate_document(doc, ClusterSpec))


def _iteration(gpus: int, out: mp.Queue) -> None:
    """Child: one llama3-405b iteration, TP 8 PP 16, DP = gpus / 128."""
    import numpy as np

    from supernode.netsim import JobInput, simulate_jobs
    from supernode.spec.plan import plan_from_data
    from supernode.workload.presets import load_workload

    base = _peak_mib()
    start = time.perf_counter()
    cluster = _cluster(gpus // 8)
    dp = gpus // 128
    plan = plan_from_data({"tp": 8, "pp": 16, "dp": dp, "global_batch_sequences": 16 * dp})
    job = JobInput("llama3-405b", load_workload("llama3-405b"), plan, np.arange(gpus))
    result = simulate_jobs(cluster, [job])
    out.put({"seconds": time.perf_counter() - start, "peak_mib": _peak_mib(),
             "base_mib": base, "events": result.tables.events,
             "classes": result.tables.classes, "step_s": result.step_time_s,
             "estimate_s": result.estimate_step_time_s})


def _all_to_all(out: mp.Queue) -> None:
    """Child: a direct all-to-all of 256 MiB per rank among 1,024 GPUs (ECMP)."""
    from supernode.netsim import SimOptions, TrafficFile, simulate_traffic
    from supernode.spec.clusterfile import load_cluster

    base = _peak_mib()
    start = time.perf_counter()
    cluster = load_cluster(ROOT / "examples" / "netsim" / "h100-4su-1to1.yaml")
    doc = TrafficFile.model_validate({"collectives": [{
        "name": "a2a", "op": "all_to_all", "message_bytes": 268435456,
        "accelerators": "0-1023"}]})
    result = simulate_traffic(cluster, doc, options=SimOptions(efficiency=False))
    out.put({"seconds": time.perf_counter() - start, "peak_mib": _peak_mib(),
             "base_mib": base, "events": result.tables.events,
             "classes": result.tables.classes, "step_s": result.step_time_s,
             "estimate_s": None})


def run(target, *args) -> dict:
    """Run ``target(*args, queue)`` in a fresh process and return what it reports."""
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(target=target, args=(*args, queue))
    proc.start()
    result = queue.get()
    proc.join()
    return result


def _row(name: str, r: dict) -> str:
    est = f"{r['estimate_s'] * 1e3:.1f}" if r["estimate_s"] else "–"
    return (f"| {name} | {r['seconds']:.2f} | {r['peak_mib']:.0f} | {r['events']:,} | "
            f"{r['classes']:,} | {r['step_s'] * 1e3:.1f} | {est} |")


def main(quick: bool = False) -> int:
    """Print the tables; return 1 if the 16k target is missed."""
    header = ("| case | wall s | peak MiB | events | flow classes | simulated ms | "
              "estimate ms |\n|---|---:|---:|---:|---:|---:|---:|")
    print(header)
    main_case = run(_iteration, 16_384)
    print(_row("llama3-405b, 16,384 GPUs, TP8 PP16 DP128", main_case))
    print(_row("all-to-all, 1,024 ranks (1,047,552 flows)", run(_all_to_all)))
    print("\nscaling (TP 8, PP 16, DP = GPUs/128, 16 micro-batches, 3-tier 64-port tree)\n")
    print("| GPUs | wall s | peak MiB | events | flow classes | s per 1k GPUs | "
          "growth exponent |\n|---:|---:|---:|---:|---:|---:|---:|")
    sizes = (1024, 4096, 16_384) if quick else (1024, 4096, 16_384, 65_536)
    previous = None
    for gpus in sizes:
        r = main_case if gpus == 16_384 else run(_iteration, gpus)
        slope = (f"{math.log(r['seconds'] / previous[1]) / math.log(gpus / previous[0]):.2f}"
                 if previous else "–")
        print(f"| {gpus:,} | {r['seconds']:.2f} | {r['peak_mib']:.0f} | {r['events']:,} | "
              f"{r['classes']:,} | {r['seconds'] / gpus * 1e3:.3f} | {slope} |")
        previous = (gpus, r["seconds"])
    ok = main_case["seconds"] <= TARGET_S and main_case["peak_mib"] <= TARGET_MIB
    print(f"\n16k target ({TARGET_S:.0f} s, {TARGET_MIB / 1024:.0f} GiB): "
          f"{'met' if ok else 'MISSED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(quick="--quick" in sys.argv[1:]))

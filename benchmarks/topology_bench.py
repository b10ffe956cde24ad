"""Benchmark: topology metrics (closed forms) and full graph builds of large fat trees.

Run: ``.venv/bin/python benchmarks/topology_bench.py``. Every measurement runs in a fresh
process, so each peak resident memory (``ru_maxrss``, interpreter and imports included) is
its own; "baseline" is that process's resident memory after the imports.
"""

from __future__ import annotations

import multiprocessing as mp
import resource
import sys
import time

CASES = {
    # 100,000 H100 in 12,500 DGX-class hosts, 8 x 400G rails, three tiers of 128 x 400G
    # switches (64-port switches cannot: they hold 64^3/4 = 65,536 endpoints).
    "100k GPUs, 3-tier, 128-port": dict(hosts=12_500, switch="spectrum4-sn5600-400g",
                                        tiers=3, nic_gbit=400),
    "100k GPUs, 3-tier, 64-port": dict(hosts=12_500, switch="quantum2-qm9700", tiers=3,
                                       nic_gbit=400),
    # The largest two-tier non-blocking trees: k^2/2 endpoints.
    "2-tier max, 64-port (2,048)": dict(hosts=256, switch="quantum2-qm9700", tiers=2,
                                        nic_gbit=400),
    "2-tier max, 144-port (10,368)": dict(hosts=1_296, switch="quantum-x800-q3400", tiers=2,
                                          nic_gbit=800),
}


def _cluster(hosts: int, switch: str, tiers: int, nic_gbit: int):
    from supernode.spec.cluster import ClusterSpec
    from supernode.spec.loader import validate_document
    from supernode.spec.resolve import resolve_cluster

    doc = {
        "name": f"bench-{hosts}", "supernodes": hosts,
        "host": {"accelerator": "h100-sxm-80gb", "accelerators_per_host": 8,
                 "nics": {"count": 8, "speed_gbit_per_s": nic_gbit},
                 "cpus": [{"model": "x86", "count": 2}]},
        "scale_up": {"kind": "nvswitch", "size": 8, "switch": "nvswitch-gen3",
                     "switch_chips": 4},
        "scale_out": {"tiers": tiers, "switch": switch},
    }
    return resolve_cluster(validate_document(doc, ClusterSpec))


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def _measure(case: dict, mode: str, out: mp.Queue) -> None:
    """Child process: load, then time the metrics (and the graph build for ``graph``)."""
    from supernode.errors import InputError
    from supernode.topology import build_cluster_graph, topology_report

    baseline = _peak_mib()
    start = time.perf_counter()
    try:
        cluster = _cluster(**case)
        report = topology_report(cluster)
        edges = nodes = 0
        if mode == "graph":
            g = build_cluster_graph(cluster)
            nodes, edges = g.number_of_nodes(), g.number_of_edges()
    except InputError as exc:
        out.put({"error": exc.message})
        return
    out.put({
        "seconds": time.perf_counter() - start, "peak_mib": _peak_mib(),
        "baseline_mib": baseline, "nodes": nodes, "edges": edges,
        "accelerators": report.accelerators, "switches": sum(report.switches.values()),
        "bisection_tbyte_per_s": report.bisection_bandwidth_bytes_per_s["scale_out"] / 1e12,
        "hops": report.diameter_hops["scale_out"],
    })


def run(case: dict, mode: str) -> dict:
    """Measure ``case`` in a fresh process (``mode``: ``metrics`` or ``graph``)."""
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(target=_measure, args=(case, mode, queue))
    proc.start()
    result = queue.get()
    proc.join()
    return result


def main() -> int:
    """Print one row per case and mode; exit 1 if a target (10 s, 4 GiB) is missed."""
    header = (f"{'case':32} {'mode':8} {'seconds':>8} {'peak MiB':>9} {'base MiB':>9} "
              f"{'nodes':>9} {'edges':>9} {'switches':>8} {'bisect TB/s':>11} {'hops':>4}")
    print(header)
    print("-" * len(header))
    missed = False
    for name, case in CASES.items():
        for mode in ("metrics", "graph"):
            r = run(case, mode)
            if "error" in r:
                print(f"{name:32} {mode:8} refused: {r['error']}")
                break
            missed |= r["seconds"] > 10 or r["peak_mib"] > 4096
            print(f"{name:32} {mode:8} {r['seconds']:8.2f} {r['peak_mib']:9.0f} "
                  f"{r['baseline_mib']:9.0f} {r['nodes']:9,} {r['edges']:9,} "
                  f"{r['switches']:8,} {r['bisection_tbyte_per_s']:11.1f} {r['hops']:4}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())

"""Benchmark: topology metrics (closed forms), full graph builds and the simulator's array
build of large fat trees.

Run: ``.venv/bin/python benchmarks/topology_bench.py [--repeats N]`` (every case a fresh
process, medians of N; see ``harness.py``). Modes: ``metrics`` (load and check the cluster,
closed-form ``topology_report``), ``graph`` (also the whole networkx graph: every GPU, CPU
socket, NIC, switch and link), ``arrays`` (also the flow simulator's network, built
straight into arrays). Targets: 10 s and 4 GiB whole process; exits 1 if one is missed.
"""

from __future__ import annotations

import sys
import time

from harness import PROCESS_HEADER, Case, cli, machine, measure, num, process_columns, table

TARGET_S, TARGET_MIB = 10.0, 4096.0
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
MODES = ("metrics", "graph", "arrays")


def _cluster(hosts: int, switch: str, tiers: int, nic_gbit: int):
    from supernode.cluster.resolve import resolve_cluster
    from supernode.spec.cluster import ClusterSpec
    from supernode.spec.loader import validate_document

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


def build(case: str, mode: str) -> dict:
    """Child: load the cluster, compute the report, and build what ``mode`` names."""
    from supernode.errors import InputError
    from supernode.netsim.build import network_from_cluster
    from supernode.topology import build_cluster_graph, topology_report

    start = time.perf_counter()
    try:
        cluster = _cluster(**CASES[case])
        report = topology_report(cluster)
    except InputError as exc:
        return {"error": exc.message}
    nodes = edges = None
    if mode == "graph":
        g = build_cluster_graph(cluster)
        nodes, edges = g.number_of_nodes(), g.number_of_edges()
    elif mode == "arrays":
        net = network_from_cluster(cluster)
        nodes, edges = len(net.nodes), net.links // 2
    return {"library_s": time.perf_counter() - start, "nodes": nodes, "edges": edges,
            "switches": sum(report.switches.values()),
            "bisection": report.bisection_bandwidth_bytes_per_s["scale_out"] / 1e12,
            "hops": report.diameter_hops["scale_out"]}


def _count(m, key: str) -> str:
    return "–" if m.first(key) is None else f"{m.first(key):,}"


def main(repeats: int = 3, quick: bool = False) -> int:
    """Print the table; return 1 if a case misses 10 s or 4 GiB."""
    rows, measured, missed = [], [], False
    for name in CASES:
        for mode in MODES:
            m = measure(Case(f"{name} {mode}", "topology_bench:build",
                             {"case": name, "mode": mode}), repeats)
            measured.append(m)
            if m.error:
                rows.append([name, mode, f"refused: {m.error}", *[""] * 8])
                break
            missed |= (m.median("wall_s") or 0) > TARGET_S or \
                (m.median("peak_mib") or 0) > TARGET_MIB
            rows.append([name, mode, *process_columns(m), _count(m, "nodes"),
                         _count(m, "edges"),
                         f"{m.first('switches'):,}", num(m.first("bisection"), 1),
                         str(m.first("hops"))])
    header = ["case", "mode", *PROCESS_HEADER, "nodes", "edges", "switches",
              "bisection TB/s", "hops"]
    print(table(header, rows, right=2))
    print(f"\n{machine(measured)}\n")
    print(f"targets ({TARGET_S:.0f} s, {TARGET_MIB / 1024:.0f} GiB whole process): "
          f"{'MISSED' if missed else 'met'}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main(*cli()))

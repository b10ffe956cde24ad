"""Benchmark: generating the monitoring rule pack, and evaluating it offline on snapshots.

Run: ``.venv/bin/python benchmarks/monitor_bench.py [--repeats N]`` (every case a fresh
process, medians of N; see ``harness.py``). Two library paths: ``monitor rules`` (build the
pack, the topology labels of every GPU, NIC, switch and rack, render every artefact
including the promtool tests, write the folder) for 576 and 16,384 GPUs, and ``health``
(parse snapshots with every GPU's and NIC's series, evaluate every group at each
snapshot) on one and ten snapshots of 1,024 GPUs. DGX H100 clusters (8 GPUs and 8 NDR
rails per host, 4 hosts per rack, liquid-cooled); the snapshots hold 11 dcgm-exporter
series per GPU and 4 node-exporter series per NIC. Target: 60 s of library time per case;
exits 1 if one is missed.
"""

from __future__ import annotations

import random
import sys
import tempfile
import time
from pathlib import Path

from harness import PROCESS_HEADER, Case, cli, machine, measure, process_columns, table

TARGET_S = 60.0


def _dgx_cluster(hosts: int):
    from supernode.cluster.resolve import resolve_cluster
    from supernode.spec.cluster import ClusterSpec
    from supernode.spec.loader import validate_document

    doc = {
        "name": f"dgx-{hosts * 8}", "supernodes": hosts,
        "host": {"accelerator": "h100-sxm-80gb", "accelerators_per_host": 8,
                 "nics": {"count": 8, "speed_gbit_per_s": 400}},
        "scale_up": {"kind": "nvswitch", "size": 8, "switch": "nvswitch-gen3",
                     "switch_chips": 4},
        "scale_out": {"tiers": 3 if hosts > 256 else 2, "switch": "quantum-x800-q3400"
                      if hosts > 256 else "quantum2-qm9700"},
        "racks": {"hosts_per_rack": 4, "cooling": "liquid"},
    }
    return resolve_cluster(validate_document(doc, ClusterSpec))


def _snapshot(topology, step: int, rng: random.Random) -> str:
    """dcgm-exporter and node-exporter lines for every GPU and NIC at minute ``step``."""
    lines = []
    for gpu in topology.gpus:
        ids = f'gpu="{gpu.gpu}",hostname="{gpu.host.hostname}",UUID="GPU-{gpu.gpu}"'
        lines += [f"DCGM_FI_DEV_GPU_UTIL{{{ids}}} {rng.uniform(80, 100):.1f}",
                  f"DCGM_FI_DEV_GPU_TEMP{{{ids}}} {rng.uniform(50, 70):.1f}",
                  f"DCGM_FI_DEV_POWER_USAGE{{{ids}}} {rng.uniform(500, 700):.1f}",
                  f"DCGM_FI_DEV_XID_ERRORS{{{ids}}} 0",
                  f"DCGM_FI_DEV_THERMAL_VIOLATION{{{ids}}} {step * 1e9:.0f}",
                  f"DCGM_FI_PROF_NVLINK_TX_BYTES{{{ids}}} {rng.uniform(1e11, 4e11):.0f}",
                  f"DCGM_FI_PROF_NVLINK_RX_BYTES{{{ids}}} {rng.uniform(1e11, 4e11):.0f}",
                  f"DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL{{{ids}}} {step * 3}",
                  f"DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL{{{ids}}} {step}",
                  f"DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL{{{ids}}} 0",
                  f"DCGM_FI_DEV_SM_CLOCK{{{ids}}} 1980"]
    for nic in topology.nics:
        ids = f'device="{nic.device}",port="1",hostname="{nic.host.hostname}"'
        lines += [f"node_infiniband_port_data_transmitted_bytes_total{{{ids}}} {step * 2e12:.0f}",
                  f"node_infiniband_port_discards_transmitted_total{{{ids}}} 0",
                  f"node_infiniband_symbol_error_total{{{ids}}} {step * 5}",
                  f"node_infiniband_link_downed_total{{{ids}}} 0"]
    return "\n".join(lines) + "\n"


def rules_case(hosts: int) -> dict:
    """Child: ``monitor rules`` for a DGX H100 cluster of ``hosts`` hosts."""
    from supernode.monitor.artefacts import render, write
    from supernode.monitor.pack import build_pack

    start = time.perf_counter()
    pack = build_pack(_dgx_cluster(hosts))
    artefacts = render(pack)
    with tempfile.TemporaryDirectory() as folder:
        write(artefacts, Path(folder) / "out")
    size = len(artefacts.files["topology.prom"].encode()) / 2**20
    return {"library_s": time.perf_counter() - start,
            "result": f"{len(pack.alerts())} alerts, topology.prom {size:.1f} MiB"}


def health_case(hosts: int, snapshots: int) -> dict:
    """Child: ``health`` on ``snapshots`` one-minute snapshots of ``hosts`` hosts."""
    from supernode.monitor.health import evaluate
    from supernode.monitor.pack import build_pack
    from supernode.monitor.snapshots import load_snapshots

    pack = build_pack(_dgx_cluster(hosts))
    rng = random.Random(14)
    with tempfile.TemporaryDirectory() as folder:
        paths = []
        for step in range(snapshots):
            path = Path(folder) / f"s{step:03d}.prom"
            path.write_text(_snapshot(pack.ctx.topology, step, rng))
            paths.append(str(path))
        start = time.perf_counter()
        loaded = load_snapshots(paths, pack)
        report = evaluate(pack, loaded)
        seconds = time.perf_counter() - start
    samples = loaded.storage.sample_count()
    return {"library_s": seconds, "result": f"{samples:,} samples, {len(report.firing())} "
                                            "firing"}


CASES = ((f"monitor rules, {72 * 8:,} GPUs", "rules_case", {"hosts": 72}),
         (f"monitor rules, {2048 * 8:,} GPUs", "rules_case", {"hosts": 2048}),
         (f"health, {128 * 8:,} GPUs x 1 snapshot", "health_case",
          {"hosts": 128, "snapshots": 1}),
         (f"health, {128 * 8:,} GPUs x 10 snapshots", "health_case",
          {"hosts": 128, "snapshots": 10}))


def main(repeats: int = 3, quick: bool = False) -> int:
    """Print the table; return 1 if a case misses 60 s."""
    cases = CASES[:3] if quick else CASES
    measured = [measure(Case(name, f"monitor_bench:{func}", kwargs), repeats)
                for name, func, kwargs in cases]
    rows = [[m.case.name, str(m.first("result") or m.error), *process_columns(m)]
            for m in measured]
    print(table(["case", "result", *PROCESS_HEADER], rows, right=2))
    print(f"\n{machine(measured)}\n")
    ok = all(m.error is None and (m.median("library_s") or 1e9) <= TARGET_S for m in measured)
    print(f"target (each case <= {TARGET_S:.0f} s): {'met' if ok else 'MISSED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(*cli()))

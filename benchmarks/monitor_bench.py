"""Benchmark: generating the monitoring rule pack, and evaluating it offline on snapshots.

Run: ``.venv/bin/python benchmarks/monitor_bench.py``. Prints one table and exits 1 when a
case misses its target (``monitor rules`` for 16,384 GPUs within 60 s; ``health`` on ten
snapshots of 1,024 GPUs within 60 s). Each case runs in a fresh process, so each peak
resident memory is its own.
"""

from __future__ import annotations

import multiprocessing as mp
import random
import resource
import sys
import tempfile
import time
from pathlib import Path

TARGET_S = 60.0


def _dgx_cluster(hosts: int):
    from supernode.spec.cluster import ClusterSpec
    from supernode.spec.loader import validate_document
    from supernode.spec.resolve import resolve_cluster

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


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def rules_case(hosts: int, queue) -> None:
    """``monitor rules`` for a DGX H100 cluster of ``hosts`` hosts."""
    from supernode.monitor.artefacts import render, write
    from supernode.monitor.pack import build_pack

    start = time.perf_counter()
    pack = build_pack(_dgx_cluster(hosts))
    artefacts = render(pack)
    with tempfile.TemporaryDirectory() as folder:
        write(artefacts, Path(folder) / "out")
    size = len(artefacts.files["topology.prom"].encode()) / 2**20
    queue.put((f"monitor rules, {hosts * 8:,} GPUs", time.perf_counter() - start, _peak_mib(),
               f"{len(pack.alerts())} alerts, topology.prom {size:.1f} MiB"))


def health_case(hosts: int, snapshots: int, queue) -> None:
    """``health`` on ``snapshots`` one-minute snapshots of ``hosts`` hosts."""
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
    queue.put((f"health, {hosts * 8:,} GPUs x {snapshots} snapshots", seconds, _peak_mib(),
               f"{samples:,} samples, {len(report.firing())} firing"))


def main() -> int:
    ctx = mp.get_context("spawn")
    cases = [(rules_case, (72,)), (rules_case, (2048,)), (health_case, (128, 1)),
             (health_case, (128, 10))]
    rows, failed = [], False
    for func, args in cases:
        queue = ctx.Queue()
        process = ctx.Process(target=func, args=(*args, queue))
        process.start()
        row = queue.get()
        process.join()
        rows.append(row)
        failed |= row[1] > TARGET_S
    print("| case | seconds | peak MiB | result |")
    print("|---|---:|---:|---|")
    for name, seconds, mib, note in rows:
        print(f"| {name} | {seconds:.2f} | {mib:.0f} | {note} |")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

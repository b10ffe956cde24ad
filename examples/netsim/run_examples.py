"""Reproduce the seeds' two fabric findings with the flow simulator, with plots.

1. Oversubscription (seed 001 §2.2): the same traffic on a non-blocking and a 2:1
   leaf tier (``h100-4su-1to1.yaml`` / ``h100-4su-2to1.yaml``, ``cross-leaf.yaml``).
2. ECMP collisions and staggering (seed 001 §4.3): 32 cross-leaf ring all-reduces at once
   (``rings-burst.yaml``) vs in 8 waves (``rings-staggered.yaml``), with ECMP, and at
   once with adaptive routing.

Run: ``.venv/bin/python examples/netsim/run_examples.py [OUT_DIR]`` (default
``netsim-examples-out``). Links run at line rate (``efficiency=False``, like ``--ideal``)
so the numbers read against 50 GB/s NICs. Prints two tables; returns the numbers.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from supernode.cluster.load import load_cluster
from supernode.netsim import SimOptions, TrafficFile, simulate_traffic
from supernode.netsim.plot_files import write_plots
from supernode.spec.loader import read_document, validate_document

HERE = Path(__file__).resolve().parent
NIC_BYTES_PER_S = 50e9
MESSAGE_BYTES = 268435456


def _traffic(name: str) -> TrafficFile:
    return validate_document(read_document(HERE / name), TrafficFile, source=name)


def oversubscription(out: Path) -> dict[str, float]:
    """Time of each collective of ``cross-leaf.yaml`` on 1:1 and 2:1 (ECMP and spray)."""
    doc = _traffic("cross-leaf.yaml")
    rows: dict[str, float] = {}
    for ratio in ("1to1", "2to1"):
        cluster = load_cluster(HERE / f"h100-4su-{ratio}.yaml")
        for routing in ("ecmp", "spray"):
            opts = SimOptions(routing=routing, efficiency=False,
                              bins=120 if routing == "spray" else 0)
            result = simulate_traffic(cluster, doc, options=opts)
            for name, stats in result.tables.collectives.items():
                rows[f"{name} {ratio} {routing}"] = stats["mean_s"]
            rows[f"hot spine links {ratio} {routing}"] = result.tables.hot_counts.get(
                "spine", 0)
            if routing == "spray":
                write_plots(result.tables, out / f"cross-leaf-{ratio}")
    print("oversubscription: cross-leaf traffic, 1,024 H100, ms (spray = ideal balance)")
    print(f"{'collective':<18}{'routing':<9}{'1:1':>9}{'2:1':>9}{'2:1 / 1:1':>11}")
    for name in ("a2a-rail0", "halves-exchange"):
        for routing in ("ecmp", "spray"):
            a, b = rows[f"{name} 1to1 {routing}"], rows[f"{name} 2to1 {routing}"]
            print(f"{name:<18}{routing:<9}{a * 1e3:9.2f}{b * 1e3:9.2f}{b / a:11.2f}")
    return rows


def staggering(out: Path, seeds: range = range(4)) -> dict[str, float]:
    """Mean/min ring bus-bandwidth efficiency (busbw / NIC rate) of each variant."""
    cluster = load_cluster(HERE / "h100-4su-1to1.yaml")
    variants = {"burst ecmp": ("rings-burst.yaml", "ecmp"),
                "staggered ecmp": ("rings-staggered.yaml", "ecmp"),
                "burst adaptive": ("rings-burst.yaml", "adaptive")}
    rows: dict[str, float] = {}
    for label, (file, routing) in variants.items():
        eff, span = [], []
        for seed in seeds:
            opts = SimOptions(routing=routing, seed=seed, efficiency=False,
                              bins=120 if seed == 0 else 0)
            result = simulate_traffic(cluster, _traffic(file), options=opts)
            t = np.array([s["mean_s"] for s in result.tables.collectives.values()])
            eff.append(2 * 3 / 4 * MESSAGE_BYTES / t / NIC_BYTES_PER_S)
            span.append(result.step_time_s)
            if seed == 0:
                write_plots(result.tables, out / label.replace(" ", "-"))
        eff_all = np.concatenate(eff)
        rows[f"{label} mean"] = float(eff_all.mean())
        rows[f"{label} min"] = float(eff_all.min())
        rows[f"{label} makespan"] = float(np.mean(span))
    print("ECMP collisions: 32 ring all-reduces of 256 MiB across 4 leaf groups, "
          f"{len(seeds)} seeds")
    print(f"{'variant':<16}{'mean busbw':>12}{'worst':>8}{'all done ms':>13}")
    for label in variants:
        print(f"{label:<16}{rows[label + ' mean']:12.0%}{rows[label + ' min']:8.0%}"
              f"{rows[label + ' makespan'] * 1e3:13.1f}")
    return rows


def main(out: str | Path = "netsim-examples-out") -> dict[str, float]:
    """Run both examples, write plots under ``out``, return every number printed."""
    out = Path(out)
    rows = oversubscription(out)
    print()
    rows.update(staggering(out))
    return rows


if __name__ == "__main__":
    main(*sys.argv[1:2])

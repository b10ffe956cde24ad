"""Benchmark: the flow-level simulator at scale, 1,024 to 131,072 GPUs.

Run: ``.venv/bin/python benchmarks/netsim_bench.py [--repeats N] [--quick]`` (every case
a fresh process, medians of N; see ``harness.py``). Cases:

* ``llama3-405b`` one iteration, TP 8 / PP 16 / DP = GPUs / 128, 16 micro-batches per
  pipeline, on H100 hosts of 8 GPUs with 8 x 400G NICs, rail-optimised **three-tier** fat
  trees: 16,384 GPUs on 64-port QM9700 (two tiers of 64 or 144 ports cannot hold 16,384
  NIC ports; three tiers of 64 hold 65,536), and 131,072 GPUs on 128-port SN5600 at
  400G (three tiers of 128 ports hold 524,288);
* a direct all-to-all among 1,024 ranks (``examples/netsim/h100-4su-1to1.yaml``):
  1,047,552 flows, ECMP;
* scaling: the llama3-405b shape on 1,024 ... 131,072 GPUs, one fabric family
  (three tiers of SN5600 400G), with the growth exponent of each step and of a
  least-squares fit.

Inside each process the library time is split into building the network, routing
(router set-up and routes) and the rest (DAG, event loop, max-min solves, result tables).
Targets (issue 16): 131,072 GPUs <= 30 s and <= 4 GiB whole process; 16,384 GPUs <= 3 s;
time exponent <= 1.0 over the scaling table. Exits 1 if one is missed.
"""

from __future__ import annotations

import math
import sys
import time
from pathlib import Path

from harness import (
    PROCESS_HEADER,
    Case,
    Measured,
    machine,
    measure,
    num,
    process_columns,
    table,
)

ROOT = Path(__file__).resolve().parents[1]
TARGETS = {131_072: (30.0, 4096.0), 16_384: (3.0, None)}
MAX_EXPONENT = 1.0
SCALING = (1024, 4096, 16_384, 65_536, 131_072)


def _cluster(hosts: int, switch: str):
    from supernode.cluster.resolve import resolve_cluster
    from supernode.spec.cluster import ClusterSpec
    from supernode.spec.loader import validate_document

    doc = {
        "name": f"h100-{hosts * 8}", "supernodes": hosts,
        "host": {"accelerator": "h100-sxm-80gb", "accelerators_per_host": 8,
                 "nics": {"count": 8, "speed_gbit_per_s": 400}},
        "scale_up": {"kind": "nvswitch", "size": 8, "switch": "nvswitch-gen3",
                     "switch_chips": 4},
        "scale_out": {"tiers": 3, "switch": switch, "rail_optimized": True},
    }
    return resolve_cluster(validate_document(doc, ClusterSpec))


class _Phases:
    """Wall time spent inside a few library functions (wrapped for the child's run)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    def wrap(self, owner, name: str, phase: str) -> None:
        inner = getattr(owner, name)

        def timed(*args, **kwargs):
            start = time.perf_counter()
            try:
                return inner(*args, **kwargs)
            finally:
                self.seconds[phase] = self.seconds.get(phase, 0.0) + \
                    time.perf_counter() - start

        setattr(owner, name, timed)


def _phases() -> _Phases:
    import supernode.netsim.scenario as scenario
    from supernode.netsim.routing import Router

    phases = _Phases()
    phases.wrap(scenario, "network_from_cluster", "build_s")
    phases.wrap(Router, "__init__", "routing_s")
    phases.wrap(Router, "route", "routing_s")
    return phases


def iteration(gpus: int, switch: str) -> dict:
    """Child: one llama3-405b iteration, TP 8 PP 16, DP = gpus / 128."""
    import numpy as np

    from supernode.netsim import JobInput, simulate_jobs
    from supernode.spec.plan import plan_from_data
    from supernode.workload.presets import load_workload

    phases = _phases()
    start, cpu = time.perf_counter(), time.process_time()
    cluster = _cluster(gpus // 8, switch)
    dp = gpus // 128
    plan = plan_from_data({"tp": 8, "pp": 16, "dp": dp, "global_batch_sequences": 16 * dp})
    job = JobInput("llama3-405b", load_workload("llama3-405b"), plan, np.arange(gpus))
    result = simulate_jobs(cluster, [job])
    library = time.perf_counter() - start
    return {"library_s": library, "library_cpu_s": time.process_time() - cpu,
            **phases.seconds, "events": result.tables.events,
            "classes": result.tables.classes, "step_s": result.step_time_s,
            "estimate_s": result.estimate_step_time_s, "links": len(result.tables.links.links)}


def all_to_all() -> dict:
    """Child: a direct all-to-all of 256 MiB per rank among 1,024 GPUs (ECMP)."""
    from supernode.cluster.load import load_cluster
    from supernode.netsim import SimOptions, TrafficFile, simulate_traffic

    phases = _phases()
    start, cpu = time.perf_counter(), time.process_time()
    cluster = load_cluster(ROOT / "examples" / "netsim" / "h100-4su-1to1.yaml")
    doc = TrafficFile.model_validate({"collectives": [{
        "name": "a2a", "op": "all_to_all", "message_bytes": 268435456,
        "accelerators": "0-1023"}]})
    result = simulate_traffic(cluster, doc, options=SimOptions(efficiency=False))
    return {"library_s": time.perf_counter() - start,
            "library_cpu_s": time.process_time() - cpu, **phases.seconds,
            "events": result.tables.events, "classes": result.tables.classes,
            "step_s": result.step_time_s, "estimate_s": None}


def _case(gpus: int, switch: str, label: str) -> Case:
    return Case(label, "netsim_bench:iteration", {"gpus": gpus, "switch": switch})


def _row(m) -> list[str]:
    est = m.first("estimate_s")
    rest = (m.median("library_s") or 0) - (m.median("build_s") or 0) - \
        (m.median("routing_s") or 0)
    return [m.case.name, *process_columns(m), num(m.median("library_cpu_s")),
            num(m.median("build_s")),
            num(m.median("routing_s")), num(rest), f"{m.first('events'):,}",
            f"{m.first('classes'):,}", num(m.first("step_s") * 1e3, 1),
            num(est * 1e3 if est else None, 1)]


def exponents(sizes: list[int], seconds: list[float]) -> tuple[list[float | None], float]:
    """Growth exponent of each step (log ratio) and of a least-squares log-log fit."""
    steps: list[float | None] = [None]
    for i in range(1, len(sizes)):
        steps.append(math.log(seconds[i] / seconds[i - 1]) / math.log(sizes[i] / sizes[i - 1]))
    xs, ys = [math.log(s) for s in sizes], [math.log(t) for t in seconds]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    fit = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / \
        sum((x - mx) ** 2 for x in xs)
    return steps, fit


def _scaling(rows: list) -> tuple[str, dict[str, float]]:
    sizes = [m.case.kwargs["gpus"] for m in rows]
    lines, fits = [], {}
    cols = {key: [m.median(key) or 0.0 for m in rows]
            for key in ("wall_s", "cpu_s", "library_s", "library_cpu_s")}
    steps = {}
    for key, values in cols.items():
        steps[key], fits[key] = exponents(sizes, values)
    for i, m in enumerate(rows):
        lines.append([f"{sizes[i]:,}", *process_columns(m), num(m.median("library_cpu_s")),
                      num(steps["wall_s"][i]), num(steps["cpu_s"][i]),
                      num(steps["library_s"][i]), num(steps["library_cpu_s"][i]),
                      f"{m.first('events'):,}",
                      f"{m.first('links'):,}"])
    header = ["GPUs", *PROCESS_HEADER, "library CPU s", "exponent: wall", "CPU", "library",
              "library CPU", "events", "links"]
    fit = (f"least-squares exponent {sizes[0]:,}–{sizes[-1]:,} GPUs: process wall "
           f"{fits['wall_s']:.2f}, process CPU {fits['cpu_s']:.2f}, library "
           f"{fits['library_s']:.2f}, library CPU {fits['library_cpu_s']:.2f}")
    return table(header, lines) + "\n\n" + fit, {**fits, "last": steps["library_s"][-1] or 0}


def main(repeats: int = 3, quick: bool = False) -> int:
    """Print the tables; return 1 if a target is missed."""
    header = ["case", *PROCESS_HEADER, "library CPU s", "build s", "routing s", "rest s",
              "events",
              "flow classes", "simulated ms", "estimate ms"]
    main_cases = [_case(16_384, "quantum2-qm9700",
                        "llama3-405b, 16,384 GPUs, TP8 PP16 DP128, 3-tier 64-port"),
                  Case("all-to-all, 1,024 ranks (1,047,552 flows)", "netsim_bench:all_to_all")]
    if not quick:
        main_cases.insert(1, _case(131_072, "spectrum4-sn5600-400g",
                                   "llama3-405b, 131,072 GPUs, TP8 PP16 DP1024, 3-tier "
                                   "128-port"))
    done: dict[str, Measured] = {}

    def once(case: Case) -> Measured:  # a case in both tables runs once
        key = f"{case.target}{sorted(case.kwargs.items())}"
        if key not in done:
            done[key] = measure(case, repeats)
        return done[key]

    measured = [once(c) for c in main_cases]
    sizes = SCALING[:3] if quick else SCALING
    scaling = [once(_case(g, "spectrum4-sn5600-400g", f"{g}")) for g in sizes]
    print(table(header, [_row(m) for m in measured]))
    print("\nscaling: TP 8, PP 16, DP = GPUs / 128, 16 micro-batches, three tiers of "
          "128-port SN5600 at 400G\n")
    text, fits = _scaling(scaling)
    print(text)
    print(f"\n{machine(measured + scaling)}\n")
    return _verdict(list(done.values()), fits)


def _verdict(measured: list, fits: dict[str, float]) -> int:
    ok = True
    for m in measured:
        gpus = m.case.kwargs.get("gpus")
        if gpus in TARGETS:
            seconds, mib = TARGETS[gpus]
            wall, peak = m.median("wall_s") or math.inf, m.median("peak_mib") or math.inf
            met = wall <= seconds and (mib is None or peak <= mib)
            ok &= met
            limit = f"<= {seconds:.0f} s" + (f", <= {mib / 1024:.0f} GiB" if mib else "")
            print(f"target {gpus:,} GPUs ({m.case.kwargs['switch']}) {limit} whole process: "
                  f"{wall:.2f} s, {peak:,.0f} MiB: {'met' if met else 'MISSED'}")
    met = fits["library_s"] <= MAX_EXPONENT and fits["wall_s"] <= MAX_EXPONENT
    ok &= met
    print(f"target time exponent <= {MAX_EXPONENT}: fit {fits['library_s']:.2f} (library), "
          f"{fits['wall_s']:.2f} (wall), last step {fits['last']:.2f} (library): "
          f"{'met' if met else 'MISSED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    from harness import cli

    sys.exit(main(*cli()))

"""Simulate the reviewed plan's iteration and summarise it for the report.

The run is :func:`~supernode.netsim.scenario.simulate_jobs` (one job on every
accelerator, ranks renumbered for the plan's rank order). The report needs two
summaries that scale to thousands of GPUs, so that drawing never costs more than the
simulation: the utilisation heatmap of the busiest links per tier (the simulator's own
``heatmap`` table, cut to :data:`HEATMAP_LINKS` rows) and the timeline merged per
parallel dimension (one lane per dimension, intervals merged in one sort, capped at
:data:`MAX_INTERVALS` per lane).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace
from typing import Any

import numpy as np

from supernode.netsim.jobs import check_job_size
from supernode.netsim.plans import reorder
from supernode.netsim.results import PARALLEL_DIMS
from supernode.netsim.scenario import JobInput, SimOptions, SimResult, simulate_jobs
from supernode.rules.pack import HOT_UTILIZATION
from supernode.spec.plan import ParallelPlan
from supernode.spec.resolved import Cluster
from supernode.spec.workload import WorkloadSpec

#: Time bins of the heatmap, and links shown per tier (busiest first).
HEATMAP_BINS = 48
HEATMAP_LINKS = 16
#: Timeline lanes keep at most this many intervals + 1 (gaps shorter than the run / this
#: are closed).
MAX_INTERVALS = 400
#: Order of the timeline's dimension rows (others after, alphabetically); compute and
#: optimizer come first, the ``communication`` group row last.
LANES = ("tp", "cp", "ep", "pp", "dp", "dp_expert", "other_comm")
#: The part row of the simulator's transfers that belong to no parallel dimension.
OTHER_COMM = "other_comm"


#: Simulated and estimated step times further apart than this share are reconciled
#: (issue 23: the review says why, and runs the what-if that closes the gap).
RECONCILE_GAP = 0.10


def run_simulation(cluster: Cluster, workload: WorkloadSpec, plan: ParallelPlan,
                   order: tuple[str, ...], seed: int, progress=None,
                   routing: str | None = None) -> SimResult:
    """One iteration of ``plan`` on every accelerator of ``cluster`` (``routing``: the
    fabric's routing for a what-if; None: the simulator's default)."""
    gpus = plan.tp * plan.pp * plan.dp * plan.cp
    check_job_size(plan, cluster.accelerators, "job0")
    accelerators = reorder(np.arange(gpus, dtype=np.int64), plan, order)
    options = SimOptions(seed=seed, top=20, bins=HEATMAP_BINS)
    if routing is not None:
        options = replace(options, routing=routing)
    return simulate_jobs(cluster, [JobInput("job0", workload, plan, accelerators)],
                         options=options, progress=progress)


def heatmap_summary(result: SimResult) -> dict[str, Any]:
    """Per tier: the busiest links' names, utilisation per bin, and which are hot."""
    heat = result.tables.extra.get("heatmap", {})
    hot = {row["link"] for row in result.tables.hot_links}
    out = {}
    for tier, table in heat.items():
        links = table["links"][:HEATMAP_LINKS]
        util = [list(map(float, row)) for row in table["utilization"][:HEATMAP_LINKS]]
        if not links:
            continue
        out[tier] = {"links": links, "edges_s": table["edges_s"], "utilization": util,
                     "hot": [name in hot for name in links]}
    return out


def timeline_by_dimension(result: SimResult) -> dict[str, Any]:
    """Busy intervals of compute and of each parallel dimension's communication, merged
    across the simulator's lanes, as part rows and the group rows that hold them.

    Part rows: ``compute``, ``optimizer``, per dimension ``<dim> transfers`` (its flows)
    and ``<dim> <op> latency`` (each collective's latency phases, which the simulator
    times as delays labelled ``<dim> <op>``), and ``other_comm`` (transfers of no
    dimension). Each merges its spans, closing gaps shorter than the run /
    :data:`MAX_INTERVALS`. Group rows (``parts`` names their rows): ``<dim>`` when the
    dimension has more than one part (else the one part takes the dimension's name), and
    ``communication`` over every communication part. A group row is the exact union of its
    parts' intervals as drawn, so it covers exactly the time some part does (issue 24: a
    timeline whose group rows did not add up to their parts).
    """
    duration = max(result.tables.duration_s, 1e-300)
    by_part: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for _job, _lane, category, start, end in result.tables.timeline:
        by_part[_part_name(category)].append((start, end))
    gap = duration / MAX_INTERVALS
    parts = {name: _lane_row(merge_intervals(spans, gap), len(spans), duration)
             for name, spans in by_part.items()}
    lanes: dict[str, dict[str, Any]] = {}
    for name in ("compute", "optimizer"):
        if name in parts:
            lanes[name] = parts.pop(name)
    comm_parts: list[str] = []
    for dim in sorted({_dim_of(n) for n in parts}, key=_lane_key):
        names = sorted((n for n in parts if _dim_of(n) == dim), key=lambda n: (
            not n.endswith(" transfers"), n))
        if len(names) == 1:
            lanes[dim] = parts[names[0]]
            comm_parts.append(dim)
            continue
        lanes[dim] = _group_row([parts[n] for n in names], names, duration)
        lanes.update((n, parts[n]) for n in names)
        comm_parts += names
    if comm_parts:
        lanes["communication"] = _group_row([lanes[n] for n in comm_parts], comm_parts,
                                            duration)
    return {"duration_s": float(result.tables.duration_s), "lanes": lanes}


def _part_name(category: str) -> str:
    """The part row of a simulator timeline category (see :func:`timeline_by_dimension`)."""
    if category == "communication":
        return OTHER_COMM
    first, _, op = category.partition(" ")
    if first in PARALLEL_DIMS:
        return f"{first} {op} latency" if op else f"{first} transfers"
    return category


def _dim_of(part: str) -> str:
    first = part.split(" ")[0]
    return first if first in PARALLEL_DIMS else part


def _group_row(rows: list[dict[str, Any]], names: list[str], duration: float
               ) -> dict[str, Any]:
    """The row covering exactly the union of ``rows``' intervals."""
    union = merge_intervals([tuple(iv) for r in rows for iv in r["intervals"]], 0.0)
    return {**_lane_row(union, sum(r["transfers"] for r in rows), duration),
            "parts": list(names)}


def merge_intervals(spans: list[tuple[float, float]] | list[tuple[Any, ...]], gap: float
                    ) -> list[list[float]]:
    """``[start, end]`` spans sorted and merged where they overlap, touch or lie less than
    ``gap`` seconds apart (0: the exact union)."""
    merged: list[list[float]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1] + gap:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return merged


def _lane_row(merged: list[list[float]], transfers: int, duration: float) -> dict[str, Any]:
    busy = float(sum(e - s for s, e in merged))
    return {"intervals": merged, "busy_s": busy, "busy_share": busy / duration,
            "transfers": transfers}


def _lane_key(category: str) -> tuple[int, str]:
    return (LANES.index(category) if category in LANES else len(LANES), category)


def simulation_results(result: SimResult) -> dict[str, Any]:
    """The run's JSON dict plus the report's heatmap and timeline summaries."""
    out = result.to_dict()
    out["heatmap"] = heatmap_summary(result)
    out["timeline_by_dimension"] = timeline_by_dimension(result)
    return out


def routing_what_if(cluster: Cluster, workload: WorkloadSpec, plan: ParallelPlan,
                    order: tuple[str, ...], seed: int, sim: dict[str, Any]
                    ) -> dict[str, Any] | None:
    """The same iteration with adaptive routing on the fabric, when the simulated step is
    more than :data:`RECONCILE_GAP` off the estimate or a link is busier than the
    ``link_utilisation`` line, and the run routed otherwise (``{"routing", "step_time_s",
    "busiest_link_utilization"}``); None when no what-if is needed."""
    est, step = sim["estimate_step_time_s"], sim["step_time_s"]
    busiest = max((row["max"] for row in sim["link_utilization"].values()), default=0.0)
    apart = bool(est) and abs(step - est) / est > RECONCILE_GAP
    if not (apart or busiest > HOT_UTILIZATION) or sim["options"].get("routing") == "adaptive":
        return None
    run = run_simulation(cluster, workload, plan, order, seed, routing="adaptive")
    util = run.to_dict()["link_utilization"]
    return {"routing": "adaptive", "step_time_s": float(run.step_time_s),
            "busiest_link_utilization": max((row["max"] for row in util.values()),
                                            default=0.0)}

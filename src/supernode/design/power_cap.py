"""Power cap against fewer racks: what a facility short of power gets from each lever.

A data hall whose power budget (``facility.power_available_kw``) is below the design's peak
at TDP can cap every accelerator's board power (DVFS: the SM clock falls, GEMMs and fused
attention slow, HBM-bound work and the fabric do not) or build fewer supernodes. For the
reviewed plan this module prices a ladder of caps with the step-time model at the capped
clock (:meth:`supernode.estimate.system.SystemModel.at_power_limit`) and the facility
model at the capped board power: step time, tokens/s, GPU energy per token, rack and
cluster power. The highest cap that fits the budget is priced too, and set against
cutting whole supernodes at TDP, whose throughput is taken as the uncapped rate per GPU
times the GPUs kept (the data-parallel width shrinks; an assumption, said so).
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

from supernode.catalog.power import board_power_w, power_assumptions
from supernode.estimate.model import estimate_plan
from supernode.estimate.system import SystemModel
from supernode.facility import WorkloadUse, facility_report
from supernode.spec.plan import ParallelPlan
from supernode.spec.resolved import Cluster
from supernode.spec.workload import WorkloadSpec
from supernode.topology.metrics import TopologyReport

#: The ladder of caps priced, as shares of TDP (down to the DVFS curve's lowest).
CAP_SHARES = (1.0, 0.9, 0.8, 0.7, 0.6, 0.5)


def _row(cluster: Cluster, topo: TopologyReport, workload: WorkloadSpec, plan: ParallelPlan,
         system: SystemModel, cap_w: float, available_w: float | None) -> dict[str, Any]:
    """One cap: the plan's step on the capped system and the facility at that cap."""
    capped = system.at_power_limit(cap_w)
    est = estimate_plan(workload, plan, capped)
    p = est.power
    tokens = est.tokens_per_s * est.step_time_s
    chip = replace(cluster.accelerator, power_limit_w=cap_w)
    fac = facility_report(replace(cluster, accelerator=chip), topo,
                          WorkloadUse(p["busy_s"] / est.step_time_s, est.step_time_s, tokens))
    peak = fac.power["cluster_at_tdp_w"]
    return {"power_limit_w": cap_w, "sustained_clock_ratio": capped.clock_ratio,
            "step_time_s": est.step_time_s, "tokens_per_s": est.tokens_per_s,
            "mfu": est.mfu, "energy_per_token_j": p["energy_per_token_j"],
            "rack_w": fac.power["rack"]["total_w"], "cluster_peak_w": peak,
            "cluster_at_workload_w": fac.power["cluster_at_workload_w"],
            "fits_budget": None if available_w is None else bool(peak <= available_w)}


def power_cap_trade(cluster: Cluster, topo: TopologyReport, workload: WorkloadSpec,
                    plan: ParallelPlan, system: SystemModel) -> dict[str, Any]:
    """``facility.power_cap`` of ``results.json``: the ladder of caps, the cap that fits the
    budget (if any) and the fewer-supernodes alternative (W, s, J, tokens/s)."""
    facility = cluster.spec.facility
    available = (facility.power_available_kw * 1e3
                 if facility is not None and facility.power_available_kw else None)
    tdp = board_power_w(cluster.accelerator.tdp_w)[0]
    base = replace(system, notes=())
    rows = [_row(cluster, topo, workload, plan, base, round(s * tdp, 1), available)
            for s in CAP_SHARES]
    at_tdp = rows[0]
    short = available is not None and at_tdp["cluster_peak_w"] > available
    fitting_cap = None
    if short and available is not None:
        # the peak is affine in the cap (every accelerator's board power and its share of
        # fans and PSU loss): solve between the TDP row and the lowest row
        low = rows[-1]
        slope = (at_tdp["cluster_peak_w"] - low["cluster_peak_w"]) / (tdp - low["power_limit_w"])
        cap = tdp - (at_tdp["cluster_peak_w"] - available) / slope if slope > 0 else -1.0
        if cap >= low["power_limit_w"]:
            fitting_cap = _row(cluster, topo, workload, plan, base, math.floor(cap), available)
    fewer = None
    if short and available is not None:
        kept = min(cluster.supernodes, math.floor(cluster.supernodes * available
                                                  / at_tdp["cluster_peak_w"]))
        share = kept / cluster.supernodes
        fewer = {"supernodes": kept, "of_supernodes": cluster.supernodes,
                 "gpus": kept * cluster.scale_up.size,
                 "tokens_per_s": at_tdp["tokens_per_s"] * share,
                 "cluster_peak_w": at_tdp["cluster_peak_w"] * share,
                 "energy_per_token_j": at_tdp["energy_per_token_j"],
                 "rack_w": at_tdp["rack_w"]}
    return {
        "tdp_w": tdp, "available_w": available, "budget_short": short,
        "caps": rows, "fitting_cap": fitting_cap, "fewer_supernodes": fewer,
        "recommended": _recommend(short, fitting_cap, fewer),
        "source": power_assumptions().dvfs.source,
        "notes": ["fewer supernodes: tokens/s is the TDP rate per GPU times the GPUs kept "
                  "(a narrower data-parallel width, same plan per replica), peak power in "
                  "proportion; an estimate, not a re-plan"] if fewer else [],
    }


def _recommend(short: bool, cap: dict[str, Any] | None, fewer: dict[str, Any] | None) -> str:
    """Which lever gives more tokens/s within the budget (or that none is needed)."""
    if not short:
        return "none needed: the design fits its power budget at TDP (or states none)"
    if cap is None:
        return "fewer supernodes: no cap the DVFS curve covers fits the budget"
    if fewer is None or fewer["supernodes"] == 0 or cap["tokens_per_s"] >= fewer["tokens_per_s"]:
        return (f"cap at {cap['power_limit_w']:,.0f} W: more tokens/s than cutting "
                f"supernodes within the same budget")
    return "fewer supernodes: more tokens/s than the cap that fits"

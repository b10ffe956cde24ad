"""The decision log (MADR style), pre-filled from what the planner, simulator and rules
found: context, options considered with their predicted figures, the proposed decision,
and its consequences (seed 000 §5.3, seed 003 §5.4).

Every figure of an option is a result already computed by a stage, or (for the cooling
options) the facility model evaluated for each liquid share; the records are data in
``results.json``, rendered by the report.
"""

from __future__ import annotations

from typing import Any

from supernode.design.reliability import policy_summary
from supernode.design.scheduling import placement_record
from supernode.facility.cooling import cooling_plan
from supernode.facility.data import facility_data
from supernode.planner.fit import MIN_USEFUL_SPEEDUP
from supernode.reliability.assess import WHAT_IF_RUNS
from supernode.spec.cluster import FacilitySpec, RackSpec
from supernode.spec.resolved import Cluster

#: Rules about the scale-out fabric (the fabric decision's options and consequences).
SCALE_OUT_RULES = ("no_oversubscription", "fabric_hops", "scale_out_links_per_supernode",
                   "growth_headroom")


def _fig(label: str, value: Any, unit: str) -> dict[str, Any]:
    return {"label": label, "value": value, "unit": unit}


def _failed(data: dict[str, Any], category: str) -> list[dict[str, Any]]:
    return [f for f in data["findings"] if f["failed"] and f["category"] == category]


def _consequences(findings: list[dict[str, Any]], fallback: str) -> list[str]:
    out = [f"{f['severity']} {f['id']}: {f['detail']}" for f in findings]
    return out or [fallback]


def _plan_record(data: dict[str, Any]) -> dict[str, Any]:
    plans, view = data["plans"], data["reviewed_plan"]
    options = []
    for p in plans["plans"]:
        name = f"TP={p['tp']} PP={p['pp']} DP={p['dp']} CP={p['cp']} EP={p['ep']} " \
               f"[{p['rank_order']}]"
        chosen = view is not None and view["source"] == "planner" and p["rank"] == 1
        options.append({"name": name, "chosen": chosen, "figures": [
            _fig("step time", p["step_time_s"], "s"), _fig("MFU", p["mfu"], "share"),
            _fig("communication share", p["comm_compute"]["share"], "share"),
            _fig("memory per GPU", p["memory_per_gpu_bytes"], "bytes")]})
    if view is not None and view["source"] == "given":
        options.insert(0, {"name": f"given plan TP={view['tp']} PP={view['pp']} "
                                   f"DP={view['dp']} CP={view['cp']} EP={view['ep']}",
                           "chosen": True, "figures": [
                               _fig("step time", view["step_time_s"], "s"),
                               _fig("MFU", view["mfu"], "share"),
                               _fig("communication share", view["comm_share"], "share"),
                               _fig("memory per GPU", view["memory_per_gpu_bytes"], "bytes")]})
    decision = ("no plan fits: see the planner's advice" if view is None else
                f"run {options[0]['name']} ("
                f"{'the plan given' if view['source'] == 'given' else 'the planner best'})")
    consequences = _consequences(_failed(data, "plan"), "every plan rule holds")
    sim = data["simulation"]
    if sim is not None:
        consequences.append(f"simulated step {sim['step_time_s']:.3g} s against the "
                            f"estimate {sim['estimate_step_time_s']:.3g} s; "
                            f"{sum(sim['hot_link_counts'].values()):,} links hot for part "
                            "of the iteration")
    return {"id": "D1", "title": "Parallel plan of the workload", "status": "proposed",
            "context": f"{data['workload']['name']} on {data['cluster']['accelerators']:,} "
                       f"{data['cluster']['accelerator']} in supernodes of "
                       f"{data['cluster']['scale_up']['size']}; global batch "
                       f"{plans['global_batch_sequences']:,} sequences",
            "options": options, "decision": decision, "consequences": consequences}


def _fit_record(data: dict[str, Any]) -> dict[str, Any] | None:
    fit = data["fit"]
    if fit is None:
        return None
    size = data["cluster"]["scale_up"]["size"]
    options = []
    for row in fit["sizes"]:
        figs = [_fig("feasible", row["feasible"], "bool")]
        if row["feasible"]:
            figs += [_fig("step time", row["step_time_s"], "s"),
                     _fig("communication share", row["comm_share"], "share"),
                     _fig("cost per million tokens", row["cost_per_million_tokens_usd"], "usd")]
        options.append({"name": f"{row['scale_up_size']}-GPU domains",
                        "chosen": row["scale_up_size"] == size, "figures": figs})
    return {"id": "D2", "title": "Supernode size", "status": "proposed",
            "context": f"is {data['workload']['name']} communication-bound enough to need a "
                       f"supernode (seed 001 §1.3)? Prices: {_price_context(data)}",
            "options": options, "decision": _size_decision(fit, size),
            "consequences": [fit["questions"]["verdict"]]}


def _price_context(data: dict[str, Any]) -> str:
    econ = data["economics"]
    gpu, premium = econ["gpu_hour"], econ["supernode_premium"]
    return (f"${gpu['value']:.2f} per GPU-hour ({gpu['source']}) for this design's domains; "
            f"8-GPU servers of the same chips at that price / (1 + the {premium['value']:.0%} "
            f"supernode premium, {premium['source']}); both options at the estimated step")


def _size_decision(fit: dict[str, Any], size: int) -> str:
    """The size the numbers support: the cheapest per token, unless a faster one is
    faster by at least the planner's useful speedup (5 %, then time to train decides) —
    said with the figures either way."""
    rows = {r["scale_up_size"]: r for r in fit["sizes"] if r["feasible"]}
    mine = rows.get(size)
    if mine is None or len(rows) < 2:
        return f"{size}-GPU supernodes (the only size planned)"
    cheapest = min(rows.values(), key=lambda r: r["cost_per_million_tokens_usd"])
    if cheapest is mine:
        return (f"{size}-GPU supernodes: the cheapest per token "
                f"(${mine['cost_per_million_tokens_usd']:.2f} per million)")
    faster = cheapest["step_time_s"] / mine["step_time_s"]
    more = mine["cost_per_million_tokens_usd"] / cheapest["cost_per_million_tokens_usd"] - 1
    if faster >= MIN_USEFUL_SPEEDUP:
        return (f"{size}-GPU supernodes: {faster - 1:.1%} faster a step than "
                f"{cheapest['scale_up_size']}-GPU domains (time to train decides), at "
                f"{more:.0%} more per token (${mine['cost_per_million_tokens_usd']:.2f} vs "
                f"${cheapest['cost_per_million_tokens_usd']:.2f} per million)")
    return (f"{cheapest['scale_up_size']}-GPU domains: {more:.0%} cheaper per token than "
            f"{size}-GPU supernodes, which are only {faster - 1:.1%} faster a step "
            f"(< {MIN_USEFUL_SPEEDUP - 1:.0%}); this design's domain size does not pay")


def _fabric_record(data: dict[str, Any]) -> dict[str, Any] | None:
    out = data["cluster"]["scale_out"]
    if out is None:
        return None
    topo = data["topology"]
    current = {"name": f"{out['tiers']}-tier {out['switch']}, oversubscription "
                       + ":".join(f"{r:g}" for r in out["oversubscription"] or [1.0]),
               "chosen": True, "figures": [
                   _fig("switches", sum(out["switches"].values()), "count"),
                   _fig("hops", topo["diameter_hops"]["scale_out"], "count"),
                   _fig("scale-out per supernode",
                        topo["scale_out_bandwidth_per_supernode_bytes_per_s"], "bytes_per_s")]}
    options = [current]
    scale_out = [f for f in _failed(data, "fabric") if f["id"] in SCALE_OUT_RULES]
    for f in scale_out:
        if f["predicted_effect"]:
            options.append({"name": f"fix {f['id']}: {f['fix']}", "chosen": False,
                            "figures": [_fig("predicted", f["predicted_value"], f["unit"])]
                            if f["predicted_value"] is not None else [],
                            "note": f["predicted_effect"]})
    return {"id": "D3", "title": "Scale-out fabric", "status": "proposed",
            "context": f"{data['cluster']['supernodes']:,} supernodes joined by "
                       f"{out['nics_per_host']} NIC port(s) per host",
            "options": options, "decision": current["name"],
            "consequences": _consequences(scale_out, "every scale-out rule holds")}


def _cooling_record(data: dict[str, Any], cluster: Cluster) -> dict[str, Any]:
    fac = data["facility"]
    rack_w = fac["power"]["rack"]["total_w"]
    facility = cluster.spec.facility or FacilitySpec()
    stated = fac["racks"]["cooling"]
    options = []
    for name, key in (("air", "air"), ("cold plate (hybrid)", "hybrid"),
                      ("immersion", "immersion")):
        share = facility_data()["liquid_heat_fraction"][key]
        plan = cooling_plan(rack_w, fac["racks"]["compute_racks"], 0.0,
                            RackSpec(hosts_per_rack=1, liquid_heat_fraction=share), facility)
        chosen = (stated or "air") == key or (key == "hybrid" and stated == "liquid")
        options.append({"name": name, "chosen": chosen, "figures": [
            _fig("to air per rack", plan["air_heat_per_rack_w"], "w"),
            _fig("coolant per rack", plan["flow_per_rack_l_per_min"], "l_per_min")]})
    return {"id": "D4", "title": "Cooling", "status": "proposed",
            "context": f"racks of {rack_w / 1e3:,.1f} kW in a room with "
                       + (f"{fac['cooling']['room_air_capacity_per_rack_w'] / 1e3:,.1f} kW of "
                          "air per rack" if fac["cooling"]["room_air_capacity_per_rack_w"]
                          else "no stated air capacity"),
            "options": options, "decision": f"{stated or 'air (not stated)'} cooling",
            "consequences": _consequences(
                [f for f in _failed(data, "facility") if "coolant" in f["id"]
                 or "air" in f["id"] or f["id"] == "cdu_redundancy"], "every cooling rule holds")}


def _power_record(data: dict[str, Any]) -> dict[str, Any]:
    fac = data["facility"]
    d, feeds = fac["distribution"], fac["feeds"]
    options = [{"name": "row PDUs", "chosen": d["recommended"] == "pdu",
                "figures": [_fig("PDUs per feed", d["pdus_per_feed"], "count")]},
               {"name": "busbar", "chosen": d["recommended"] == "busbar", "figures": []}]
    return {"id": "D5", "title": "Power distribution and feeds", "status": "proposed",
            "context": f"peak IT load {fac['power']['cluster_at_tdp_w'] / 1e3:,.0f} kW; "
                       f"{feeds['scheme']}",
            "options": options, "decision": f"{d['recommended']} distribution, "
                                            f"{feeds['scheme']}",
            "consequences": _consequences(
                [f for f in _failed(data, "facility") if "power" in f["id"]
                 or "busbar" in f["id"]], "every power rule holds")}


def _nearest(grid: list[float], value: float) -> int:
    return min(range(len(grid)), key=lambda i: abs(grid[i] - value))


def _interval_options(rel: dict[str, Any]) -> list[dict[str, Any]]:
    """Checkpoint intervals: Daly's (the model's choice), Young's, the simulated best; those
    that fall on the same scored interval are one option."""
    c, mc = rel["checkpoint"], rel["goodput"]["monte_carlo"]
    grid, means = mc["interval_grid_s"], mc["goodput_by_interval"]
    groups: dict[int, list[tuple[str, bool]]] = {}
    for name, interval, chosen in (("Daly's", c["chosen_interval_s"], True),
                                   ("Young's", c["young_interval_s"], False),
                                   ("the simulated best", mc["best_interval_s"], False)):
        groups.setdefault(_nearest(grid, interval), []).append((name, chosen))
    return [{"name": f"checkpoint every {grid[i] / 60:.3g} min of work "
                     f"({' = '.join(n for n, _ in rows)} interval)",
             "chosen": any(ch for _, ch in rows),
             "figures": [_fig("interval", grid[i], "s"),
                         _fig("Monte Carlo goodput", means[i], "fraction")]}
            for i, rows in groups.items()]


POLICY_NAMES = {"restart": "restart from the checkpoint on a spare host",
                "shrink": "isolate the failed host and shrink data parallelism until a "
                          "spare joins"}


def _policy_options(rel: dict[str, Any], alt: dict[str, Any] | None) -> list[dict[str, Any]]:
    """Recovery paths: the review's one policy (``recovery_decision``, chosen by the
    reliability stage) and the other one, with their figures."""
    rows = [policy_summary(rel)] + ([alt] if alt else [])
    policy = rel["recovery_decision"]["policy"]
    return [{"name": POLICY_NAMES[r["policy"]], "chosen": r["policy"] == policy, "figures": [
        _fig("recovery", r["recovery_s"], "s"), _fig("RTO", r["rto_s"], "s"),
        _fig("Monte Carlo goodput", r["monte_carlo_goodput"], "fraction"),
        _fig("analytic goodput", r["analytic_goodput"], "fraction")]} for r in rows]


def _what_if_options(rel: dict[str, Any]) -> list[dict[str, Any]]:
    """The reliability model's what-ifs (spares, hot standby, checkpoint bandwidth), each
    scored on the first runs of the Monte Carlo (common random numbers)."""
    runs = min(WHAT_IF_RUNS, rel["goodput"]["monte_carlo"]["runs"])
    return [{"name": f"what if {w['knob']} {w['value']:,.4g} (now {w['current']:,.4g})",
             "chosen": False, "figures": [
                 _fig("Monte Carlo goodput", w["monte_carlo_goodput"], "fraction"),
                 _fig("analytic goodput", w["analytic_goodput"], "fraction"),
                 _fig("interval", w["interval_s"], "s")],
             "note": (f"{w['delta_vs_base']:+.4f} goodput vs now (paired on the first "
                      f"{runs:,} runs, added to the mean of all of them)"
                      if abs(w["delta_vs_base"]) >= 5e-5 else
                      f"no change at four decimals vs now (paired on the first {runs:,} "
                      "runs)")}
            for w in rel["what_if"]]


def _checkpoint_record(data: dict[str, Any], alt: dict[str, Any] | None
                       ) -> dict[str, Any] | None:
    """D6: checkpoint interval and recovery path, from the reliability result."""
    rel = data["reliability"]
    if rel is None:
        return None
    c, inter = rel["checkpoint"], rel["interruptions"]
    mc = rel["goodput"]["monte_carlo"]
    policies = _policy_options(rel, alt)
    policy = next(o["name"] for o in policies if o["chosen"])
    g = mc["goodput"]
    mtbf = ("nothing restarts the job" if inter["job_mtbf_s"] is None else
            f"MTBF {inter['job_mtbf_s'] / 3600:.3g} h")
    consequences = _consequences(_failed(data, "reliability"),
                                 "every reliability rule holds")
    rec = rel["recovery"]
    consequences += [
        f"recovery policy {rec['policy']} ({rel['recovery_decision']['why']}): one recovery "
        f"{policy_summary(rel)['recovery_s'] / 60:.3g} min, RTO {rec['rto_s'] / 60:.3g} min",
        f"Monte Carlo goodput {g['mean']:.4f} ± {g['standard_error']:.4f} (p5 {g['p5']:.4f}) "
        f"over {mc['runs']:,} runs of {mc['horizon_s'] / 86_400:g} days; analytic "
        f"{rel['goodput']['analytic']:.4f}",
        f"each checkpoint stops training {c['blocking_s']:.3g} s and is written in "
        f"{c['write_s']:.3g} s; a restart loads it in {c['read_s']:.3g} s"]
    return {"id": "D6", "title": "Checkpoint interval and recovery path", "status": "proposed",
            "context": f"{rel['job']['gpus']:,} GPUs: {inter['interruptions_per_day']:.3g} job "
                       f"interruptions per day ({mtbf}); a checkpoint of "
                       f"{c['size_bytes'] / 1e12:.3g} TB ({c['mode']}) to storage at "
                       f"{c['write_bytes_per_s'] / 1e9:,.0f} GB/s",
            "options": _interval_options(rel) + policies + _what_if_options(rel),
            "decision": f"checkpoint every {c['chosen_interval_s'] / 60:.3g} min of work "
                        f"({c['mode']}, Daly's interval); on a failure, {policy}",
            "consequences": consequences}


def decision_records(data: dict[str, Any], cluster: Cluster,
                     reliability_alternative: dict[str, Any] | None = None
                     ) -> list[dict[str, Any]]:
    """Every decision record of the design (MADR fields). ``reliability_alternative``: the
    other recovery policy's figures (:func:`supernode.design.reliability.policy_summary`)."""
    records = [_plan_record(data), _fit_record(data), _fabric_record(data),
               _cooling_record(data, cluster), _power_record(data),
               _checkpoint_record(data, reliability_alternative), placement_record(data)]
    return [r for r in records if r is not None]

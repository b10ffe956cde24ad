"""The decision log (MADR style), pre-filled from what the planner, simulator and rules
found: context, options considered with their predicted figures, the proposed decision,
and its consequences (seed 000 §5.3, seed 003 §5.4).

Every figure of an option is a result already computed by a stage, or (for the cooling
options) the facility model evaluated for each liquid share; the records are data in
``results.json``, rendered by the report.
"""

from __future__ import annotations

from typing import Any

from supernode.facility.cooling import cooling_plan
from supernode.facility.data import facility_data
from supernode.spec.cluster import FacilitySpec, RackSpec
from supernode.spec.resolve import Cluster

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
                       f"supernode (seed 001 §1.3)?", "options": options,
            "decision": f"{size}-GPU supernodes", "consequences": [fit["questions"]["verdict"]]}


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


def decision_records(data: dict[str, Any], cluster: Cluster) -> list[dict[str, Any]]:
    """Every decision record of the design (MADR fields)."""
    records = [_plan_record(data), _fit_record(data), _fabric_record(data),
               _cooling_record(data, cluster), _power_record(data)]
    return [r for r in records if r is not None]

"""Rules on power, cooling, floor and cabling (seed 000 §3.3; seed 001 §3.1-3.4, §4.4,
§5). Limits stated by the facility (room air per rack, floor rating, power available)
are the design's own; the pack holds the seeds' thresholds."""

from __future__ import annotations

from supernode.rules._fmt import kw, num, pct
from supernode.rules.facts import Facts
from supernode.rules.registry import Outcome, Threshold, check, number, rule, window

LIQUID = ("liquid", "hybrid", "immersion")


def _rack_w(facts: Facts) -> float:
    return facts.facility["power"]["rack"]["total_w"]


@rule("rack_air_load", "Rack heat left to air <= the room's air capacity per rack",
      "seed 000 §3.3, seed 001 §3.2", "kW", "<=", "facility", """
      An air-cooled room removes 8-12 kW per rack position; a supernode rack draws 100-200
      kW. Whatever the liquid loop does not take (about 20 % with cold plates) lands on
      the room's air: that residue must fit the room's capacity per rack, or the racks
      throttle and the hot aisle exceeds its limits.""")
def rack_air_load(facts: Facts, threshold: Threshold) -> Outcome:
    """Air heat per rack against ``facility.room_cooling_kw_per_rack``."""
    cool = facts.facility["cooling"]
    cap = cool["room_air_capacity_per_rack_w"]
    air = cool["air_heat_per_rack_w"]
    if cap is None:
        return Outcome("not_evaluated", air / 1e3, f"{kw(air)} to air per rack; state "
                       "facility.room_cooling_kw_per_rack")
    liquid_air = _rack_w(facts) * 0.2
    return check(air <= cap, air / 1e3, f"{kw(air)} to air per rack against {kw(cap)} "
                 f"of room air per rack ({pct(cool['liquid_fraction'])} to liquid)",
                 "cold-plate liquid cooling (80 % of the heat to liquid), or fewer hosts per "
                 "rack", f"{kw(liquid_air)} to air per rack with cold plates",
                 liquid_air / 1e3, cap / 1e3)


@rule("liquid_above_air_limit", "Racks above the air-cooled limit are liquid-cooled",
      "seed 000 §3.3, seed 001 §3.2", "kW", "<=", "facility", """
      Above the room's air capacity (an air-cooled room: 8-12 kW per rack) air cannot
      carry the heat away at sane air speeds and outlet temperatures (120 kW by air blows
      60 °C air); liquid cooling becomes mandatory, not optional.""")
def liquid_above_air(facts: Facts, threshold: Threshold) -> Outcome:
    """Rack power against the room's air limit (stated, else the seed's 12 kW), and the
    rack's cooling."""
    rack = _rack_w(facts)
    cooling = facts.facility["racks"]["cooling"]
    room = facts.facility["cooling"]["room_air_capacity_per_rack_w"]
    limit = room if room is not None else number(threshold) * 1e3
    ok = rack <= limit or cooling in LIQUID
    where = "the room's stated air capacity" if room is not None else "an air-cooled room"
    return check(ok, rack / 1e3, f"{kw(rack)} per rack, cooling {cooling or 'not stated'}; "
                 f"{where}: {kw(limit)} per rack",
                 "set racks.cooling to liquid or hybrid (cold plate) and give the room a "
                 "coolant loop", f"{kw(rack * 0.8)} per rack to liquid, {kw(rack * 0.2)} "
                 "to air", rack * 0.2 / 1e3, limit / 1e3)


@rule("rack_power_budget", "Rack power within its stated budget", "seed 001 §3.1", "kW",
      "<=", "facility", """
      The rack's power budget sizes its feeds, shelves and distribution; a rack whose
      parts draw more than its budget trips breakers at full load.""")
def rack_power_budget(facts: Facts, threshold: Threshold) -> Outcome:
    """Rack power from parts against ``racks.power_kw``."""
    rack = facts.facility["power"]["rack"]
    if rack["budget_w"] is None:
        return Outcome("not_evaluated", rack["total_w"] / 1e3, "no racks.power_kw stated")
    return check(rack["total_w"] <= rack["budget_w"] * (1 + 1e-9), rack["total_w"] / 1e3,
                 f"{kw(rack['total_w'])} from parts vs a {kw(rack['budget_w'])} budget",
                 "raise racks.power_kw or put fewer hosts in a rack",
                 f"budget >= {kw(rack['total_w'])}", rack["total_w"] / 1e3,
                 rack["budget_w"] / 1e3)


@rule("power_headroom", "Power headroom >= 10 % over the peak IT load", "seed 001 §3.1",
      "share", ">=", "facility", """
      Training runs for weeks and any unplanned power loss loses progress; the seed keeps
      about 10 % power headroom on supernode racks so that peaks and growth never trip
      the feed.""")
def power_headroom(facts: Facts, threshold: Threshold) -> Outcome:
    """1 - peak IT power / power available."""
    f = facts.facility["feeds"]
    peak = facts.facility["power"]["cluster_at_tdp_w"]
    need = peak / (1 - number(threshold))
    if f["headroom"] is None:
        return Outcome("not_evaluated", None, f"peak {kw(peak)}; state "
                       f"facility.power_available_kw (>= {kw(need)})")
    return check(f["headroom"] >= number(threshold) - 1e-12, f["headroom"],
                 f"peak {kw(peak)} of {kw(f['available_w'])} available: "
                 f"{pct(f['headroom'])} headroom", f"provide at least {kw(need)} of IT power",
                 f"{pct(number(threshold))} headroom", number(threshold))


@rule("power_feeds", "Redundant feeds: N+X with X >= 1 (utility + UPS)", "seed 001 §3.1",
      "feeds", ">=", "facility", """
      A rack that loses power loses the training step and may corrupt state; the seed
      runs one utility feed plus one UPS feed, each able to carry the load. X should be
      neither zero (no redundancy) nor so large that cost explodes.""")
def power_feeds(facts: Facts, threshold: Threshold) -> Outcome:
    """Feeds that may fail while the rest carry the load."""
    f = facts.facility["feeds"]
    ok = f["redundancy"] >= number(threshold) and f["feeds"] > f["redundancy"]
    return check(ok, float(f["redundancy"]), f"{f['scheme']}: each feed sized for "
                 f"{kw(f['per_feed_capacity_w'])}" if f["feeds"] > f["redundancy"] else
                 f"{f['scheme']}: no feed left to carry the load",
                 "two feeds (utility + UPS), each for the whole load: power_feeds 2, "
                 "feed_redundancy 1", "N+1 over 2 feeds", 1.0)


@rule("busbar_distribution", "Busbar distribution for racks beyond a few PDUs",
      "seed 001 §3.1", "PDUs", "<=", "facility", """
      A 120 kW rack on row PDUs needs a handful of 32 A PDUs per feed; their cables take
      the rack's rear space and block airflow. Past two PDUs per feed the seed's project
      moved to busbar power.""")
def busbar(facts: Facts, threshold: Threshold) -> Outcome:
    """PDUs per feed a rack would need, against the stated distribution."""
    d = facts.facility["distribution"]
    needs_busbar = d["pdus_per_feed"] > number(threshold)
    ok = not (needs_busbar and d["stated"] != "busbar")
    why = (f"busbar stated: the {d['pdus_per_feed']} PDUs per feed row PDUs would need "
           "are not installed" if needs_busbar and d["stated"] == "busbar" else
           f"{d['pdus_per_feed']} PDUs of {d['pdu_kw']} kW per feed; distribution "
           f"{d['stated'] or 'not stated'}")
    return check(ok, float(d["pdus_per_feed"]), why, "set racks.power_distribution: busbar",
                 "no PDU cabling in the rack", None)


@rule("coolant_delta_t_window", "Coolant rise within 5-8 °C", "seed 001 §4.4",
      "°C", "in", "facility", """
      The coolant's inlet-to-outlet rise is normally 5-8 °C. Below it the loop pumps more
      than needed; above it the cold plates run hot and the margin to the 10 °C fault line
      is gone.""")
def delta_t_window(facts: Facts, threshold: Threshold) -> Outcome:
    """Design ΔT against the [low, high] window."""
    c = facts.facility["cooling"]
    if c["liquid_fraction"] == 0:
        return Outcome("not_applicable", None, "air-cooled racks: no coolant loop")
    low, high = window(threshold)
    dt = c["delta_t_c"]
    mid = (low + high) / 2
    return check(low <= dt <= high, dt, f"design rise {dt:.1f} °C; flow "
                 f"{c['flow_per_rack_l_per_min']:,.0f} L/min per rack",
                 f"set facility.coolant_delta_t_c to {mid:.1f} °C",
                 f"{c['flow_per_rack_l_per_min'] * dt / mid:,.0f} L/min per rack", mid)


@rule("coolant_delta_t_fault", "Far-end coolant rise below the 10 °C fault line",
      "seed 001 §3.2, §4.4", "°C", "<=", "facility", """
      A rise above 10 °C means the cooling does not match the heat. The farthest rack
      sees the least flow (pressure drop along the manifold: the seed's hotspot lesson),
      so its rise is the design rise over one minus the flow imbalance; it must stay
      below the fault line.""")
def delta_t_fault(facts: Facts, threshold: Threshold) -> Outcome:
    """Far-end rise = ΔT / (1 - imbalance)."""
    c = facts.facility["cooling"]
    if c["liquid_fraction"] == 0:
        return Outcome("not_applicable", None, "air-cooled racks: no coolant loop")
    far = c["far_end_delta_t_c"]
    ok_dt = number(threshold) * (1 - c["flow_imbalance"])
    return check(far <= number(threshold), far, f"far-end rise {far:.1f} °C with "
                 f"{pct(c['flow_imbalance'])} flow imbalance",
                 f"balancing valves (less imbalance) or a design rise <= {ok_dt:.1f} °C",
                 f"far-end rise {ok_dt:.1f} °C", ok_dt)


@rule("cdu_redundancy", "CDUs N+1", "seed 001 §3.2", "CDUs", ">=", "facility", """
      The CDU pumps coolant to every cold plate; with none spare, one CDU's failure or
      service stops the racks it feeds. Size the CDUs for the liquid heat with at least
      one spare.""")
def cdu_redundancy(facts: Facts, threshold: Threshold) -> Outcome:
    """Spare CDUs beyond those the liquid heat needs."""
    cdu = facts.facility["cooling"]["cdu"]
    if not cdu["needed"]:
        return Outcome("not_applicable", None, "no liquid heat")
    spare = cdu["installed"] - cdu["needed"]
    return check(spare >= number(threshold), float(spare),
                 f"{cdu['needed']} CDU(s) of {kw(cdu['capacity_w'])} for "
                 f"{kw(cdu['liquid_heat_total_w'])} of liquid heat, {spare} spare",
                 "set facility.cdu_redundancy to 1", f"{cdu['needed'] + 1} CDUs", None)


@rule("floor_load", "Rack weight within the floor rating", "seed 001 §3.3", "kg/m²", "<=",
      "facility", """
      A full supernode rack weighs 1.5 t or more, far above a standard machine-room floor;
      with coolant manifolds, busbar and cable trays the load is a safety matter. Check
      every rack position against the floor's rating before the racks arrive.""")
def floor_load(facts: Facts, threshold: Threshold) -> Outcome:
    """Rack weight over its footprint against ``facility.floor_rating_kg_per_m2``."""
    f = facts.facility["floor"]
    if f["rating_kg_per_m2"] is None:
        heavy = f["rack_weight_kg"] >= f["heavy_rack_kg"]
        return Outcome("not_evaluated", f["load_kg_per_m2"],
                       f"{num(f['rack_weight_kg'], 0)} kg per rack"
                       + (" (a heavy rack)" if heavy else "")
                       + "; state facility.floor_rating_kg_per_m2")
    return check(f["load_kg_per_m2"] <= f["rating_kg_per_m2"], f["load_kg_per_m2"],
                 f"{num(f['rack_weight_kg'], 0)} kg on {f['footprint_m2']:.2f} m² = "
                 f"{num(f['load_kg_per_m2'], 0)} kg/m² vs {num(f['rating_kg_per_m2'], 0)}",
                 "reinforce the floor under the rack rows, or spread the load",
                 f"rating >= {num(f['load_kg_per_m2'], 0)} kg/m²", f["load_kg_per_m2"],
                 f["rating_kg_per_m2"])


@rule("aisle_clearance", "Aisles at least 1.2 m front and rear", "seed 001 §3.4", "m", ">=",
      "facility", """
      Coolant, power and fibre connect at the rear of a supernode rack and two people
      often service one rack at once; the seed's standard is at least 1.2 m front and
      rear.""")
def aisle_clearance(facts: Facts, threshold: Threshold) -> Outcome:
    """Stated aisle width."""
    aisle = facts.facility["floor"]["aisle_m"]
    return check(aisle >= number(threshold), aisle, f"{aisle:.2f} m aisles",
                 f"set facility.aisle_clearance_m to {number(threshold):.1f}",
                 f"{number(threshold):.1f} m aisles", number(threshold))


@rule("fibre_cores_per_rack", "Fibre cores per rack on a structured cabling plan",
      "seed 001 §3.3", "cores", "<=", "facility", """
      A supernode rack can pull a hundred or more fibre cores; stuffed under the floor they
      become unmaintainable. Past that count plan dedicated trays and a labelled,
      tracked cabling system (both ends labelled, physical map kept).""")
def fibre_cores(facts: Facts, threshold: Threshold) -> Outcome:
    """Fibre cores leaving one compute rack."""
    cores = facts.facility["cabling"]["fibre_cores_per_rack"]
    return check(cores <= number(threshold), float(cores),
                 f"{num(cores, 0)} fibre cores per rack",
                 "dedicated fibre trays and a labelled, tracked cabling system",
                 None)


@rule("copper_reach", "Copper links within their reach", "seed 001 §5", "m", "<=",
      "facility", """
      Passive copper's reach falls as lane rates rise: at 200 G per lane about 1-2 m. A
      copper scale-up domain spread over several racks, or copper scale-out runs across a
      row, exceed it and need optics (or co-packaged / linear-drive optics).""")
def copper_reach(facts: Facts, threshold: Threshold) -> Outcome:
    """Longest estimated copper run against the copper reach of its lane rate."""
    cab = facts.facility["cabling"]
    runs = [(layer, cab[layer]["run_m"], cab[layer]["copper_reach_m"])
            for layer in ("scale_up", "scale_out")
            if cab[layer]["medium"] == "copper" and cab[layer]["run_m"] is not None
            and cab[layer]["copper_reach_m"] is not None]
    if not runs:
        return Outcome("not_applicable", None, "no copper links between racks")
    layer, run, reach = max(runs, key=lambda r: r[1] / r[2])
    return check(run <= reach, run, f"{layer}: ~{run:.1f} m copper run vs {reach:.1f} m reach",
                 f"optical {layer} links (set its medium to optical)", None, None, reach)

"""The cooling loop: heat to liquid and to air, coolant flow, CDUs, the far-end rack.

Heat to liquid is the rack's power times the liquid share (cold plate ~80 %, immersion
100 %; seed 001 §3.2, seed 003 §2.4). Coolant flow is V = Q / (c_p · ρ · ΔT) with the
coolant's properties at the loop's mean temperature (Q = ṁ·c_p·ΔT; CoolProp tables in
``data/facility/facility.yaml``, from ``docs/reference_hardware_catalog.yaml``). The
farthest rack gets ``1 - flow_imbalance`` of its nominal flow (pressure drop along the
manifold, seed 001 §3.2), so its rise is ΔT / (1 - imbalance): the design ΔT must leave that
margin below the 10 °C fault line (seed 001 §4.4). CDUs are sized N + ``cdu_redundancy``.
"""

from __future__ import annotations

from typing import Any

from supernode.cluster.cooling import cooling_topology
from supernode.facility.data import coolant_properties, facility_data
from supernode.spec.cluster import FacilitySpec, RackSpec

LITRES_PER_M3 = 1e3
S_PER_MIN = 60.0


def liquid_fraction(racks: RackSpec | None) -> tuple[float, str]:
    """Share of heat to liquid, and where it comes from (stated or the cooling's default)."""
    if racks is not None and racks.liquid_heat_fraction is not None:
        return racks.liquid_heat_fraction, "stated"
    cooling = racks.cooling if racks is not None and racks.cooling else "air"
    source = f"default for {cooling} cooling" if racks is not None and racks.cooling \
        else "not stated: air assumed"
    return float(facility_data()["liquid_heat_fraction"][cooling]), source


def coolant_flow_m3_per_s(heat_w: float, coolant: str, inlet_c: float,
                          delta_t_c: float) -> float:
    """Volume flow that removes ``heat_w`` with a rise of ``delta_t_c`` (m^3/s):
    Q / (c_p · ρ · ΔT), properties at the mean temperature inlet + ΔT/2."""
    props = coolant_properties(coolant, inlet_c + delta_t_c / 2)
    return heat_w / (props.specific_heat_j_per_kg_k * props.density_kg_per_m3 * delta_t_c)


def cooling_plan(rack_w: float, compute_racks: int, network_w: float,
                 racks: RackSpec | None, facility: FacilitySpec,
                 racks_per_cdu: int | None = None) -> dict[str, Any]:
    """Liquid and air heat per rack, flows, CDUs and the far-end rack's rise (SI, L/min).

    The CDUs are the cluster's one cooling topology
    (:func:`supernode.cluster.cooling.cooling_topology`; ``racks_per_cdu``: the cluster's
    ``reliability.racks_per_cdu``, None for the even share)."""
    fraction, source = liquid_fraction(racks)
    liquid_w, air_w = rack_w * fraction, rack_w * (1 - fraction)
    dt, inlet = facility.coolant_delta_t_c, facility.coolant_inlet_c
    props = coolant_properties(facility.coolant, inlet + dt / 2)
    flow = coolant_flow_m3_per_s(liquid_w, facility.coolant, inlet, dt) if liquid_w else 0.0
    far_dt = dt / (1 - facility.flow_imbalance)
    total_liquid = liquid_w * compute_racks
    cdus = cooling_topology(compute_racks if liquid_w else 0, total_liquid,
                            facility.cdu_capacity_kw * 1e3, facility.cdu_redundancy,
                            racks_per_cdu)
    air_capacity = (facility.room_cooling_kw_per_rack * 1e3
                    if facility.room_cooling_kw_per_rack else None)
    return {
        "liquid_fraction": fraction, "liquid_fraction_source": source,
        "rack_heat_w": rack_w, "liquid_heat_per_rack_w": liquid_w, "air_heat_per_rack_w": air_w,
        "room_air_capacity_per_rack_w": air_capacity,
        "air_load_share_of_room": air_w / air_capacity if air_capacity else None,
        "network_air_heat_w": network_w,
        "coolant": facility.coolant, "coolant_name": props.name,
        "inlet_c": inlet, "delta_t_c": dt, "outlet_c": inlet + dt,
        "specific_heat_j_per_kg_k": props.specific_heat_j_per_kg_k,
        "density_kg_per_m3": props.density_kg_per_m3,
        "properties_source": props.source,
        "flow_per_rack_l_per_min": flow * LITRES_PER_M3 * S_PER_MIN,
        "flow_total_l_per_min": flow * compute_racks * LITRES_PER_M3 * S_PER_MIN,
        "flow_l_per_min_per_kw": (flow * LITRES_PER_M3 * S_PER_MIN / (liquid_w / 1e3)
                                  if liquid_w else None),
        "flow_imbalance": facility.flow_imbalance, "far_end_delta_t_c": far_dt,
        "far_end_outlet_c": inlet + far_dt,
        "cdu": {**cdus.to_dict(), "liquid_heat_total_w": total_liquid},
    }

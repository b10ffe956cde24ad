"""The floor: rack weight against the floor rating, rows, aisles and rack positions.

A rack's weight is the stated ``racks.weight_kg``, else the sum of its parts (hosts at their
stated or catalogued weight, an empty rack, liquid manifolds, and for a rack-scale domain its
switch trays, power shelves, NVLink spine and busbar; ``weight.*`` in the facility data). Its
load is weight over footprint (the rack's own area, the conservative reading of a floor
rating). Racks are placed in rows of ``facility.racks_per_row``, compute racks first, a
network rack at the end; rows are ``rack depth + aisle`` apart (seed 001 §3.4: >= 1.2 m).
"""

from __future__ import annotations

import math
from typing import Any

from supernode.facility.data import facility_data
from supernode.facility.hosts import host_weight_kg
from supernode.facility.racks import RackPlan
from supernode.spec.resolved import Cluster

#: Positions listed in full up to this many racks (larger floors: counts only).
MAX_LISTED_POSITIONS = 512


def rack_weight_kg(cluster: Cluster, plan: RackPlan) -> tuple[float, str]:
    """Loaded compute-rack weight (kg) and whether it was stated or summed from parts."""
    racks = cluster.spec.racks
    if racks is not None and racks.weight_kg:
        return racks.weight_kg, "stated"
    data = facility_data()["weight"]
    host_kg, _ = host_weight_kg(cluster)
    liquid = plan.cooling in ("liquid", "hybrid", "immersion")
    total = (data["empty_rack_kg"] + min(plan.hosts_per_rack, cluster.hosts) * host_kg
             + (data["liquid_manifold_kg"] if liquid else 0.0))
    if plan.switch_trays_per_rack:
        # a rack-scale domain (NVL72 class): switch trays, the power shelves feeding the
        # trays, the NVLink cable spine and the DC busbar (DGX GB200 user guide, Hardware)
        scale = data["rack_scale"]
        total += (plan.switch_trays_per_rack * scale["switch_tray_kg"]
                  + scale["power_shelves"] * scale["power_shelf_kg"]
                  + scale["nvlink_spine_kg"] + scale["busbar_kg"])
    return total, "parts"


def floor_plan(cluster: Cluster, plan: RackPlan, rows_of: int, aisle_m: float,
               rating_kg_per_m2: float | None) -> dict[str, Any]:
    """Weight, floor load, rows, area and positions of every rack."""
    racks = cluster.spec.racks
    width = racks.width_m if racks is not None else 0.6
    depth = racks.depth_m if racks is not None else 1.2
    weight, source = rack_weight_kg(cluster, plan)
    footprint = width * depth
    total = plan.racks
    rows = math.ceil(total / rows_of) if total else 0
    row_length = min(total, rows_of) * width
    area = rows * row_length * (depth + aisle_m) + (row_length * aisle_m if rows else 0.0)
    positions = []
    if total <= MAX_LISTED_POSITIONS:
        kinds = ["compute"] * plan.compute_racks + ["network"] * plan.network_racks
        positions = [{"rack": f"{'R' if k == 'compute' else 'N'}{i + 1:03d}", "kind": k,
                      "row": i // rows_of + 1, "position": i % rows_of + 1}
                     for i, k in enumerate(kinds)]
    load = weight / footprint
    return {
        "rack_weight_kg": weight, "weight_source": source,
        "heavy_rack_kg": float(facility_data()["weight"]["heavy_rack_kg"]),
        "footprint_m2": footprint, "load_kg_per_m2": load,
        "rating_kg_per_m2": rating_kg_per_m2,
        "load_share_of_rating": load / rating_kg_per_m2 if rating_kg_per_m2 else None,
        "racks": total, "compute_racks": plan.compute_racks,
        "network_racks": plan.network_racks, "rows": rows, "racks_per_row": rows_of,
        "row_length_m": row_length, "aisle_m": aisle_m, "area_m2": area,
        "positions": positions,
    }

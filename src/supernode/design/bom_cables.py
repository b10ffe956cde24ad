"""Cables of the bill of materials by type and length class: every link the topology
counts, placed on the facility's floor plan and given the cheapest type that reaches.

Length class of a link (:data:`LENGTH_CLASSES`): ``in-rack`` (both ends in one rack: the
NVLink copper spine of a rack-scale domain, a leaf-to-spine link inside one network rack),
``same row`` (adjacent racks or further along one row) or ``cross-row`` (to a network rack
in another row). Where the ends are:

* scale-up tiers: inside a rack when the domain fits one rack
  (``facility.cabling.scale_up.racks_per_domain``), else along the row (``cross-row`` when
  the domain is longer than a row), the facility's own run estimate;
* ``leaf``: each compute rack's links (its hosts' share of ``topology.cables.leaf``) spread
  evenly over the leaf switches;
* ``spine`` / ``core``: each lower switch's links spread evenly over the switches above.

Switches fill the network racks tier by tier (leaf, spine, core), ``layout.
switches_per_network_rack`` each, in the floor plan's order (compute racks first, then
network racks, rows of ``racks_per_row``: ``facility.floor``). A run is the in-rack run
(:data:`supernode.facility.cabling.IN_RACK_RUN_M`) within a rack; otherwise the distance
along the row (positions x rack width) plus, across rows, rows x (rack depth + aisle),
plus the facility's vertical run (``layout.vertical_run_m``). ASSUMPTION: this placement
(even spreading, switches by tier in floor order) is the BOM's; the facility report's
single scale-out run (half a row plus the rise) is what its copper-reach check uses.

Type: the first of the tier's medium's candidates (``data/design/cable_reach.yaml``) whose
reach at the link's lane rate covers the run; :data:`NO_TYPE` when none does. Counts per
(tier, class, type) are rounded so that each tier's rows sum to its topology count.
"""

from __future__ import annotations

import functools
import math
from collections import defaultdict
from importlib import resources
from typing import Any

import numpy as np

from supernode.facility.cabling import IN_RACK_RUN_M
from supernode.facility.data import facility_data, lookup_by_speed
from supernode.spec.loader import parse_text
from supernode.spec.resolved import Cluster
from supernode.topology.graph import FABRIC_TIERS, SCALE_UP_TIERS, cable_medium

_FILE = "data/design/cable_reach.yaml"
#: Length classes, shortest first.
LENGTH_CLASSES = ("in-rack", "same row", "cross-row")
#: Cable type of a link no listed type reaches.
NO_TYPE = "none"
#: Stocked cable lengths (m), the upper end of each: ASSUMPTION, the usual stocked lengths
#: of DAC/AOC and fibre patch cords (0.5-5 m copper, 10-100 m fibre).
LENGTH_CLASSES_M = (0.5, 1.0, 2.0, 3.0, 5.0, 10.0, 30.0, 50.0, 100.0)


@functools.cache
def cable_data() -> dict[str, Any]:
    """The parsed cable reach file (cached; treat as read-only)."""
    text = (resources.files("supernode") / _FILE).read_text(encoding="utf-8")
    return parse_text(text, source=_FILE)


def lane_gbit_per_s(port_gbit_per_s: float) -> float:
    """Lane rate (Gb/s) of a port of ``port_gbit_per_s``: the facility data's table."""
    return lookup_by_speed(facility_data()["cabling"]["lane_gbit_per_s"], port_gbit_per_s)


def type_reach_m(cable_type: str, lane_gbit: float) -> float | None:
    """Reach (m) of ``cable_type`` at ``lane_gbit`` Gb/s per lane (None: not offered)."""
    table = cable_data()["types"][cable_type]["reach_m"]
    value = {float(k): v for k, v in table.items()}.get(float(lane_gbit))
    return None if value is None else float(value)


def cable_type(medium: str, lane_gbit: float, run_m: float) -> str:
    """The first candidate type of ``medium`` (copper, optical) whose reach at
    ``lane_gbit`` covers ``run_m`` metres; :data:`NO_TYPE` when none does."""
    for name in cable_data()["candidates_by_medium"].get(medium, ()):
        reach = type_reach_m(name, lane_gbit)
        if reach is not None and run_m <= reach + 1e-9:
            return str(name)
    return NO_TYPE


def stocked_length(run_m: float | None) -> str | None:
    """The stocked cable length that covers a run of ``run_m`` metres (``<= 3 m``)."""
    if run_m is None:
        return None
    for top in LENGTH_CLASSES_M:
        if run_m <= top:
            return f"<= {top:g} m"
    return f"> {LENGTH_CLASSES_M[-1]:g} m"


def rack_positions(floor: dict[str, Any]) -> list[tuple[str, int, int]]:
    """(kind, row, position) of every rack, the floor plan's rule: compute racks first,
    then network racks, rows of ``racks_per_row`` (rows and positions from 1)."""
    per_row = max(int(floor["racks_per_row"]), 1)
    kinds = ["compute"] * floor["compute_racks"] + ["network"] * floor["network_racks"]
    return [(k, i // per_row + 1, i % per_row + 1) for i, k in enumerate(kinds)]


def _geometry(floor: dict[str, Any]) -> tuple[float, float]:
    """(rack width, row pitch = rack depth + aisle), m, from the floor plan."""
    in_row = min(floor["racks"], floor["racks_per_row"]) or 1
    width = floor["row_length_m"] / in_row if floor["row_length_m"] else 0.6
    depth = floor["footprint_m2"] / width if width else 1.2
    return width, depth + floor["aisle_m"]


def _pair_groups(lower: dict[tuple[int, int], float], upper: dict[tuple[int, int], float],
                 links: int, floor: dict[str, Any]) -> dict[tuple[str, float], float]:
    """{(class, run): links} of ``links`` spread evenly over the lower racks' and the upper
    racks' (row, position) -> weight, each pair's share the product of theirs. Runs are
    rounded to 1 cm; pairs are taken in blocks (bounded memory on large floors)."""
    width, pitch = _geometry(floor)
    vertical = float(facility_data()["layout"]["vertical_run_m"])
    low = np.array([(r, p, w) for (r, p), w in lower.items()], dtype=float)
    up = np.array([(r, p, w) for (r, p), w in upper.items()], dtype=float)
    share_up = up[:, 2] / up[:, 2].sum()
    groups: dict[tuple[str, float], float] = defaultdict(float)
    block = max(1, 2_000_000 // len(up))
    for start in range(0, len(low), block):
        part = low[start:start + block]
        drow = np.abs(part[:, :1] - up[None, :, 0])
        dpos = np.abs(part[:, 1:2] - up[None, :, 1])
        same_rack = (drow == 0) & (dpos == 0)
        cls = np.where(same_rack, 0, np.where(drow == 0, 1, 2))
        cm = np.where(same_rack, round(IN_RACK_RUN_M * 100),
                      np.rint((dpos * width + vertical + drow * pitch) * 100))
        weight = links * (part[:, 2:3] / low[:, 2].sum()) * share_up[None, :]
        keys, inverse = np.unique(cls * 10**9 + cm, return_inverse=True)
        sums = np.bincount(inverse.ravel(), weights=weight.ravel())
        for key, total in zip(keys.tolist(), sums.tolist(), strict=True):
            groups[(LENGTH_CLASSES[int(key // 10**9)], (key % 10**9) / 100)] += total
    return groups


def _switch_racks(topo: dict[str, Any], network: list[tuple[int, int]]
                  ) -> dict[str, dict[tuple[int, int], int]]:
    """Switches per tier per network rack: tiers fill racks in turn, ``layout.
    switches_per_network_rack`` each, in floor order."""
    per_rack = int(facility_data()["layout"]["switches_per_network_rack"])
    out: dict[str, dict[tuple[int, int], int]] = {}
    slot = 0
    for tier in FABRIC_TIERS:
        placed: dict[tuple[int, int], int] = defaultdict(int)
        for _ in range(int(topo["switches"].get(tier, 0))):
            rack = network[min(slot // per_rack, len(network) - 1)] if network else (0, 0)
            placed[rack] += 1
            slot += 1
        out[tier] = dict(placed)
    return out


def _fabric_groups(tier: str, links: int, data: dict[str, Any]
                   ) -> dict[tuple[str, float], float]:
    """{(class, run): links} of scale-out ``tier`` on the floor (fractional shares)."""
    floor, topo = data["facility"]["floor"], data["topology"]
    racks = rack_positions(floor)
    network = [(r, p) for k, r, p in racks if k == "network"]
    by_tier = _switch_racks(topo, network)
    upper = {k: float(v) for k, v in (by_tier.get(tier) or {}).items()}
    if tier == "leaf":
        hosts, per = data["cluster"]["hosts"], data["facility"]["racks"]["hosts_per_rack"]
        compute = [(r, p) for k, r, p in racks if k == "compute"]
        lower = {rack: float(max(min(per, hosts - i * per), 0)) for i, rack in enumerate(compute)}
    else:
        lower = {k: float(v) for k, v in by_tier.get(FABRIC_TIERS[FABRIC_TIERS.index(tier)
                                                                   - 1], {}).items()}
    low_total, up_total = sum(lower.values()), sum(upper.values())
    if not low_total or not up_total:
        return {("same row", IN_RACK_RUN_M): float(links)}
    return _pair_groups({k: v for k, v in lower.items() if v},
                        {k: v for k, v in upper.items() if v}, links, floor)


def _scale_up_groups(links: int, data: dict[str, Any]) -> dict[tuple[str, float], float]:
    """{(class, run): links} of a scale-up tier: the facility's run estimate."""
    cabling, floor = data["facility"]["cabling"]["scale_up"], data["facility"]["floor"]
    racks = cabling["racks_per_domain"]
    cls = "in-rack" if racks <= 1 else (
        "same row" if racks <= floor["racks_per_row"] else "cross-row")
    return {(cls, float(cabling["run_m"])): float(links)}


def _rounded(shares: dict[Any, float], total: int) -> dict[Any, int]:
    """Integer counts summing to ``total`` (largest remainder, ties in key order)."""
    floors = {k: math.floor(v + 1e-9) for k, v in shares.items()}
    left = total - sum(floors.values())
    order = sorted(shares, key=lambda k: (-(shares[k] - floors[k]), str(k)))
    for k in order[:max(left, 0)]:
        floors[k] += 1
    return {k: v for k, v in floors.items() if v}


def cable_groups(cluster: Cluster, data: dict[str, Any]) -> list[dict[str, Any]]:
    """Every cable of ``topology.cables`` by (tier, length class, type): count, longest
    run (m), lane rate (Gb/s), the type's reach (m) and whether its ends need transceivers;
    each tier's counts sum to its topology count."""
    so = cluster.scale_out
    out = []
    for tier, count in data["topology"]["cables"].items():
        if not count:
            continue
        up = tier in SCALE_UP_TIERS
        medium = cluster.scale_up.medium if up else cable_medium(so.medium if so else "",
                                                                 tier)
        port = cluster.scale_up.link_bandwidth_bytes_per_s if up else \
            cluster.host.nic_bandwidth_bytes_per_s
        lane = lane_gbit_per_s(port * 8 / 1e9)
        if tier in FABRIC_TIERS:
            shares = _fabric_groups(tier, count, data)
        else:
            shares = _scale_up_groups(count, data) if up else \
                {("in-rack", IN_RACK_RUN_M): float(count)}
        typed: dict[tuple[str, str], float] = defaultdict(float)
        runs: dict[tuple[str, str], float] = defaultdict(float)
        for (cls, run), n in shares.items():
            key = (cls, cable_type(medium, lane, run))
            typed[key] += n
            runs[key] = max(runs[key], run)
        for (cls, kind), n in sorted(_rounded(typed, int(count)).items(),
                                     key=lambda kv: (LENGTH_CLASSES.index(kv[0][0]),
                                                     kv[0][1])):
            entry = cable_data()["types"].get(kind)
            out.append({"tier": tier, "length_class": cls, "cable_type": kind, "count": n,
                        "run_m": runs[(cls, kind)], "lane_gbit_per_s": lane,
                        "medium": medium, "reach_m": type_reach_m(kind, lane)
                        if entry else None,
                        "part": entry["part"] if entry else
                        f"no listed cable type reaches {runs[(cls, kind)]:.1f} m",
                        "transceivers": bool(entry and entry["transceivers"])})
    return out

"""The bill of materials of a design: every part to buy, counted from the models that
already count it, and priced from the one price model.

Counts are never recomputed here: accelerators and hosts from the cluster, switches,
cables and optical modules per tier from the topology report (``results.json`` ->
``topology``; modules split into host and switch ends by
:func:`supernode.topology.metrics.module_ends`), racks, PDUs (or busbar feeds) and CDUs
from the facility report (``facility``), so the BOM and the facility section show the same
numbers. Cable length classes come from the facility's estimated runs
(``facility.cabling``). Checkpoint storage is sized from the reliability section's
checkpoint (``reliability.checkpoint``, its size the memory model's model-state bytes):
the write bandwidth that finishes one checkpoint within its interval, and the capacity of
:data:`RETAINED_CHECKPOINTS` of them. Unit prices: :func:`supernode.design.prices.unit_price`
(``economics.unit_prices_usd``, else "no price"). ``results.json`` -> ``bom``;
``bom.csv`` (:func:`supernode.report.bom_csv.bom_csv`).
"""

from __future__ import annotations

from typing import Any

from supernode.design.prices import unit_price
from supernode.errors import InputError
from supernode.spec.resolved import Cluster
from supernode.topology.graph import FABRIC_TIERS, SCALE_UP_TIERS, cable_medium
from supernode.topology.metrics import module_ends

#: Checkpoints kept on storage. ASSUMPTION: the last three (a restart point, the one
#: before in case it is corrupt, and one being written), NeMo's checkpoint callback
#: default ``save_top_k: 3``.
RETAINED_CHECKPOINTS = 3
#: Cable length classes (m), the upper end of each: ASSUMPTION, the usual stocked lengths
#: of DAC/AOC and fibre patch cords (0.5-5 m copper, 10-100 m fibre).
LENGTH_CLASSES_M = (0.5, 1.0, 2.0, 3.0, 5.0, 10.0, 30.0, 50.0, 100.0)
CABLE_KINDS = {"copper": "copper (DAC)", "optical": "fibre (transceiver at each end)"}


def component_ids() -> tuple[str, ...]:
    """Every component id a bill of materials can hold (the keys
    ``economics.unit_prices_usd`` accepts)."""
    tiers = (*SCALE_UP_TIERS, *FABRIC_TIERS)
    return ("accelerator", "host", "nic", "scale_up_switch_tray",
            *(f"switch_{t}" for t in tiers), *(f"cable_{t}" for t in tiers),
            "transceiver_leaf_host", *(f"transceiver_{t}_switch" for t in FABRIC_TIERS),
            "rack_compute", "rack_network", "pdu", "busbar_feed", "cdu",
            "checkpoint_storage")


def check_unit_prices(cluster: Cluster) -> None:
    """InputError naming the first ``economics.unit_prices_usd`` key that is no
    component id."""
    econ = cluster.spec.economics
    known = component_ids()
    for key in econ.unit_prices_usd if econ is not None else ():
        if key not in known:
            raise InputError(f"economics.unit_prices_usd.{key}",
                             f"not a bill-of-materials component; allowed: {', '.join(known)}")


def length_class(run_m: float | None) -> str | None:
    """The stocked cable length that covers a run of ``run_m`` metres (``<= 3 m``)."""
    if run_m is None:
        return None
    for top in LENGTH_CLASSES_M:
        if run_m <= top:
            return f"<= {top:g} m"
    return f"> {LENGTH_CLASSES_M[-1]:g} m"


def _row(cluster: Cluster, component: str, category: str, part: str, count: int,
         derived_from: str, tier: str | None = None, **extra: Any) -> dict[str, Any]:
    price, source = unit_price(cluster, component)
    return {"component": component, "category": category, "tier": tier, "part": part,
            "count": int(count), "length_class": extra.get("length_class"),
            "run_m": extra.get("run_m"), "capacity_bytes": extra.get("capacity_bytes"),
            "write_bandwidth_bytes_per_s": extra.get("write_bandwidth_bytes_per_s"),
            "unit_price_usd": price, "extended_price_usd": None if price is None
            else price * count, "price_source": source, "derived_from": derived_from}


def _compute_rows(cluster: Cluster, data: dict[str, Any]) -> list[dict[str, Any]]:
    """Accelerators, hosts, NICs and scale-up switch trays and chips."""
    c, topo, racks = data["cluster"], data["topology"], data["facility"]["racks"]
    rows = [_row(cluster, "accelerator", "compute", c["accelerator"], c["accelerators"],
                 "cluster.accelerators"),
            _row(cluster, "host", "compute", c["host"], c["hosts"], "cluster.hosts")]
    nics = cluster.spec.host.nics
    if cluster.scale_out is not None and cluster.host.nic_count:
        rows.append(_row(cluster, "nic", "network", nics.model if nics and nics.model
                         else "scale-out NIC", c["hosts"] * cluster.host.nic_count,
                         "cluster.hosts x host.nics.count"))
    trays = racks["switch_trays_per_rack"] * racks["compute_racks"]
    if trays:
        rows.append(_row(cluster, "scale_up_switch_tray", "scale-up", "switch tray", trays,
                         "facility.racks: switch_trays_per_rack x compute_racks"))
    up = cluster.scale_up.switch.name if cluster.scale_up.switch else "scale-up switch"
    out = cluster.scale_out.switch.name if cluster.scale_out else "switch"
    for tier, count in topo["switches"].items():
        if count:
            chip = tier in SCALE_UP_TIERS
            rows.append(_row(cluster, f"switch_{tier}", "scale-up" if chip else "scale-out",
                             f"{up} (chip)" if chip else out, count,
                             f"topology.switches.{tier}", tier))
    return rows


def _link_rows(cluster: Cluster, data: dict[str, Any]) -> list[dict[str, Any]]:
    """Transceivers (modules, host and switch ends) and cables per tier."""
    topo, cabling = data["topology"], data["facility"]["cabling"]
    so = cluster.scale_out
    cage = "twin-port OSFP" if so is not None and so.switch.ports_per_cage == 2 else "module"
    rows = []
    for tier, ends in topo["optical_transceivers"].items():
        if not ends or tier not in FABRIC_TIERS:
            continue
        host, switch = module_ends(cluster, tier, ends // 2)
        for end, count, part in (("host", host, "NIC-side module"),
                                 ("switch", switch, f"switch-side {cage}")):
            if count:
                rows.append(_row(cluster, f"transceiver_{tier}_{end}", "optics", part, count,
                                 f"topology.optical_modules.{tier} ({end} ends)", tier))
    for tier, count in topo["cables"].items():
        if not count:
            continue
        up = tier in SCALE_UP_TIERS
        medium = cluster.scale_up.medium if up else cable_medium(so.medium if so else "", tier)
        run = cabling["scale_up" if up else "scale_out"]["run_m"]
        rows.append(_row(cluster, f"cable_{tier}", "cabling", CABLE_KINDS.get(medium, medium),
                         count, f"topology.cables.{tier}; run from facility.cabling", tier,
                         length_class=length_class(run), run_m=run))
    return rows


def _facility_rows(cluster: Cluster, data: dict[str, Any]) -> list[dict[str, Any]]:
    """Racks, PDUs or busbar feeds, CDUs: the facility report's own numbers."""
    fac = data["facility"]
    racks, dist, feeds = fac["racks"], fac["distribution"], fac["feeds"]["feeds"]
    rows = [_row(cluster, "rack_compute", "facility", "compute rack", racks["compute_racks"],
                 "facility.racks.compute_racks")]
    if racks["network_racks"]:
        rows.append(_row(cluster, "rack_network", "facility", "network rack",
                         racks["network_racks"], "facility.racks.network_racks"))
    method = dist["stated"] or dist["recommended"]
    if method == "pdu":
        rows.append(_row(cluster, "pdu", "facility", f"{dist['pdu_kw']:g} kW rack PDU",
                         dist["pdus_per_feed"] * feeds * racks["compute_racks"],
                         "facility.distribution.pdus_per_feed x feeds x compute racks"))
    else:
        rows.append(_row(cluster, "busbar_feed", "facility", "busbar tap-off",
                         feeds * racks["compute_racks"],
                         "facility.feeds.feeds x compute racks (busbar, no PDUs)"))
    cdu = fac["cooling"].get("cdu")
    if cdu and cdu["installed"]:
        rows.append(_row(cluster, "cdu", "facility",
                         f"{cdu['capacity_w'] / 1e3:g} kW CDU", cdu["installed"],
                         "facility.cooling.cdu.installed"))
    return rows


def checkpoint_storage(data: dict[str, Any]) -> dict[str, Any] | None:
    """Checkpoint storage from the reliability section's checkpoint (None without one):
    the write bandwidth that writes one checkpoint within its interval (bytes/s) and the
    capacity of :data:`RETAINED_CHECKPOINTS` checkpoints (bytes)."""
    rel = data.get("reliability")
    if rel is None:
        return None
    ck = rel["checkpoint"]
    size, interval = ck["size_bytes"], ck["chosen_interval_s"]
    return {"checkpoint_bytes": size,
            "checkpoint_bytes_source": "reliability.checkpoint.size_bytes: the memory "
            "model's model-state bytes (weights + optimizer states of every parameter)",
            "interval_s": interval, "retained_checkpoints": RETAINED_CHECKPOINTS,
            "retention_source": "assumption: the last three checkpoints (NeMo's "
                                "save_top_k default)",
            "capacity_bytes": size * RETAINED_CHECKPOINTS,
            "write_bandwidth_needed_bytes_per_s": size / interval,
            "write_bandwidth_assumed_bytes_per_s": ck["write_bytes_per_s"]}


def bill_of_materials(cluster: Cluster, data: dict[str, Any]) -> dict[str, Any]:
    """``results.json`` -> ``bom``: the rows (counts, length classes, unit and extended
    prices in USD with their source), the checkpoint storage, and the priced total."""
    rows = _compute_rows(cluster, data) + _link_rows(cluster, data) + \
        _facility_rows(cluster, data)
    storage = checkpoint_storage(data)
    if storage is not None:
        rows.append(_row(cluster, "checkpoint_storage", "storage", "checkpoint store", 1,
                         "reliability.checkpoint", capacity_bytes=storage["capacity_bytes"],
                         write_bandwidth_bytes_per_s=storage[
                             "write_bandwidth_needed_bytes_per_s"]))
    priced = [r["extended_price_usd"] for r in rows if r["extended_price_usd"] is not None]
    return {"rows": rows, "storage": storage,
            "priced_total_usd": sum(priced) if priced else None,
            "priced_rows": len(priced), "unpriced_rows": len(rows) - len(priced)}


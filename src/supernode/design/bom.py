"""The bill of materials of a design: every part to buy, counted from the models that
already count it, and priced from the one price model.

Counts are never recomputed here: accelerators and hosts from the cluster, switches,
cables and optical modules per tier from the topology report (``results.json`` ->
``topology``; modules split into host and switch ends by
:func:`supernode.topology.metrics.module_ends`), racks, PDUs (or busbar feeds) and CDUs
from the facility report (``facility``), so the BOM and the facility section show the same
numbers. Cables are split by tier, length class (in-rack, same row, cross-row) and type
(DAC, active copper, AOC, multimode or single-mode fibre) by
:func:`supernode.design.bom_cables.cable_groups`; only fibre links have transceivers, the
modules the topology counts. Checkpoint storage: the appliances and storage-network ports
:func:`supernode.design.bom_storage.checkpoint_storage` sizes from the reliability
section's checkpoint. Unit prices: :func:`supernode.design.prices.unit_price`
(``economics.unit_prices_usd``, else "no price"; a cable by its type, ``cable_<type>``).
``results.json`` -> ``bom``; ``bom.csv`` (:func:`supernode.report.bom_csv.bom_csv`).
"""

from __future__ import annotations

from typing import Any

from supernode.design.bom_cables import NO_TYPE, cable_data, cable_groups, stocked_length
from supernode.design.bom_storage import checkpoint_storage
from supernode.design.prices import unit_price
from supernode.errors import InputError
from supernode.spec.resolved import Cluster
from supernode.topology.graph import FABRIC_TIERS, SCALE_UP_TIERS
from supernode.topology.metrics import module_ends

#: The keys of a ``bom.rows`` entry that only some rows fill (None elsewhere).
OPTIONAL_KEYS = ("length_class", "cable_type", "stocked_length", "run_m", "reach_m",
                 "capacity_bytes", "write_bandwidth_bytes_per_s")


def component_ids() -> tuple[str, ...]:
    """Every component id a bill of materials can hold (the keys
    ``economics.unit_prices_usd`` accepts)."""
    tiers = (*SCALE_UP_TIERS, *FABRIC_TIERS)
    return ("accelerator", "host", "nic", "scale_up_switch_tray",
            *(f"switch_{t}" for t in tiers), *(f"cable_{t}" for t in cable_data()["types"]),
            "transceiver_leaf_host", *(f"transceiver_{t}_switch" for t in FABRIC_TIERS),
            "rack_compute", "rack_network", "pdu", "busbar_feed", "cdu",
            "storage_appliance", "storage_network_port")


def check_unit_prices(cluster: Cluster) -> None:
    """InputError naming the first ``economics.unit_prices_usd`` key that is no
    component id."""
    econ = cluster.spec.economics
    known = component_ids()
    for key in econ.unit_prices_usd if econ is not None else ():
        if key not in known:
            raise InputError(f"economics.unit_prices_usd.{key}",
                             f"not a bill-of-materials component; allowed: {', '.join(known)}")


def _row(cluster: Cluster, component: str, category: str, part: str, count: int,
         derived_from: str, tier: str | None = None, price_key: str | None = None,
         **extra: Any) -> dict[str, Any]:
    key = price_key or component
    price, source = unit_price(cluster, key)
    return {"component": component, "category": category, "tier": tier, "part": part,
            "count": int(count), **{k: extra.get(k) for k in OPTIONAL_KEYS},
            "price_key": key, "unit_price_usd": price,
            "extended_price_usd": None if price is None else price * count,
            "price_source": source, "derived_from": derived_from}


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
    topo = data["topology"]
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
    for g in cable_groups(cluster, data):
        cls, kind, tier = g["length_class"], g["cable_type"], g["tier"]
        fibre = " (transceivers: the optics rows)" if g["transceivers"] else ""
        where = "placed on facility.floor" if tier in FABRIC_TIERS else \
            "run from facility.cabling.scale_up"
        rows.append(_row(
            cluster, f"cable_{tier}_{cls.replace(' ', '_').replace('-', '_')}_{kind}",
            "cabling", g["part"], g["count"],
            f"topology.cables.{tier}: {g['lane_gbit_per_s']:g}G lanes, {where}{fibre}", tier,
            None if kind == NO_TYPE else f"cable_{kind}", length_class=cls,
            cable_type=kind, stocked_length=stocked_length(g["run_m"]), run_m=g["run_m"],
            reach_m=g["reach_m"]))
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


def bill_of_materials(cluster: Cluster, data: dict[str, Any]) -> dict[str, Any]:
    """``results.json`` -> ``bom``: the rows (counts, length classes, unit and extended
    prices in USD with their source), the checkpoint storage, and the priced total."""
    rows = _compute_rows(cluster, data) + _link_rows(cluster, data) + \
        _facility_rows(cluster, data)
    storage = checkpoint_storage(data)
    if storage is not None:
        rows.append(_row(cluster, "storage_appliance", "storage", storage["appliance"],
                         storage["appliances"], "bom.storage: max(write bandwidth, capacity) "
                         "over one appliance's", capacity_bytes=storage["capacity_bytes"],
                         write_bandwidth_bytes_per_s=storage[
                             "write_bandwidth_needed_bytes_per_s"]))
        rows.append(_row(cluster, "storage_network_port", "storage",
                         f"{storage['port_bandwidth_bytes_per_s'] * 8 / 1e9:g} Gb/s "
                         "storage-network switch port", storage["network_ports"],
                         "bom.storage: appliances x ports_per_appliance"))
    priced = [r["extended_price_usd"] for r in rows if r["extended_price_usd"] is not None]
    return {"rows": rows, "storage": storage,
            "priced_total_usd": sum(priced) if priced else None,
            "priced_rows": len(priced), "unpriced_rows": len(rows) - len(priced)}


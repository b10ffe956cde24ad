"""The bill-of-materials section: every component with its count, where the count comes
from, its unit and extended price with their source, and the checkpoint storage
(``results.json`` -> ``bom``, :mod:`supernode.design.bom`)."""

from __future__ import annotations

from typing import Any

from supernode.report import sections_scheduling  # noqa: F401  (artefacts registered first)
from supernode.report.blocks import Paragraph, Section, Table
from supernode.report.sections import register_section
from supernode.report.sections_core import L, N, T

COLUMNS = ("component", "part", "tier", "count", "length class", "cable type", "run",
           "reach", "unit price", "extended price", "price source", "counted from")


def _row(i: int) -> tuple:
    k = ("bom", "rows", i)
    return (T(*k, "component"), T(*k, "part"), T(*k, "tier"), N(*k, "count", kind="count"),
            T(*k, "length_class"), T(*k, "cable_type"), N(*k, "run_m", kind="m"),
            N(*k, "reach_m", kind="m"), N(*k, "unit_price_usd", kind="usd"),
            N(*k, "extended_price_usd", kind="usd"), T(*k, "price_source"),
            T(*k, "derived_from"))


def _storage(r: dict[str, Any]) -> list:
    if r["bom"]["storage"] is None:
        return []
    s = ("bom", "storage")
    return [Paragraph((L("Checkpoint storage: one checkpoint of "),
                       N(*s, "checkpoint_bytes", kind="bytes"), L(" ("),
                       T(*s, "checkpoint_bytes_source"), L(") every "),
                       N(*s, "interval_s", kind="min"), L(" needs "),
                       N(*s, "write_bandwidth_needed_bytes_per_s", kind="bytes_per_s"),
                       L(" of write bandwidth to finish within its interval (the reliability "
                         "model assumed "),
                       N(*s, "write_bandwidth_assumed_bytes_per_s", kind="bytes_per_s"),
                       L("); keeping "), N(*s, "retained_checkpoints", kind="count"),
                       L(" ("), T(*s, "retention_source"), L(") takes "),
                       N(*s, "capacity_bytes", kind="bytes"), L("."))),
            Paragraph((L("Storage hardware: "), N(*s, "appliances", kind="count"), L(" x "),
                       T(*s, "appliance"), L(" (the larger of "),
                       N(*s, "appliances_for_bandwidth", kind="count"),
                       L(" for the write bandwidth at "),
                       N(*s, "appliance_write_bytes_per_s", kind="bytes_per_s"),
                       L(" each and "), N(*s, "appliances_for_capacity", kind="count"),
                       L(" for the capacity at "),
                       N(*s, "appliance_capacity_bytes", kind="bytes"),
                       L(" usable each), taking "), N(*s, "network_ports", kind="count"),
                       L(" storage-network ports ("), N(*s, "ports_per_appliance",
                                                        kind="count"),
                       L(" each; the appliance's figures and their sources: "
                         "data/design/storage_appliances.yaml, results.json bom.storage)."))
                      )]


def bom_section(r: dict[str, Any]) -> Section | None:
    """The BOM table, the priced total and the checkpoint storage (None without a BOM)."""
    bom = r.get("bom")
    if bom is None:
        return None
    s = Section("bom", "Bill of materials")
    s.blocks.append(Table("Bill of materials (also bom.csv)", COLUMNS,
                          tuple(_row(i) for i in range(len(bom["rows"]))), ("bom",)))
    s.blocks.append(Paragraph((L("Priced total: "), N("bom", "priced_total_usd", kind="usd"),
                               L(" over "), N("bom", "priced_rows", kind="count"),
                               L(" priced rows; "), N("bom", "unpriced_rows", kind="count"),
                               L(" rows have no price (the bundled catalog holds "
                                 "GPU-hour prices only; unit prices come from the cluster "
                                 "file's economics.unit_prices_usd)."))))
    s.blocks += _storage(r)
    return s


register_section("bom", "Bill of materials", bom_section, after="artefacts")

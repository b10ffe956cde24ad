"""``results.json`` -> ``bom``: the bill of materials (:mod:`supernode.design.bom`)."""

from __future__ import annotations

from supernode.design.results.base import ResultModel, field


class BomRow(ResultModel):
    """One component: how many, from which model figure, at which price."""

    component: str = field("Component id (the key economics.unit_prices_usd takes).")
    category: str = field("compute, network, scale-up, scale-out, optics, cabling, "
                          "facility or storage.")
    tier: str | None = field("Topology tier of a switch, module or cable; null otherwise.")
    part: str = field("The part (catalog name, or what it is).")
    count: int = field("Units to buy.")
    length_class: str | None = field("Stocked cable length covering the run (cables).")
    run_m: float | None = field("Estimated cable run (m), from the facility's floor plan.")
    capacity_bytes: float | None = field("Storage capacity (bytes; checkpoint storage).")
    write_bandwidth_bytes_per_s: float | None = field("Write bandwidth needed (bytes/s; "
                                                      "checkpoint storage).")
    unit_price_usd: float | None = field("Price of one unit (USD); null: no price.")
    extended_price_usd: float | None = field("count x unit price (USD); null: no price.")
    price_source: str = field("user-supplied, or why there is no price.")
    derived_from: str = field("The results.json figure(s) the count comes from.")


class CheckpointStorage(ResultModel):
    """Checkpoint storage sized from the reliability section's checkpoint."""

    checkpoint_bytes: float = field("One checkpoint (bytes).")
    checkpoint_bytes_source: str = field("Where the size comes from.")
    interval_s: float = field("The checkpoint interval the reliability section chose (s).")
    retained_checkpoints: int = field("Checkpoints kept on storage.")
    retention_source: str = field("Why that many.")
    capacity_bytes: float = field("Capacity for the retained checkpoints (bytes).")
    write_bandwidth_needed_bytes_per_s: float = field("Writes one checkpoint within its "
                                                      "interval (bytes/s).")
    write_bandwidth_assumed_bytes_per_s: float = field("The write bandwidth the "
                                                       "reliability model assumed (bytes/s).")


class BillOfMaterials(ResultModel):
    """Every part to buy, counted from the topology, cluster and facility models."""

    rows: list[BomRow] = field("One row per component.")
    storage: CheckpointStorage | None = field("Checkpoint storage; null without a plan.")
    priced_total_usd: float | None = field("Sum of the extended prices given (USD); null "
                                           "when none is priced.")
    priced_rows: int = field("Rows with a price.")
    unpriced_rows: int = field("Rows with no price.")

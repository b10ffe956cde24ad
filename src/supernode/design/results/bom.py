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
    length_class: str | None = field("in-rack, same row or cross-row (cables).")
    cable_type: str | None = field("dac, acc, aoc, fiber_mm, fiber_sm, or none when no "
                                   "listed type reaches (cables).")
    stocked_length: str | None = field("Stocked cable length covering the longest run "
                                       "(cables).")
    run_m: float | None = field("Longest estimated run of the row's cables (m), placed on "
                                "the facility's floor plan.")
    reach_m: float | None = field("The cable type's reach at the link's lane rate (m).")
    capacity_bytes: float | None = field("Storage capacity needed (bytes; storage "
                                         "appliances).")
    write_bandwidth_bytes_per_s: float | None = field("Write bandwidth needed (bytes/s; "
                                                      "checkpoint storage).")
    price_key: str = field("The economics.unit_prices_usd key that prices the row (a "
                           "cable: cable_<type>).")
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
    appliance: str = field("The storage appliance sized.")
    appliance_id: str = field("Its id in data/design/storage_appliances.yaml.")
    appliance_write_bytes_per_s: float = field("Write bandwidth of one appliance (bytes/s).")
    appliance_read_bytes_per_s: float = field("Read bandwidth of one appliance (bytes/s).")
    appliance_capacity_bytes: float = field("Usable capacity of one appliance (bytes).")
    appliance_source: str = field("Where the appliance's figures come from.")
    appliances_for_bandwidth: int = field("ceil(write bandwidth needed / one appliance's).")
    appliances_for_capacity: int = field("ceil(capacity needed / one appliance's).")
    appliances: int = field("Appliances: the larger of the two, at least one.")
    ports_per_appliance: int = field("Storage-network ports of one appliance.")
    port_bandwidth_bytes_per_s: float = field("Bandwidth of one such port (bytes/s).")
    network_ports: int = field("Storage-network switch ports: appliances x ports.")


class BillOfMaterials(ResultModel):
    """Every part to buy, counted from the topology, cluster and facility models."""

    rows: list[BomRow] = field("One row per component.")
    storage: CheckpointStorage | None = field("Checkpoint storage; null without a plan.")
    priced_total_usd: float | None = field("Sum of the extended prices given (USD); null "
                                           "when none is priced.")
    priced_rows: int = field("Rows with a price.")
    unpriced_rows: int = field("Rows with no price.")

"""``results.json`` -> ``facility``: power, cooling, floor and cabling of the cluster
(:meth:`~supernode.facility.model.FacilityReport.to_dict`, docs/facility.md). SI units:
watts, metres, kilograms, degrees C, flows in L/min; null where an input is not stated."""

from __future__ import annotations

from supernode.design.results.base import ResultModel, field, optional
from supernode.spec.cluster import FacilitySpec


class RackCounts(ResultModel):
    """Racks and what one compute rack holds."""

    hosts_per_rack: int = field("Hosts per compute rack.")
    switch_trays_per_rack: int = field("Scale-up switch trays per compute rack.")
    compute_racks: int = field("Compute racks.")
    network_racks: int = field("Network racks.")
    racks: int = field("All racks.")
    racks_per_supernode: float = field("Racks one supernode fills.")
    fabric_switches: int = field("Scale-out switches.")
    cooling: str | None = field("Stated rack cooling (air, liquid, ...), or null.")


class HostParts(ResultModel):
    """Power of one host by part (W)."""

    accelerators: float = field("Accelerator boards (W).")
    cpus: float = field("CPUs (W).")
    nics: float = field("NICs and their optics (W).")
    other_units: float = field("Other stated units (W).")
    scale_up_switches: float = field("Scale-up switch chips on the host (W).")
    base: float = field("Board, memory, drives (W).")
    fans_pumps: float = field("Fans and pumps (W).")
    psu_loss: float = field("Power-supply loss (W).")


class HostPower(ResultModel):
    """Power of one host."""

    parts_w: HostParts = field("By part (W).")
    total_w: float = field("The host (W).")
    source: str = field("parts (summed) or stated.")


class RackPower(ResultModel):
    """Power of one compute rack."""

    hosts: int = field("Hosts in a full rack.")
    hosts_w: float = field("Its hosts (W).")
    switch_trays_w: float = field("Its scale-up switch trays (W).")
    scale_up_optics_w: float = field("Its scale-up optics (W).")
    total_w: float = field("The rack (W).")
    last_rack_hosts: int = field("Hosts in the last rack.")
    budget_w: float | None = field("Stated rack power budget (W), or null.")
    rack_class: str = field("The seed's nearest rack class.")
    rack_class_kw: list[float] = field("Its range (kW).")


class FabricPower(ResultModel):
    """Scale-out switch boxes and the optics not in hosts."""

    switches: int = field("Switch boxes.")
    switches_w: float = field("Their power (W).")
    optics: int = field("Optical modules outside hosts (a twin-port cage counted once).")
    optics_w: float = field("Their power (W).")
    total_w: float = field("The fabric (W).")


class PowerBudget(ResultModel):
    """Power per host, rack, supernode and cluster (W)."""

    host: HostPower = field("One host.")
    rack: RackPower = field("One compute rack.")
    supernode_w: float = field("One supernode's compute (W).")
    fabric: FabricPower = field("The scale-out fabric.")
    compute_w: float = field("All compute racks (W).")
    cluster_at_tdp_w: float = field("The cluster with every accelerator at its board power "
                                    "limit: TDP, or the power cap when one is set (W).")
    cluster_at_workload_w: float = field("The cluster at the workload's use (W).")
    accelerator_busy_share: float | None = field("Share of the step the accelerators are "
                                                 "busy, or null without a plan.")
    accelerator_power_factor: float = field("Average accelerator power over TDP.")
    accelerator_power_limit_w: float | None = field(
        "Board power cap of each accelerator (W), or null: TDP.")
    wall_factor: float = field("Watts at the wall per watt of component power.")


class Feeds(ResultModel):
    """Power feeds with N+X redundancy (seed 001 §3.1)."""

    feeds: int = field("Feeds.")
    redundancy: int = field("X of N+X.")
    scheme: str = field("The scheme in words.")
    design_headroom: float = field("Headroom designed on top of the peak.")
    design_load_w: float = field("Peak plus headroom (W).")
    per_feed_capacity_w: float = field("Capacity each feed needs (W).")
    available_w: float | None = field("Stated power available (W), or null.")
    headroom: float | None = field("Share of the available power left, or null.")


class Distribution(ResultModel):
    """PDUs against a busbar for one rack."""

    pdu_kw: float = field("One PDU (kW).")
    pdus_per_feed: int = field("PDUs per feed a rack needs.")
    max_pdus_per_feed: int = field("Most PDUs per feed a rack takes.")
    recommended: str = field("pdu or busbar.")
    stated: str | None = field("Stated distribution, or null.")


class Energy(ResultModel):
    """Energy and its cost (facility = IT x PUE)."""

    pue: float = field("Power usage effectiveness.")
    price_usd_per_kwh: float = field("Energy price (USD/kWh).")
    facility_w: float = field("Facility power at the workload's use (W).")
    annual_mwh: float = field("Energy per year (MWh).")
    annual_cost_usd: float = field("Cost per year (USD).")
    per_step_it_j: float | None = field("IT energy per step (J), or null without a plan.")
    per_step_facility_j: float | None = field("Facility energy per step (J), or null.")
    per_million_tokens_kwh: float | None = field("Facility energy per million tokens (kWh).")
    cost_per_million_tokens_usd: float | None = field("Its cost (USD), or null.")


class Cdu(ResultModel):
    """Coolant distribution units."""

    capacity_w: float = field("Heat one CDU removes (W).")
    needed: int = field("CDUs needed.")
    redundancy: int = field("Spare CDUs.")
    installed: int = field("CDUs installed.")
    cooled_racks: int = field("Liquid-cooled racks on the CDU loop.")
    racks_per_cdu: int = field("Racks one duty CDU serves (the cluster's one cooling "
                               "topology, read by reliability and monitoring too).")
    racks_per_cdu_source: str = field("Where racks_per_cdu comes from.")
    serves_racks: list[list[int]] = field("Per duty CDU, the first and last rack it serves "
                                          "(0-based).")
    failure_stops_racks: int = field("Racks one CDU failure stops (0: a spare on the loop "
                                     "takes its share).")
    liquid_heat_total_w: float = field("Liquid heat of all compute racks (W).")


class Cooling(ResultModel):
    """Liquid and air heat per rack, flows, CDUs and the far-end rack's rise."""

    liquid_fraction: float = field("Share of the rack's heat into liquid.")
    liquid_fraction_source: str = field("Where the share comes from.")
    rack_heat_w: float = field("Heat of one rack (W).")
    liquid_heat_per_rack_w: float = field("Into liquid (W).")
    air_heat_per_rack_w: float = field("Into air (W).")
    room_air_capacity_per_rack_w: float | None = field("Stated room air per rack (W), or "
                                                       "null.")
    air_load_share_of_room: float | None = field("Air heat over that capacity, or null.")
    network_air_heat_w: float = field("Heat of the fabric into air (W).")
    coolant: str = field("Coolant.")
    coolant_name: str = field("Its name.")
    inlet_c: float = field("Supply temperature (C).")
    delta_t_c: float = field("Design rise (C).")
    outlet_c: float = field("Return temperature (C).")
    specific_heat_j_per_kg_k: float = field("Specific heat (J/(kg K)).")
    density_kg_per_m3: float = field("Density (kg/m3).")
    properties_source: str = field("Where the properties come from.")
    flow_per_rack_l_per_min: float = field("Coolant flow per rack (L/min).")
    flow_total_l_per_min: float = field("Coolant flow, all racks (L/min).")
    flow_l_per_min_per_kw: float | None = field("Flow per kW of liquid heat, or null.")
    flow_imbalance: float = field("Share of nominal flow the farthest rack lacks.")
    far_end_delta_t_c: float = field("Rise at the farthest rack (C).")
    far_end_outlet_c: float = field("Its return temperature (C).")
    cdu: Cdu = field("Coolant distribution units.")


class RackPosition(ResultModel):
    """Where one rack stands."""

    rack: str = field("Rack label (R001: compute, N001: network).")
    kind: str = field("compute or network.")
    row: int = field("Row (from 1).")
    position: int = field("Position in the row (from 1).")


class Floor(ResultModel):
    """Weight, floor load, rows and area."""

    rack_weight_kg: float = field("One rack (kg).")
    weight_source: str = field("Where the weight comes from.")
    heavy_rack_kg: float = field("The data file's heavy-rack weight (kg).")
    footprint_m2: float = field("One rack's footprint (m2).")
    load_kg_per_m2: float = field("Its floor load (kg/m2).")
    rating_kg_per_m2: float | None = field("Stated floor rating (kg/m2), or null.")
    load_share_of_rating: float | None = field("Load over rating, or null.")
    racks: int = field("All racks.")
    compute_racks: int = field("Compute racks.")
    network_racks: int = field("Network racks.")
    rows: int = field("Rows.")
    racks_per_row: int = field("Positions per row.")
    row_length_m: float = field("Length of a row (m).")
    aisle_m: float = field("Aisle width (m).")
    area_m2: float = field("Floor area (m2).")
    positions: list[RackPosition] = field("Every rack's position (empty when too many).")


class CopperRun(ResultModel):
    """The longest run of one tier against the copper reach."""

    medium: str | None = field("Cable medium, or null without the tier.")
    run_m: float | None = field("Longest run (m), or null.")
    copper_reach_m: float | None = field("Copper reach at the link speed (m), or null.")


class ScaleUpRun(CopperRun):
    """The scale-up runs."""

    racks_per_domain: int = field("Racks one domain spans.")


class Cabling(ResultModel):
    """Fibre cores, transceivers, cables per tier and copper runs."""

    scale_out_links_per_rack: int = field("Fabric links leaving one rack.")
    fibre_cores_per_rack: float = field("Fibre cores one rack needs.")
    structured_cabling_cores: int = field("Cores of one structured-cabling trunk.")
    transceivers: dict[str, int] = field("Optical modules per tier (twin-port cages "
                                         "counted once).")
    transceivers_total: int = field("All of them.")
    transceiver_ends: dict[str, int] = field("Optical link ends per tier (two per cable).")
    cables: dict[str, int] = field("Cables per tier.")
    cables_total: int = field("All of them.")
    scale_up: ScaleUpRun = field("Scale-up runs.")
    scale_out: CopperRun = field("Scale-out runs.")


class PowerCapRow(ResultModel):
    """The reviewed plan at one board power cap (:mod:`supernode.design.power_cap`)."""

    power_limit_w: float = field("Board power cap of each accelerator (W).")
    sustained_clock_ratio: float = field("Sustained SM clock over full clock.")
    step_time_s: float = field("Step time at the cap (s).")
    tokens_per_s: float = field("Tokens per second at the cap.")
    mfu: float = field("MFU at the cap (over the nominal peak).")
    energy_per_token_j: float = field("GPU board energy per token (J).")
    rack_w: float = field("One compute rack at the cap (W).")
    cluster_peak_w: float = field("The cluster with every accelerator at the cap (W).")
    cluster_at_workload_w: float = field("The cluster at the plan's use (W).")
    fits_budget: bool | None = field("True when the peak fits the power available, or null "
                                     "when none is stated.")


class FewerSupernodes(ResultModel):
    """The budget met at TDP by building fewer supernodes."""

    supernodes: int = field("Supernodes kept.")
    of_supernodes: int = field("Supernodes of the design.")
    gpus: int = field("GPUs kept.")
    tokens_per_s: float = field("Tokens per second (TDP rate per GPU x GPUs kept).")
    cluster_peak_w: float = field("Peak power of what is kept (W).")
    energy_per_token_j: float = field("GPU board energy per token (J), as at TDP.")
    rack_w: float = field("One compute rack at TDP (W).")


class PowerCapTrade(ResultModel):
    """Power cap against fewer racks for the reviewed plan."""

    tdp_w: float = field("Accelerator TDP (W).")
    available_w: float | None = field("Stated power available (W), or null.")
    budget_short: bool = field("True when the design's peak at TDP exceeds the budget.")
    caps: list[PowerCapRow] = field("The plan at a ladder of caps (TDP first).")
    fitting_cap: PowerCapRow | None = field("The highest cap whose peak fits the budget, or "
                                            "null (not short, or no cap covered fits).")
    fewer_supernodes: FewerSupernodes | None = field("Fewer supernodes at TDP within the "
                                                     "budget, or null when not short.")
    recommended: str = field("The lever giving more tokens/s within the budget.")
    source: str = field("Where the DVFS curve comes from.")
    notes: list[str] = field("Assumptions.")


class FacilityResults(ResultModel):
    """Power, cooling, floor and cabling of one cluster (SI units; flows in L/min)."""

    racks: RackCounts = field("Rack counts.")
    power: PowerBudget = field("Power budget.")
    feeds: Feeds = field("Power feeds.")
    distribution: Distribution = field("Power distribution.")
    energy: Energy = field("Energy and cost.")
    cooling: Cooling = field("Cooling.")
    floor: Floor = field("Floor.")
    cabling: Cabling = field("Cabling.")
    facility_stated: FacilitySpec = field("The facility block in force (defaults when the "
                                          "cluster file has none).")
    notes: list[str] = field("Notes.")
    power_cap: PowerCapTrade | None = optional("Power cap against fewer racks for the "
                                               "reviewed plan, or null without a plan.")

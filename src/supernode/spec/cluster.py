"""Schema of the open cluster description (seed 001 §6: a vendor-neutral topology file).

A cluster is ``supernodes`` scale-up domains of ``scale_up.size`` accelerators each,
built from identical hosts, joined by a ``scale_out`` fat tree. Parts are named from
the catalog or written inline. Every field carries its unit in its name.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, PositiveFloat, PositiveInt, model_validator

from supernode.spec.base import FieldError, StrictModel
from supernode.spec.economics import EconomicsSpec
from supernode.spec.hardware import (
    AcceleratorSpec,
    CpuSpec,
    NicSpec,
    OtherUnitSpec,
    PcieSpec,
    SwitchSpec,
)
from supernode.spec.memory import MemorySpec
from supernode.spec.reliability import ReliabilitySpec

Medium = Literal["pcb", "copper", "optical", "mixed"]
PcieDistance = Literal["NV", "PIX", "PXB", "PHB", "NODE", "SYS"]
ScaleUpKind = Literal["nvswitch", "full_mesh", "torus", "mesh", "hybrid", "none"]
GroupKind = Literal["full_mesh", "mesh", "torus"]
Routing = Literal["ecmp", "adaptive", "spray"]


class DeviceLinkSpec(StrictModel):
    """A direct accelerator-to-accelerator link bundle inside a host (from nvidia-smi)."""

    a: int = Field(ge=0, description="Index of the first accelerator in the host.")
    b: int = Field(ge=0, description="Index of the second accelerator in the host.")
    kind: Literal["nvlink", "xgmi", "pcie"] = Field(description="Link family.")
    count: int = Field(1, ge=1, description="Bonded links (NV18 = 18).")


class NicAffinitySpec(StrictModel):
    """PCIe distance between one NIC and one accelerator (nvidia-smi topo classes)."""

    nic: str = Field(description="NIC device name (mlx5_0...).")
    accelerator: int = Field(ge=0, description="Index of the accelerator in the host.")
    distance: PcieDistance = Field(description="PIX < PXB < PHB < NODE < SYS.")


class LocalTopologySpec(StrictModel):
    """What `nvidia-smi topo -m` shows of one host: links, NIC affinity, NUMA."""

    device_links: list[DeviceLinkSpec] = Field(default_factory=list, description="GPU-GPU links.")
    nic_affinity: list[NicAffinitySpec] = Field(
        default_factory=list, description="Nearest PCIe class between each NIC and GPU."
    )
    numa_of_accelerator: list[int] = Field(
        default_factory=list, description="NUMA node of each accelerator, by index."
    )


class HostSpec(StrictModel):
    """A server or compute tray: the unit that is racked, powered and scheduled."""

    name: str = Field("host", description="Host model name (DGX H100, GB200 tray...).")
    accelerator: str | AcceleratorSpec = Field(
        description="Catalog name of the accelerator, or an inline definition."
    )
    accelerators_per_host: int = Field(ge=1, description="Accelerators per host.")
    accelerator_power_limit_w: float | None = Field(
        None, gt=0, description="Board power cap of each accelerator in W (nvidia-smi -pl) "
        "when below its TDP; null: the part's own (catalog power_limit_w, else TDP).")
    cpus: list[CpuSpec] = Field(default_factory=list, description="Host CPUs.")
    nics: NicSpec | None = Field(None, description="Compute-fabric NICs (scale-out).")
    pcie: PcieSpec | None = Field(None, description="PCIe generation and width.")
    other_units: list[OtherUnitSpec] = Field(
        default_factory=list, description="Other compute units (heterogeneous supernodes)."
    )
    power_kw: float | None = Field(None, gt=0, description="Maximum host power in kW.")
    weight_kg: float | None = Field(None, gt=0, description="Host weight in kg.")
    rack_units: int | None = Field(None, ge=1, description="Height in rack units.")
    local_topology: LocalTopologySpec | None = Field(
        None, description="Measured intra-host topology (supernode import nvidia-smi-topo)."
    )


class HybridSpec(StrictModel):
    """Hybrid scale-up: a direct mesh inside each group (rack), switches between groups."""

    group_kind: GroupKind = Field("full_mesh", description="Topology inside a group.")
    group_size: int = Field(ge=2, description="Accelerators per group.")
    group_dims: list[PositiveInt] | None = Field(
        None, min_length=1, description="Mesh/torus dims inside a group."
    )
    group_links_per_accelerator: int = Field(
        ge=1, description="Ports per accelerator used inside its group."
    )
    uplinks_per_accelerator: int = Field(ge=1, description="Ports per accelerator to switches.")


class ScaleUpSpec(StrictModel):
    """The scale-up domain (supernode): accelerators sharing one memory-semantic bus."""

    kind: ScaleUpKind = Field(description="Interconnect inside the domain.")
    size: int = Field(ge=1, description="Accelerators per domain.")
    links_per_accelerator: int | None = Field(
        None, ge=1, description="Scale-up ports used per accelerator (default: the chip's)."
    )
    link_bandwidth_gbyte_per_s: float | None = Field(
        None, gt=0, description="Bandwidth of one link per direction in GB/s (default: chip's)."
    )
    link_latency_ns: float | None = Field(
        None, ge=0, description="One-hop latency in ns (default: the chip's)."
    )
    medium: Medium = Field("copper", description="Physical medium of the links.")
    switch: str | SwitchSpec | None = Field(
        None, description="Switch chip (nvswitch, hybrid kinds): catalog name or inline."
    )
    switch_chips: int | None = Field(
        None, ge=1, description="Switch chips (planes) of the first tier per domain or group."
    )
    switch_tiers: Literal[1, 2] = Field(1, description="Switched domain: 1 or 2 switch tiers.")
    group_size: int | None = Field(
        None, ge=1, description="Two-tier switched: accelerators per first-tier group."
    )
    dims: list[PositiveInt] | None = Field(
        None, min_length=1, description="Torus/mesh dimensions, e.g. [16, 16, 16]."
    )
    wraparound: bool = Field(True, description="Torus: wrap-around links on every dimension.")
    dim_link_bandwidth_gbyte_per_s: list[PositiveFloat] | None = Field(
        None, description="Per-dimension link bandwidth per direction (torus/mesh) in GB/s."
    )
    hybrid: HybridSpec | None = Field(None, description="Hybrid kind: the group layout.")

    @model_validator(mode="after")
    def _kind_fields(self) -> ScaleUpSpec:
        if self.kind in ("torus", "mesh") and self.dims is None:
            raise FieldError("dims", f"kind {self.kind!r} needs dims, e.g. dims: [4, 4, 4]")
        if self.kind == "hybrid" and self.hybrid is None:
            raise FieldError("hybrid", "kind 'hybrid' needs a hybrid: {group_size, ...} block")
        if self.kind == "none" and self.size != 1:
            raise FieldError("size", "kind 'none' means no scale-up domain: size must be 1")
        per_dim = self.dim_link_bandwidth_gbyte_per_s
        if per_dim is not None and len(per_dim) != len(self.dims or ()):
            raise FieldError("dim_link_bandwidth_gbyte_per_s",
                             f"needs dims and one value per dimension ({len(self.dims or ())}), "
                             f"got {len(per_dim)}")
        return self


class ScaleOutSpec(StrictModel):
    """The scale-out fabric joining hosts (InfiniBand/Ethernet fat tree / leaf-spine)."""

    kind: Literal["fat_tree"] = Field("fat_tree", description="Fabric family.")
    tiers: Literal[1, 2, 3] = Field(2, description="Switch tiers: 1 (one switch), 2, 3.")
    rail_optimized: bool = Field(
        True, description="NIC r of every host in a group goes to leaf r (rail)."
    )
    switch: str | SwitchSpec = Field(description="Switch model: catalog name or inline.")
    oversubscription: list[float] = Field(
        default_factory=list,
        description="Down:up port ratio at each tier below the top (leaf first); 1 = none.",
    )
    link_latency_ns: float = Field(50.0, ge=0, description="Cable propagation latency in ns.")
    medium: Medium = Field("optical", description="Cable medium between tiers.")
    in_network_reduction: bool | None = Field(
        None, description="SHARP available (default: the switch's capability)."
    )
    routing: Routing | None = Field(
        None, description="How the fabric spreads flows over equal-cost paths: ecmp (static "
        "hash per flow), adaptive (per-packet/flowlet by port load), spray (packet spraying). "
        "Default: adaptive on InfiniBand (the subnet manager's ar_updn and NCCL's AR default "
        "on IB), ecmp on Ethernet (switch AR off by default)."
    )

    @model_validator(mode="after")
    def _oversubscription(self) -> ScaleOutSpec:
        if len(self.oversubscription) > self.tiers - 1:
            raise FieldError(
                "oversubscription",
                f"oversubscription has {len(self.oversubscription)} entries; a {self.tiers}-tier "
                f"tree has {self.tiers - 1} tier(s) below the top"
            )
        for ratio in self.oversubscription:
            if not ratio >= 1:
                raise FieldError(
                    "oversubscription", f"ratios are down:up >= 1 (1 = none), got {ratio}"
                )
        return self


Cooling = Literal["air", "liquid", "hybrid", "immersion"]
Coolant = Literal["water", "pg25"]


class RackSpec(StrictModel):
    """Racking: how hosts fill racks, and what each rack draws, weighs and sheds (facility)."""

    hosts_per_rack: int = Field(ge=1, description="Compute hosts or trays per rack.")
    switch_trays_per_rack: int = Field(0, ge=0, description="Scale-up switch trays per rack.")
    power_kw: float | None = Field(None, gt=0, description="Rack power budget in kW.")
    weight_kg: float | None = Field(None, gt=0, description="Loaded rack weight in kg "
                                    "(null: summed from parts, docs/facility.md).")
    cooling: Cooling | None = Field(
        None, description="How the rack is cooled (null = not stated)."
    )
    liquid_heat_fraction: float | None = Field(
        None, ge=0, le=1, description="Share of the rack's heat taken by liquid (null: 0.8 "
        "with plate cooling for liquid or hybrid, 1.0 immersion, 0 air; seed 001 §3.2).")
    power_distribution: Literal["busbar", "pdu"] | None = Field(
        None, description="Busbar or PDUs (null = not stated; seed 001 §3.1).")
    psu_efficiency: float | None = Field(
        None, gt=0.5, le=1, description="AC-to-DC efficiency of the power supplies "
        "(null: 0.94, docs/facility.md).")
    switch_tray_power_kw: float | None = Field(
        None, gt=0, description="Power of one scale-up switch tray in kW (null: from the "
        "switch chips).")
    width_m: float = Field(0.6, gt=0, le=3, description="Rack width in m.")
    depth_m: float = Field(1.2, gt=0, le=3, description="Rack depth in m.")


class FacilitySpec(StrictModel):
    """Facility constraints: power feeds, room air, coolant loop, floor (facility model)."""

    power_available_kw: float | None = Field(None, gt=0, description="IT power available in kW.")
    power_feeds: int = Field(2, ge=1, le=8, description="Independent power feeds (one "
                             "utility + one UPS = 2; seed 001 §3.1).")
    feed_redundancy: int = Field(1, ge=0, le=7, description="X of N+X: feeds that may fail "
                                 "while the rest carry the whole load.")
    room_cooling_kw_per_rack: float | None = Field(
        None, gt=0, description="Air cooling capacity per rack position in kW."
    )
    floor_rating_kg_per_m2: float | None = Field(None, gt=0, description="Floor load rating.")
    coolant: Coolant = Field("water", description="Facility coolant.")
    coolant_inlet_c: float = Field(25.0, ge=2, le=60, description="Coolant supply temperature "
                                   "in deg C (seed 001 §3.2: 25).")
    coolant_delta_t_c: float = Field(6.0, gt=0, le=30, description="Design inlet-to-outlet "
                                     "temperature rise in deg C (seed: 5-8 normal).")
    flow_imbalance: float = Field(0.10, ge=0, lt=0.9, description="Share of nominal flow the "
                                  "farthest rack lacks (seed 001 §3.2 far-end imbalance).")
    cdu_capacity_kw: float = Field(2000.0, gt=0, description="Heat one CDU removes in kW "
                                   "(default: in-row liquid-to-liquid class).")
    cdu_redundancy: int = Field(1, ge=0, le=8, description="Spare CDUs (N+1 = 1).")
    aisle_clearance_m: float = Field(1.2, gt=0, le=10, description="Front and rear aisle "
                                     "width in m (seed 001 §3.4: >= 1.2).")
    racks_per_row: int = Field(8, ge=1, le=100, description="Rack positions per row.")
    energy_price_usd_per_kwh: float = Field(0.10, gt=0, le=10, description="Price of energy "
                                            "in USD/kWh (assumption; set yours).")
    pue: float = Field(1.2, ge=1, le=4, description="Power usage effectiveness: facility "
                       "energy over IT energy (assumption; set yours).")

    @model_validator(mode="after")
    def _feeds(self) -> FacilitySpec:
        if self.feed_redundancy >= self.power_feeds:
            raise FieldError("feed_redundancy", f"N+X needs X < feeds: {self.power_feeds} "
                             f"feed(s) cannot lose {self.feed_redundancy} and still carry "
                             "the load")
        return self


class ClusterSpec(StrictModel):
    """A whole cluster: hosts, scale-up domains, scale-out fabric, facility."""

    name: str = Field(min_length=1, description="Cluster name.")
    description: str | None = Field(None, description="Free text.")
    source: list[str] = Field(default_factory=list, description="Where the design comes from.")
    accelerators: list[AcceleratorSpec] = Field(
        default_factory=list, description="Inline accelerator definitions, referable by name."
    )
    switches: list[SwitchSpec] = Field(
        default_factory=list, description="Inline switch definitions, referable by name."
    )
    host: HostSpec = Field(description="The host (server, tray) every domain is built from.")
    scale_up: ScaleUpSpec = Field(description="The scale-up domain (supernode).")
    scale_out: ScaleOutSpec | None = Field(None, description="Scale-out fabric; none = one domain.")
    supernodes: int = Field(1, ge=1, description="Number of scale-up domains.")
    racks: RackSpec | None = Field(None, description="Racking (optional).")
    facility: FacilitySpec | None = Field(None, description="Facility constraints (optional).")
    reliability: ReliabilitySpec | None = Field(
        None, description="Failure-rate overrides and recovery design (optional).")
    economics: EconomicsSpec | None = Field(
        None, description="Prices the design review uses (optional; docs/design.md).")
    memory: MemorySpec | None = Field(
        None, description="Global address space over the units' memories (optional; "
        "docs/memory.md).")

"""Schemas of hardware parts: accelerators, CPUs, NICs, switches, other compute units.

These are the entries of the catalog (``supernode catalog``) and may also be written
inline in a cluster file. Figures are per unit, in file units named in each field; the
resolver converts them to SI once (see :mod:`supernode.cluster.resolve`).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator

from supernode.spec.base import Confidence, Precision, StrictModel

UnitKind = Literal["gpu", "npu", "tpu", "asic", "cpu", "dpu", "matrix", "preprocessing"]


class FusedAttentionSpec(StrictModel):
    """Measured fused-attention (FlashAttention-style) throughput of one part, BF16."""

    forward_tflops: dict[int, float] = Field(
        description="Forward TFLOP/s (executed FLOPs) by head dimension, e.g. {128: 579}.")
    backward_tflops: dict[int, float] = Field(
        description="Backward TFLOP/s (2.5 x forward FLOPs convention) by head dimension.")
    forward_keys: float = Field(2048.0, gt=0, description="Mean keys per query of the "
                                "forward measurement (causal 4k sequence: 2048).")
    backward_keys: float = Field(4096.0, gt=0, description="Mean keys per query of the "
                                 "backward measurement (non-causal 4k: 4096).")
    source: str = Field(min_length=1, description="Where the figures come from.")

    @field_validator("forward_tflops", "backward_tflops")
    @classmethod
    def _positive(cls, value: dict[int, float]) -> dict[int, float]:
        if not value:
            raise ValueError("needs at least one head dimension, e.g. {128: 579}")
        for dim, tflops in value.items():
            if not (dim > 0 and tflops > 0):
                raise ValueError(f"{dim}: head dim and TFLOP/s must be > 0, got {tflops}")
        return value


class AcceleratorSpec(StrictModel):
    """One accelerator chip (per GPU/NPU package), as the vendor publishes it."""

    name: str = Field(min_length=1, description="Identifier used to reference this part.")
    vendor: str | None = Field(None, description="Manufacturer.")
    display_name: str | None = Field(None, description="Marketing name.")
    kind: UnitKind = Field("gpu", description="Unit type; a supernode may mix kinds.")
    cuda_compute_capability: str | None = Field(
        None, pattern=r"^[1-9][0-9]?\.[0-9]$", description="CUDA compute capability, "
        "major.minor (9.0: Hopper), of an NVIDIA GPU: the `sm` of NCCL's topology XML.")
    cuda_compute_capability_source: str | None = Field(
        None, description="Where the compute capability comes from.")
    peak_dense_tflops: dict[Precision, float] = Field(
        description="Peak dense (no 2:4 sparsity) TFLOP/s per precision, e.g. {bf16: 989}."
    )
    achievable_matmul_tflops: dict[Precision, float] = Field(
        default_factory=dict, description="Measured maximum achievable dense matmul "
        "TFLOP/s per precision (MAMF, best shape); a precision missing: the part's measured "
        "share of peak at another precision; none measured: 0.79 x peak (median of the "
        "measured parts).")
    achievable_matmul_source: str | None = Field(
        None, description="Where the achievable matmul figures come from.")
    fused_attention: FusedAttentionSpec | None = Field(
        None, description="Measured fused-attention throughput at one reference point: the "
        "level the kernel curves of catalog/attention_kernels.yaml (length, mask, kernel) "
        "are scaled to; null: H100's cuDNN figures scaled by this part's achievable BF16 "
        "matmul over H100's.")
    memory_gbyte: float = Field(gt=0, description="Device memory (HBM) capacity in GB (1e9 B).")
    memory_bandwidth_tbyte_per_s: float = Field(
        gt=0, description="Device memory bandwidth in TB/s (1e12 B/s)."
    )
    scale_up_ports: int = Field(
        ge=0, description="Scale-up (NVLink/xGMI/ICI/UB) links or ports per chip."
    )
    scale_up_port_bandwidth_gbyte_per_s: float = Field(
        ge=0, description="Bandwidth of one scale-up port, per direction, in GB/s."
    )
    scale_up_latency_ns: float = Field(
        500.0, ge=0, description="One-hop scale-up latency (port to port) in ns."
    )
    scale_up_name: str | None = Field(None, description="Name of the scale-up link (NVLink 4...).")
    tdp_w: float | None = Field(None, gt=0, description="Maximum board power in W.")
    power_limit_w: float | None = Field(
        None, gt=0, description="Board power cap in W this part runs at when below its TDP "
        "(a variant shipped capped); null: TDP. The SM clock falls to fit (DVFS, "
        "docs/estimate.md).")
    source: list[str] = Field(default_factory=list, description="Where each figure comes from.")
    confidence: Confidence | None = Field(None, description="How well the figures are sourced.")
    notes: str | None = Field(None, description="Caveats (sparse vs dense, configurable TDP...).")

    @field_validator("peak_dense_tflops", "achievable_matmul_tflops")
    @classmethod
    def _positive_flops(cls, value: dict[str, float], info: Any) -> dict[str, float]:
        if not value and info.field_name == "achievable_matmul_tflops":
            return value
        if not value:
            raise ValueError("needs at least one precision, e.g. {bf16: 989}")
        for precision, tflops in value.items():
            if not tflops > 0:
                raise ValueError(f"{precision}: must be > 0 TFLOP/s, got {tflops}")
        return value


class CpuSpec(StrictModel):
    """Host CPUs of one kind on a host or tray."""

    model: str = Field(description="CPU model name.")
    count: int = Field(1, ge=1, le=64, description="Sockets of this model per host.")
    cores: int | None = Field(None, ge=1, description="Cores per socket.")
    memory_gbyte: float | None = Field(None, gt=0, description="DRAM per socket in GB.")
    tdp_w: float | None = Field(None, gt=0, description="Power per socket in W.")


class NicSpec(StrictModel):
    """Scale-out network adapters on a host (the compute fabric, one port each)."""

    count: int = Field(ge=0, le=1024, description="Compute-fabric NIC ports per host.")
    speed_gbit_per_s: float = Field(gt=0, description="Line rate of one port in Gb/s (1e9 bit/s).")
    model: str | None = Field(None, description="NIC model (ConnectX-7...).")
    latency_ns: float = Field(1000.0, ge=0, description="NIC one-way latency in ns.")


class PcieSpec(StrictModel):
    """PCIe link between accelerators, NICs and CPUs."""

    generation: int = Field(ge=1, le=7, description="PCIe generation.")
    lanes: int = Field(16, ge=1, le=64, description="Lanes per device link.")


class OtherUnitSpec(StrictModel):
    """A non-accelerator compute unit on a host (matrix, preprocessing, DPU)."""

    name: str = Field(description="Unit name.")
    kind: UnitKind = Field(description="Unit type.")
    count: int = Field(ge=1, le=1024, description="Units per host.")
    peak_dense_tflops: dict[Precision, float] = Field(
        default_factory=dict, description="Peak dense TFLOP/s per precision."
    )
    memory_gbyte: float | None = Field(None, gt=0, description="Local memory in GB.")
    tdp_w: float | None = Field(None, gt=0, description="Power per unit in W.")


#: The protocols a switch's ports speak.
SwitchProtocol = Literal["nvlink", "infiniband", "ethernet", "ub"]
#: Name fragments of Ethernet switches, for a switch document that states no protocol.
_ETHERNET_NAMES = ("spectrum", "tomahawk", "gbe", "ethernet", "roce")


def switch_protocol(spec: SwitchSpec) -> str:
    """The switch's stated ``protocol``, else ``ethernet`` when its name or marketing name
    names an Ethernet family (Spectrum, Tomahawk, GbE, Ethernet, RoCE), else
    ``infiniband`` (the scale-out default; scale-up switches in the catalog state theirs)."""
    if spec.protocol is not None:
        return spec.protocol
    text = f"{spec.name} {spec.display_name or ''}".lower()
    return "ethernet" if any(k in text for k in _ETHERNET_NAMES) else "infiniband"


class SwitchSpec(StrictModel):
    """A switch chip or box (NVSwitch, UB switch, InfiniBand/Ethernet switch)."""

    name: str = Field(min_length=1, description="Identifier used to reference this switch.")
    vendor: str | None = Field(None, description="Manufacturer.")
    display_name: str | None = Field(None, description="Marketing name.")
    radix_ports: int = Field(
        ge=2, le=4096, description="Ports per switch at port_speed_gbit_per_s."
    )
    port_speed_gbit_per_s: float = Field(gt=0, description="Speed of one port in Gb/s.")
    latency_ns: float = Field(300.0, ge=0, description="Port-to-port latency in ns.")
    in_network_reduction: bool = Field(False, description="SHARP/NVLS-style in-switch reduction.")
    protocol: SwitchProtocol | None = Field(
        None, description="What its ports speak: nvlink, infiniband, ethernet or ub "
                          "(Unified Bus); null: from the name (Spectrum, Tomahawk, GbE, "
                          "Ethernet or RoCE in the name or marketing name: ethernet; "
                          "otherwise infiniband).")
    power_w: float | None = Field(None, gt=0, description="Switch power in W.")
    ports_per_cage: int = Field(1, ge=1, le=8, description="Ports one optical module serves "
                                "(twin-port OSFP cages: 2).")
    source: list[str] = Field(default_factory=list, description="Where each figure comes from.")
    confidence: Confidence | None = Field(None, description="How well the figures are sourced.")
    notes: str | None = Field(None, description="Caveats.")

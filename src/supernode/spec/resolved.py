"""The resolved cluster: the SI model every other package reads.

:class:`Cluster` and its parts hold a cluster document after :mod:`supernode.cluster`
has looked up its catalog names, filled defaults in from the chip and checked it: units
converted once to SI (bytes, bytes/s, seconds, watts, FLOP/s). It is immutable; searches
return plans, they never mutate it. The conversions of one catalog part to SI
(:func:`convert_accelerator`, :func:`convert_switch`) live here because they need
nothing but the part's document.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from supernode.errors import InputError
from supernode.spec.cluster import ClusterSpec, HybridSpec
from supernode.spec.hardware import AcceleratorSpec, SwitchSpec, switch_protocol
from supernode.units import GBIT_PER_S, GBYTE, GBYTE_PER_S, NS, TBYTE_PER_S, TFLOPS

#: Largest cluster the graph builders accept (accelerators); beyond it, refuse clearly.
MAX_ACCELERATORS = 1_048_576


def ports_per_dimension(dims: Sequence[int]) -> list[int]:
    """Ports one accelerator needs in each torus/mesh dimension: 2 for a ring or line of more
    than 2 (an interior mesh node has two neighbours too), 1 for a pair, 0 for a singleton."""
    return [2 if d > 2 else (1 if d == 2 else 0) for d in dims]


@dataclass(frozen=True)
class Accelerator:
    """An accelerator chip in SI units."""

    name: str
    kind: str
    peak_flops: dict[str, float]
    memory_bytes: float
    memory_bandwidth_bytes_per_s: float
    scale_up_ports: int
    scale_up_port_bandwidth_bytes_per_s: float
    scale_up_latency_s: float
    tdp_w: float | None
    spec: AcceleratorSpec = field(repr=False)
    power_limit_w: float | None = None

    def peak(self, precision: str = "bf16") -> float:
        """Peak dense FLOP/s at ``precision``; falls back to fp16/bf16 twins if missing."""
        twins = {"bf16": "fp16", "fp16": "bf16"}
        if precision in self.peak_flops:
            return self.peak_flops[precision]
        if twins.get(precision) in self.peak_flops:
            return self.peak_flops[twins[precision]]
        raise InputError("precision", f"{self.name} publishes no {precision} peak; "
                         f"known: {', '.join(sorted(self.peak_flops))}")


@dataclass(frozen=True)
class Switch:
    """A switch chip or box in SI units."""

    name: str
    radix: int
    port_bandwidth_bytes_per_s: float
    latency_s: float
    in_network_reduction: bool
    power_w: float | None
    #: What the ports speak (:data:`~supernode.spec.hardware.SwitchProtocol`).
    protocol: str = "infiniband"
    #: Ports one optical module serves (twin-port OSFP cages: 2).
    ports_per_cage: int = 1

    @property
    def ethernet(self) -> bool:
        """True for an Ethernet (RoCE) switch."""
        return self.protocol == "ethernet"


@dataclass(frozen=True)
class Host:
    """A host (server or tray) in SI units."""

    name: str
    accelerators_per_host: int
    nic_count: int
    nic_bandwidth_bytes_per_s: float
    nic_latency_s: float
    power_w: float | None


@dataclass(frozen=True)
class ScaleUp:
    """The scale-up domain in SI units; bandwidths per direction."""

    kind: str
    size: int
    links_per_accelerator: int
    link_bandwidth_bytes_per_s: float
    link_latency_s: float
    medium: str
    switch: Switch | None
    switch_chips: int
    switch_tiers: int
    group_size: int
    dims: tuple[int, ...]
    wraparound: bool
    dim_link_bandwidth_bytes_per_s: tuple[float, ...]
    hybrid: HybridSpec | None

    @property
    def bandwidth_per_accelerator_bytes_per_s(self) -> float:
        """Scale-up injection bandwidth of one accelerator, per direction (bytes/s).

        With per-dimension link bandwidths (torus/mesh), each dimension contributes its
        ports (2 for a ring of more than 2, 1 for a pair) times its bandwidth.
        """
        if self.dim_link_bandwidth_bytes_per_s and self.dims:
            ports = ports_per_dimension(self.dims)
            return sum(p * b for p, b in zip(ports, self.dim_link_bandwidth_bytes_per_s,
                                              strict=True))
        return self.links_per_accelerator * self.link_bandwidth_bytes_per_s


@dataclass(frozen=True)
class ScaleOut:
    """The scale-out fat tree in SI units."""

    tiers: int
    rail_optimized: bool
    switch: Switch
    oversubscription: tuple[float, ...]
    link_latency_s: float
    medium: str
    in_network_reduction: bool
    #: ``ecmp``, ``adaptive`` or ``spray`` (the cluster file's, else the fabric's default).
    routing: str = "adaptive"


@dataclass(frozen=True)
class Cluster:
    """A loaded, resolved cluster: the one container every model reads (SI units)."""

    name: str
    accelerator: Accelerator
    host: Host
    scale_up: ScaleUp
    scale_out: ScaleOut | None
    supernodes: int
    spec: ClusterSpec = field(repr=False)

    @property
    def accelerators(self) -> int:
        """Total accelerators in the cluster."""
        return self.supernodes * self.scale_up.size

    @property
    def hosts(self) -> int:
        """Total hosts (servers or trays)."""
        return math.ceil(self.accelerators / self.host.accelerators_per_host)

    @property
    def nics_per_accelerator(self) -> float:
        """Compute-fabric NIC ports per accelerator."""
        return self.host.nic_count / self.host.accelerators_per_host

    @property
    def scale_out_bandwidth_per_accelerator_bytes_per_s(self) -> float:
        """Scale-out injection bandwidth of one accelerator, per direction (bytes/s)."""
        return self.nics_per_accelerator * self.host.nic_bandwidth_bytes_per_s


def convert_accelerator(spec: AcceleratorSpec) -> Accelerator:
    """Convert an accelerator document to SI (FLOP/s, bytes, bytes/s, seconds)."""
    return Accelerator(
        name=spec.name,
        kind=spec.kind,
        peak_flops={p: v * TFLOPS for p, v in spec.peak_dense_tflops.items()},
        memory_bytes=spec.memory_gbyte * GBYTE,
        memory_bandwidth_bytes_per_s=spec.memory_bandwidth_tbyte_per_s * TBYTE_PER_S,
        scale_up_ports=spec.scale_up_ports,
        scale_up_port_bandwidth_bytes_per_s=spec.scale_up_port_bandwidth_gbyte_per_s
        * GBYTE_PER_S,
        scale_up_latency_s=spec.scale_up_latency_ns * NS,
        tdp_w=spec.tdp_w,
        spec=spec,
        power_limit_w=spec.power_limit_w,
    )


def convert_switch(spec: SwitchSpec) -> Switch:
    """Convert a switch document to SI."""
    return Switch(
        name=spec.name,
        radix=spec.radix_ports,
        port_bandwidth_bytes_per_s=spec.port_speed_gbit_per_s * GBIT_PER_S,
        latency_s=spec.latency_ns * NS,
        in_network_reduction=spec.in_network_reduction,
        power_w=spec.power_w,
        protocol=switch_protocol(spec),
        ports_per_cage=spec.ports_per_cage,
    )

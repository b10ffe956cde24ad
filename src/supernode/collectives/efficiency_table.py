"""The efficiency table of one link generation, in SI, and the set of tables.

What each field means (the fraction of a tier's line rate a collective moves under each
NCCL protocol, the pipeline fill, per-step latencies) is stated in
:mod:`supernode.collectives.efficiency`, which reads the tables from
``data/collectives/efficiency.yaml`` (through :mod:`supernode.collectives.efficiency_file`)
and decides which tables are in force. The types live here, below both, so the file
reader and the loader import them without importing each other.
"""

from __future__ import annotations

from collections.abc import ItemsView, Iterator, Mapping
from dataclasses import dataclass, field

from supernode.errors import InputError

#: NCCL's protocols, lowest latency first.
PROTOCOLS: tuple[str, ...] = ("ll", "ll128", "simple")
#: The parameters a table may declare (file names, file units); any may be fitted.
FITTABLE: tuple[str, ...] = (
    "simple_efficiency",
    "simple_half_bandwidth_bytes",
    "ll128_ratio",
    "ll_ratio",
    "ll_max_gbyte_per_s",
    "ll128_max_gbyte_per_s",
    "ll_latency_us",
    "ll128_latency_us",
    "simple_latency_us",
    "in_network_efficiency",
    "in_network_half_bandwidth_bytes",
    "in_network_latency_us",
)
#: Parameters every root table (no ``derived_from``) must give.
REQUIRED: tuple[str, ...] = ("simple_efficiency", "simple_half_bandwidth_bytes",
                             "simple_latency_us")


@dataclass(frozen=True)
class EfficiencyTable:
    """An efficiency table in SI units (see the module docstring)."""

    name: str
    simple_efficiency: float
    simple_half_bandwidth_bytes: float
    simple_latency_s: float
    ll128_ratio: float | None = None
    ll_ratio: float | None = None
    ll_max_bytes_per_s: float | None = None
    ll128_max_bytes_per_s: float | None = None
    ll_latency_s: float = 0.0
    ll128_latency_s: float = 0.0
    in_network_efficiency: float | None = None
    in_network_latency_s: float = 0.0
    in_network_half_bandwidth_bytes: float | None = None

    def __post_init__(self) -> None:
        for name in ("simple_efficiency", "ll128_ratio", "ll_ratio", "in_network_efficiency"):
            value = getattr(self, name)
            if value is not None and not 0 < value <= 1:
                raise InputError(f"tables.{self.name}.{name}", f"got {value}; must be in (0, 1]")
        if self.simple_half_bandwidth_bytes < 0 or min(
                self.simple_latency_s, self.ll_latency_s, self.ll128_latency_s,
                self.in_network_latency_s) < 0:
            raise InputError(f"tables.{self.name}", "latencies and S_half must be ≥ 0")

    def has(self, protocol: str) -> bool:
        """True when ``protocol`` runs on this link generation."""
        if protocol == "simple":
            return True
        if protocol == "ll128":
            return self.ll128_ratio is not None
        if protocol == "ll":
            return self.ll_ratio is not None
        raise ValueError(f"unknown protocol {protocol!r}; known: {PROTOCOLS}")

    def efficiency(self, protocol: str, line_rate_bytes_per_s: float) -> float:
        """Fraction of ``line_rate_bytes_per_s`` (per rank) moved under ``protocol``.

        0 where the protocol does not run. LL and LL128 caps are per rank, so their
        fraction falls as the line rate grows.
        """
        if not self.has(protocol):
            return 0.0
        eta = self.simple_efficiency
        if protocol == "simple":
            return eta
        ratio, cap = ((self.ll128_ratio, self.ll128_max_bytes_per_s) if protocol == "ll128"
                      else (self.ll_ratio, self.ll_max_bytes_per_s))
        assert ratio is not None  # has(protocol): the protocol's ratio is set
        eff = eta * float(ratio)
        if cap is not None and line_rate_bytes_per_s > 0:
            eff = min(eff, cap / line_rate_bytes_per_s)
        return eff

    def step_latency_s(self, protocol: str) -> float:
        """Per-step latency of ``protocol`` (seconds)."""
        return {"ll": self.ll_latency_s, "ll128": self.ll128_latency_s,
                "simple": self.simple_latency_s}[protocol]

    def half_bandwidth_bytes(self, protocol: str, in_network: bool = False) -> float:
        """Pipeline fill S_half in bytes: Simple's, or the in-network one for NVLS/SHARP
        phases (its own when given); 0 for LL and LL128."""
        if in_network:
            own = self.in_network_half_bandwidth_bytes
            return self.simple_half_bandwidth_bytes if own is None else own
        return self.simple_half_bandwidth_bytes if protocol == "simple" else 0.0


@dataclass(frozen=True)
class Tables:
    """All efficiency tables plus NCCL's base latencies (SI), read-only."""

    tables: Mapping[str, EfficiencyTable]
    base_latency_s: Mapping[str, Mapping[str, float]] = field(default_factory=dict)

    def __getitem__(self, name: str) -> EfficiencyTable:
        return self.tables[name]

    def __contains__(self, name: object) -> bool:
        return name in self.tables

    def __iter__(self) -> Iterator[str]:
        return iter(self.tables)

    def __len__(self) -> int:
        return len(self.tables)

    def items(self) -> ItemsView[str, EfficiencyTable]:
        """(name, table) pairs."""
        return self.tables.items()

    def base_latency(self, family: str, protocol: str) -> float:
        """NCCL's base latency of an algorithm family under a protocol (seconds; 0 if none)."""
        return float(self.base_latency_s.get(family, {}).get(protocol, 0.0))

    def __hash__(self) -> int:
        return id(self)

"""The communication fabric as a collective sees it: nested tiers, innermost first.

A :class:`Fabric` is a tuple of :class:`FabricTier` s. Tier ``j`` connects ``group_size``
ranks (cumulative: 8 for an NVLink domain, 256 for a leaf group, ...); a group of
consecutive, aligned ranks that does not fit in tier ``j - 1`` crosses tier ``j``.
Bandwidths are per rank, per direction: what one rank can inject into that tier (one
400 Gb/s NIC per GPU is 50e9 bytes/s; several NICs per GPU add up).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from supernode.collectives.efficiency import EfficiencyTable, get_table, load_efficiency_tables
from supernode.errors import InputError
from supernode.units import GBIT_PER_S, GBYTE_PER_S


@dataclass(frozen=True)
class FabricTier:
    """One tier of the fabric.

    ``group_size``: ranks reachable within this tier (cumulative). ``bandwidth_bytes_per_s``:
    per rank, per direction. ``latency_s``: per-step (per-hop) latency α. ``efficiency``:
    name of a message-size efficiency table. ``oversubscription`` (≥ 1) divides the
    bandwidth of traffic that crosses this tier. ``in_network_reduction``: NVLS/SHARP.
    """

    name: str
    group_size: int
    bandwidth_bytes_per_s: float
    latency_s: float
    in_network_reduction: bool = False
    efficiency: str = "ideal"
    oversubscription: float = 1.0

    def __post_init__(self) -> None:
        checks = (
            ("group_size", isinstance(self.group_size, int | np.integer) and self.group_size >= 1,
             "an integer ≥ 1"),
            ("bandwidth_bytes_per_s", self.bandwidth_bytes_per_s > 0, "> 0"),
            ("latency_s", self.latency_s >= 0, "≥ 0"),
            ("oversubscription", self.oversubscription >= 1, "≥ 1"),
        )
        for field, ok, allowed in checks:
            if not ok:
                raise InputError(f"tiers[{self.name}].{field}",
                                 f"got {getattr(self, field)!r}; must be {allowed}")


@dataclass(frozen=True)
class Fabric:
    """Tiers innermost first; group sizes strictly increase, each a multiple of the last."""

    tiers: tuple[FabricTier, ...]

    def __post_init__(self) -> None:
        if not self.tiers:
            raise InputError("tiers", "a fabric needs at least one tier")
        object.__setattr__(self, "tiers", tuple(self.tiers))
        for j in range(1, len(self.tiers)):
            inner, outer = self.tiers[j - 1].group_size, self.tiers[j].group_size
            if outer <= inner or outer % inner:
                raise InputError(f"tiers[{j}].group_size",
                                 f"{outer} must exceed and be a multiple of tier "
                                 f"{j - 1}'s group size {inner}")

    @property
    def capacity(self) -> int:
        """Most ranks a collective can span: the outermost tier's group size."""
        return self.tiers[-1].group_size

    @property
    def group_sizes(self) -> np.ndarray:
        """Cumulative group size of each tier, innermost first."""
        return np.array([t.group_size for t in self.tiers], dtype=np.int64)

    def tier_index_for_group(self, span):
        """Index of the slowest tier that ``span`` consecutive ranks cross (vectorised).

        That is the innermost tier whose group holds all ``span`` ranks. Spans beyond
        :attr:`capacity` raise :class:`InputError`.
        """
        s = np.asarray(span)
        if np.any(s > self.capacity):
            raise InputError("ranks", f"{int(np.max(s))} ranks exceed the fabric's "
                             f"{self.capacity} (outermost tier group size)")
        index = np.searchsorted(self.group_sizes, s, side="left")
        return int(index) if index.ndim == 0 else index

    def tier_for_group(self, span: int) -> FabricTier:
        """The slowest tier a group of ``span`` consecutive ranks crosses."""
        return self.tiers[self.tier_index_for_group(int(span))]

    def tiers_crossed(self, span: int) -> tuple[FabricTier, ...]:
        """Every tier a group of ``span`` consecutive ranks uses, innermost first."""
        return self.tiers[: self.tier_index_for_group(int(span)) + 1]

    def innermost(self) -> Fabric:
        """The fabric of one innermost group (just tier 0)."""
        return Fabric(self.tiers[:1])

    def outer(self) -> Fabric:
        """The fabric seen by one rail: rank ``i`` of every innermost group.

        Tier 0 is dropped and group sizes are divided by its size; per-rank bandwidths
        are unchanged, as each rail uses its own ranks' links. Needs two or more tiers.
        """
        if len(self.tiers) < 2:
            raise InputError("tiers", "a single-tier fabric has no outer fabric")
        g0 = self.tiers[0].group_size
        return Fabric(tuple(with_group_size(t, t.group_size // g0) for t in self.tiers[1:]))


def with_group_size(tier: FabricTier, group_size: int) -> FabricTier:
    """A copy of ``tier`` spanning ``group_size`` ranks (e.g. for a strided sub-fabric)."""
    return FabricTier(tier.name, int(group_size), tier.bandwidth_bytes_per_s, tier.latency_s,
                      tier.in_network_reduction, tier.efficiency, tier.oversubscription)




def make_tier(name: str, group_size: int, bandwidth_bytes_per_s: float, efficiency: str, *,
              in_network_reduction: bool = False, oversubscription: float = 1.0,
              latency_s: float | None = None,
              tables: Mapping[str, EfficiencyTable] | None = None) -> FabricTier:
    """A tier whose latency defaults to its efficiency table's calibrated α (seconds)."""
    table = get_table(tables if tables is not None else load_efficiency_tables(), efficiency)
    alpha = table.step_latency_s if latency_s is None else latency_s
    return FabricTier(name, int(group_size), float(bandwidth_bytes_per_s), float(alpha),
                      bool(in_network_reduction), efficiency, float(oversubscription))


#: Accelerator id fragments -> NVLink generation table (first match wins).
_SCALE_UP_HINTS: tuple[tuple[str, str], ...] = (
    ("gb300", "nvlink5"), ("gb200", "nvlink5"), ("b300", "nvlink5"), ("b200", "nvlink5"),
    ("b100", "nvlink5"), ("gh200", "nvlink4"), ("h200", "nvlink4"), ("h100", "nvlink4"),
    ("h800", "nvlink4"), ("h20", "nvlink4"), ("a100", "nvlink3"), ("a800", "nvlink3"),
)


def scale_up_table_is_borrowed(accelerator: str | None) -> bool:
    """True when no efficiency table was measured for this part's scale-up bus (the nearest
    NVLink generation's is used instead)."""
    key = (accelerator or "").lower()
    return not any(fragment in key for fragment, _ in _SCALE_UP_HINTS)


def scale_up_efficiency_name(accelerator: str | None, bandwidth_bytes_per_s: float) -> str:
    """Efficiency table for a scale-up domain: by accelerator id, else by per-GPU bandwidth.

    NVLink 3 (A100) is 300 GB/s, NVLink 4 (H100/H200) 450 GB/s and NVLink 5 (B200)
    900 GB/s per GPU per direction; unknown parts map to the nearest generation.
    """
    key = (accelerator or "").lower()
    for fragment, name in _SCALE_UP_HINTS:
        if fragment in key:
            return name
    if bandwidth_bytes_per_s >= 675 * GBYTE_PER_S:
        return "nvlink5"
    return "nvlink4" if bandwidth_bytes_per_s >= 375 * GBYTE_PER_S else "nvlink3"


def scale_out_efficiency_name(nic_bytes_per_s: float) -> str:
    """InfiniBand generation from the NIC line rate per GPU (HDR 200, NDR 400, XDR 800 Gb/s)."""
    if nic_bytes_per_s >= 600 * GBIT_PER_S:
        return "infiniband_xdr"
    return "infiniband_ndr" if nic_bytes_per_s >= 300 * GBIT_PER_S else "infiniband_hdr"


def fabric_from_validation_system(system: dict, ranks: int | None = None, *,
                                  tables: Mapping[str, EfficiencyTable] | None = None
                                  ) -> Fabric:
    """Build the fabric of a validation case's ``system`` block.

    Scale-up tier: ``scale_up_gpus`` ranks at ``scale_up_gigabytes_per_s`` per GPU per
    direction; NVLS when ``in_network_reduction`` is true, or null and the NVLink
    generation has it (a well-tuned run enables it). Scale-out tier (only when the
    system or ``ranks`` exceed one domain): ``scale_out_gigabits_per_s`` NIC line rate per
    GPU, non-blocking (oversubscription 1), no SHARP. Latencies come from the tables.
    """
    tables = tables if tables is not None else load_efficiency_tables()
    up_gpus = _positive_int(system, "scale_up_gpus")
    up_bw = _positive_float(system, "scale_up_gigabytes_per_s") * GBYTE_PER_S
    up_name = scale_up_efficiency_name(system.get("accelerator"), up_bw)
    flag = system.get("in_network_reduction")
    if flag is None:
        flag = get_table(tables, up_name).in_network_efficiency is not None and up_gpus > 2
    tiers = [make_tier("scale_up", up_gpus, up_bw, up_name,
                       in_network_reduction=bool(flag), tables=tables)]
    total = max(int(system.get("gpus") or up_gpus), int(ranks or 1))
    if total > up_gpus:
        nic_bw = _positive_float(system, "scale_out_gigabits_per_s") * GBIT_PER_S
        size = math.ceil(total / up_gpus) * up_gpus
        tiers.append(make_tier("scale_out", size, nic_bw, scale_out_efficiency_name(nic_bw),
                               tables=tables))
    return Fabric(tuple(tiers))


def _positive_float(system: dict, key: str) -> float:
    value = system.get(key)
    if not isinstance(value, int | float) or isinstance(value, bool) or value <= 0:
        raise InputError(f"system.{key}", f"got {value!r}; a positive number is required")
    return float(value)


def _positive_int(system: dict, key: str) -> int:
    value = _positive_float(system, key)
    if value != int(value):
        raise InputError(f"system.{key}", f"got {value!r}; an integer is required")
    return int(value)

"""The communication fabric as a collective sees it: nested tiers, innermost first.

A :class:`Fabric` is a tuple of :class:`FabricTier` s. Tier ``j`` connects ``group_size``
ranks (cumulative: 72 for an NVL72 rack, 2,304 for the ranks under one leaf group, ...);
a group of ranks that does not fit in one tier-``(j-1)`` group crosses tier ``j``.
Bandwidths are per rank, per direction: what one rank can inject into that tier (one
400 Gb/s NIC per GPU is 50e9 bytes/s; several NICs per GPU add up; a NIC faster than its
switch port runs at the port's rate).

``kind`` says how a tier's per-rank bandwidth is laid out, which matters to the algorithms
of the innermost tier: ``switch`` (any pattern at the full rate: NVSwitch), ``nic`` (a
scale-out tier: any pattern at the rank's NIC rate, every hop through the NIC),
``full_mesh`` (one link per peer, ``bandwidth / (members - 1)`` each: xGMI), ``torus``
(``dims`` with ``dim_bandwidth_bytes_per_s`` per link and direction; a ring along a
dimension uses 2 ports with wrap-around, 1 port's worth on a line).

A *group view* (:mod:`supernode.collectives.groups`) is a Fabric whose tiers describe one
group of ranks: ``group_size`` the group's members inside one tier group, ``parts`` and
``smallest`` the tier-``(j-1)`` parts inside it and the members of the smallest (a group
that straddles domains has uneven parts), ``shape`` its extent per torus dimension.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, overload

import numpy as np

from supernode.errors import InputError

if TYPE_CHECKING:
    from supernode.collectives.efficiency_table import Tables

TIER_KINDS = ("switch", "full_mesh", "torus", "nic")


@dataclass(frozen=True)
class FabricTier:
    """One tier of the fabric.

    ``group_size``: ranks reachable within this tier (cumulative). ``bandwidth_bytes_per_s``:
    per rank, per direction. ``latency_s``: one-way topology latency of a step between two
    ranks whose slowest common tier is this one (links, switches, NICs; 0 where the
    efficiency table's per-step latency already covers it). ``efficiency``: name of an
    efficiency table. ``oversubscription`` (≥ 1) divides the bandwidth of traffic that
    crosses this tier's uplinks. ``in_network_reduction``: NVLS/SHARP switches.
    ``routing`` (``ecmp``, ``adaptive``, ``spray``) and ``hash_ports``: how traffic that
    crosses this tier spreads over the uplinks of one leaf, and how many there are
    (0: no uplinks crossed), ``hash_group`` the ranks under one such leaf (0: one leaf);
    static ``ecmp`` prices the expected collision loss
    (:mod:`supernode.collectives.routing`).
    """

    name: str
    group_size: int
    bandwidth_bytes_per_s: float
    latency_s: float = 0.0
    in_network_reduction: bool = False
    efficiency: str = "ideal"
    oversubscription: float = 1.0
    kind: str = "switch"
    dims: tuple[int, ...] = ()
    wraparound: bool = True
    dim_bandwidth_bytes_per_s: tuple[float, ...] = ()
    parts: int = 0
    smallest: int = 0
    shape: tuple[tuple[int, bool], ...] = ()
    routing: str = "adaptive"
    hash_ports: int = 0
    hash_group: int = 0

    def __post_init__(self) -> None:
        checks = (
            ("group_size", isinstance(self.group_size, int | np.integer) and self.group_size >= 1,
             "an integer ≥ 1"),
            ("bandwidth_bytes_per_s", self.bandwidth_bytes_per_s > 0, "> 0"),
            ("latency_s", self.latency_s >= 0, "≥ 0"),
            ("oversubscription", self.oversubscription >= 1, "≥ 1"),
            ("kind", self.kind in TIER_KINDS, f"one of {', '.join(TIER_KINDS)}"),
            ("parts", self.parts >= 0 and self.smallest >= 0, "≥ 0"),
            ("routing", self.routing in ("ecmp", "adaptive", "spray"),
             "one of ecmp, adaptive, spray"),
            ("hash_ports", self.hash_ports >= 0 and self.hash_group >= 0, "≥ 0"),
        )
        for field, ok, allowed in checks:
            if not ok:
                raise InputError(f"tiers[{self.name}].{field}",
                                 f"got {getattr(self, field)!r}; must be {allowed}")
        if self.kind == "torus" and (not self.dims or len(self.dim_bandwidth_bytes_per_s)
                                     != len(self.dims)):
            raise InputError(f"tiers[{self.name}].dims", "a torus tier needs dims and one "
                             "link bandwidth per dimension")

    def link_bandwidth_bytes_per_s(self, members: int) -> float:
        """Per-link rate (bytes/s) of a direct-link tier: one peer's link (full mesh) or
        the fastest dimension's (torus); the per-rank rate for a switch."""
        if self.kind == "full_mesh":
            return self.bandwidth_bytes_per_s / max(1, self.group_size - 1)
        if self.kind == "torus":
            return max(self.dim_bandwidth_bytes_per_s)
        return self.bandwidth_bytes_per_s


@dataclass(frozen=True)
class Fabric:
    """Tiers innermost first; group sizes strictly increase, each a multiple of the
    previous one except the outermost (a last leaf group may be partly filled) and tiers
    with explicit ``parts`` (group views of uneven groups)."""

    tiers: tuple[FabricTier, ...]

    def __post_init__(self) -> None:
        if not self.tiers:
            raise InputError("tiers", "a fabric needs at least one tier")
        object.__setattr__(self, "tiers", tuple(self.tiers))
        for j in range(1, len(self.tiers)):
            inner, outer = self.tiers[j - 1].group_size, self.tiers[j]
            last = j == len(self.tiers) - 1
            if outer.group_size <= inner or (outer.group_size % inner and not outer.parts
                                             and not last):
                raise InputError(f"tiers[{j}].group_size",
                                 f"{outer.group_size} must exceed and be a multiple of tier "
                                 f"{j - 1}'s group size {inner}")

    @property
    def capacity(self) -> int:
        """Most ranks a collective can span: the outermost tier's group size."""
        return self.tiers[-1].group_size

    @property
    def group_sizes(self) -> np.ndarray:
        """Cumulative group size of each tier, innermost first."""
        return np.array([t.group_size for t in self.tiers], dtype=np.int64)

    @overload
    def tier_index_for_group(self, span: int) -> int: ...
    @overload
    def tier_index_for_group(self, span: np.ndarray) -> np.ndarray | int: ...

    def tier_index_for_group(self, span: Any) -> Any:
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
        out = []
        for t in self.tiers[1:]:
            size = max(1, t.group_size // g0)
            parts = t.parts if t.parts and t is not self.tiers[1] else 0
            out.append(replace(t, group_size=size, parts=parts,
                               smallest=max(1, t.smallest // g0) if parts else 0))
        return Fabric(tuple(out))


def with_group_size(tier: FabricTier, group_size: int, *, parts: int = 0, smallest: int = 0,
                    shape: tuple[tuple[int, bool], ...] = ()) -> FabricTier:
    """A copy of ``tier`` spanning ``group_size`` ranks (a group's view of it)."""
    return replace(tier, group_size=int(group_size), parts=int(parts), smallest=int(smallest),
                   shape=tuple(shape))


def make_tier(name: str, group_size: int, bandwidth_bytes_per_s: float, efficiency: str, *,
              in_network_reduction: bool = False, oversubscription: float = 1.0,
              latency_s: float = 0.0, kind: str = "switch", dims: tuple[int, ...] = (),
              wraparound: bool = True, dim_bandwidth_bytes_per_s: tuple[float, ...] = (),
              tables: Tables | None = None, routing: str = "adaptive",
              hash_ports: int = 0, hash_group: int = 0) -> FabricTier:
    """A tier using efficiency table ``efficiency`` (checked against ``tables``)."""
    from supernode.collectives.efficiency import get_table, load_efficiency_tables

    get_table(tables if tables is not None else load_efficiency_tables(), efficiency)
    return FabricTier(name, int(group_size), float(bandwidth_bytes_per_s), float(latency_s),
                      bool(in_network_reduction), efficiency, float(oversubscription), kind,
                      tuple(int(d) for d in dims), bool(wraparound),
                      tuple(float(b) for b in dim_bandwidth_bytes_per_s), routing=routing,
                      hash_ports=int(hash_ports), hash_group=int(hash_group))

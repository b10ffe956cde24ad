"""One description per collective algorithm: a schedule of phases over the tiers.

An algorithm (:mod:`.algorithms`, :mod:`.hierarchy`, :mod:`.innetwork`, :mod:`.torus`)
turns ``(op, levels, protocol)`` into a :class:`Schedule` (or raises
:class:`NotApplicable` saying why it cannot run there): phases run one after the other;
inside a phase every rank moves its share at once, pipelined. Each phase says

* which flow ``pattern`` it is (``ring``, ``chain``, ``tree``, ``multicast``, ``pairs``,
  ``partner``, ``p2p``, ``dimension_rings``) over which ``scope`` of ranks (the whole
  group, each innermost part, or each rail across parts), with the bytes of one flow per
  byte of message (``flow_bytes``) and its parameters: this is what the flow simulator
  (:mod:`supernode.netsim.collectives`) turns into flows;
* the bytes that cross the busiest port of each level per byte of message
  (:class:`Load`): this is what the α-β model divides by each port's rate;
* the latency steps it pays per level.

:func:`phase_time_s` is the α-β cost of a phase, for message sizes ``S`` (array):

``latency + max_l (bytes_l · S) / rate_l + S_half / rate_bind``

with ``latency = Σ_l steps_l · max(table_l step latency under the protocol, tier_l
one-way latency)`` (the tables' step latencies are measured totals, wire included),
``rate_l`` the port's share of the level's per-rank line rate times the protocol's
efficiency (NVLS/SHARP's in-network efficiency for ``in_network`` phases), divided by the
oversubscription of the uplinks it crosses, and the Simple pipeline fill ``S_half`` paid at
the binding port. Both the α-β cost and the flows come from the same phase, so the two
cannot drift apart (``tests/test_collectives_differential.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import SupportsFloat

import numpy as np
import numpy.typing as npt

from supernode.collectives.efficiency import EfficiencyTable, Tables
from supernode.collectives.levels import Level
from supernode.collectives.routing import collision_efficiency, flows_per_port

SCOPES = ("group", "parts", "rails")


class NotApplicable(ValueError):
    """The algorithm cannot run this op on this group; the message says why."""


def require_op(name: str, op: str, ops: frozenset[str]) -> None:
    """Raise :class:`NotApplicable` unless ``op`` is one of ``ops``."""
    if op not in ops:
        raise NotApplicable(f"{name!r} does not perform {op}; it serves "
                            f"{', '.join(sorted(ops))}")


@dataclass(frozen=True)
class Load:
    """Bytes through the busiest port of ``level`` per byte of message.

    ``share`` is that port's fraction of the level's per-rank line rate (1 for a switch
    or NIC port, ``1/(g-1)`` for one full-mesh link, a dimension's link over the rank's
    total for a torus); ``port`` names it in reports.
    """

    level: int
    bytes: float
    share: float = 1.0
    port: str = ""


@dataclass(frozen=True)
class Phase:
    """One phase of a schedule (see the module docstring)."""

    pattern: str
    scope: str
    loads: tuple[Load, ...]
    steps: tuple[tuple[int, float], ...]
    flow_bytes: float
    in_network: bool = False
    fill: bool = True
    params: tuple[tuple[str, object], ...] = ()

    def param(self, name: str, default: object = None) -> object:
        """A pattern parameter by name."""
        return dict(self.params).get(name, default)

    def number(self, name: str, default: float) -> float:
        """A numeric pattern parameter by name, as a float."""
        value = self.param(name, default)
        if isinstance(value, float | int):  # the usual case, without the Protocol check
            return float(value)              # below (isinstance of a Protocol: ~20 us)
        if not isinstance(value, SupportsFloat):
            raise TypeError(f"phase parameter {name!r} is {value!r}, not a number")
        return float(value)


@dataclass(frozen=True)
class Schedule:
    """An algorithm's phases for one op, group and protocol (sizes per byte of message)."""

    algorithm: str
    op: str
    protocol: str
    family: str
    phases: tuple[Phase, ...]
    levels: tuple[Level, ...] = field(repr=False, default=())


@dataclass(frozen=True)
class PhaseCost:
    """α-β cost of one phase for message sizes ``S`` (arrays, seconds)."""

    latency_s: np.ndarray
    transfer_s: np.ndarray
    fill_s: np.ndarray
    binding: np.ndarray  # index into the phase's loads

    @property
    def total_s(self) -> np.ndarray:
        """Latency + transfer + fill (seconds)."""
        total: np.ndarray = self.latency_s + self.transfer_s + self.fill_s
        return total


def table_of(level: Level, tables: Tables | None) -> EfficiencyTable:
    """The efficiency table of a level: from ``tables`` by name (a refit's trial values),
    else the level's own."""
    return level.table if tables is None else tables[level.tier.efficiency]


def load_efficiency(load: Load, levels: Sequence[Level], protocol: str, phase: Phase,
                    tables: Tables | None = None) -> float:
    """Fraction of the port's line rate a phase moves: the protocol's efficiency (or the
    in-network one) times the algorithm's own factor (PAT's 0.75). The LL/LL128 caps are
    per rank, against the rank's whole line rate at the level (every port of a torus or
    full mesh), as NCCL caps a ring's bus bandwidth over all its channels."""
    level = levels[load.level]
    table = table_of(level, tables)
    if phase.in_network:
        eta = table.in_network_efficiency or 0.0
    else:
        eta = table.efficiency(protocol, level.tier.bandwidth_bytes_per_s)
    return eta * phase.number("efficiency", 1.0)


def routing_efficiency(load: Load, levels: Sequence[Level], phase: Phase) -> float:
    """Expected fraction of a load's rate left by static ECMP hashing where its level's
    uplinks hash flows (``routing == "ecmp"`` and ``hash_ports`` > 1); 1 under adaptive
    routing or spraying, inside a domain and for in-network phases
    (:mod:`supernode.collectives.routing`)."""
    level = levels[load.level]
    tier = level.tier
    if level.index == 0 or phase.in_network or tier.routing != "ecmp" or tier.hash_ports < 2:
        return 1.0
    remote = level.ranks - levels[load.level - 1].members
    return collision_efficiency(flows_per_port(phase.pattern, remote), hashed_uplinks(level))


def hashed_uplinks(level: Level) -> int:
    """Uplinks the collective's flows hash onto at ``level``: a leaf's ``hash_ports`` times
    the leaves its ranks span (every link the phase uses can be the fullest)."""
    tier = level.tier
    leaves = -(-level.ranks // tier.hash_group) if tier.hash_group else 1
    return int(tier.hash_ports * max(1, leaves))


def load_rate_bytes_per_s(load: Load, levels: Sequence[Level], protocol: str, phase: Phase,
                          tables: Tables | None = None, collisions: bool = True) -> float:
    """Rate of a load's port: share of the level's line rate x efficiency x the expected
    ECMP collision loss (:func:`routing_efficiency`) / oversubscription."""
    level = levels[load.level]
    line = level.tier.bandwidth_bytes_per_s * load.share
    hashing = routing_efficiency(load, levels, phase) if collisions else 1.0
    return line * load_efficiency(load, levels, protocol, phase, tables) * hashing / (
        level.tier.oversubscription if level.index > 0 else 1.0)


def step_latency_s(level: Level, protocol: str, in_network: bool,
                   tables: Tables | None = None) -> float:
    """One step's latency at ``level`` (seconds): the protocol's (or in-network) step
    latency, measured on real systems and so including their wire, or the tier's
    one-way topology latency where that is longer (a step cannot beat the wire)."""
    table = table_of(level, tables)
    proto = table.in_network_latency_s if in_network else table.step_latency_s(protocol)
    return max(proto, level.tier.latency_s)


def phase_time_s(phase: Phase, levels: Sequence[Level], protocol: str, sizes: npt.ArrayLike,
                 tables: Tables | None = None, collisions: bool = True) -> PhaseCost:
    """α-β cost of ``phase`` for message sizes ``sizes`` (bytes, array); see module doc.

    ``tables`` (by name) replaces the levels' own tables (a refit's trial values).
    ``collisions`` False leaves out the expected ECMP loss (the simulator, which hashes
    its flows itself, takes its latency and fill from here).
    """
    s = np.asarray(sizes, dtype=float)
    latency_s = sum((steps * step_latency_s(levels[j], protocol, phase.in_network, tables)
                     for j, steps in phase.steps), 0.0) + phase.number("extra_latency_s", 0.0)
    latency = np.full(s.shape, float(latency_s))
    if not phase.loads:
        zero = np.zeros(s.shape)
        return PhaseCost(latency, zero, zero, np.zeros(s.shape, dtype=np.int64))
    rates = [load_rate_bytes_per_s(ld, levels, protocol, phase, tables, collisions)
             for ld in phase.loads]
    with np.errstate(divide="ignore", invalid="ignore"):
        times = np.stack([np.where(ld.bytes * s > 0, ld.bytes * s / r if r > 0 else np.inf, 0.0)
                          for ld, r in zip(phase.loads, rates, strict=True)])
    binding = np.argmax(times, axis=0)
    transfer = np.take_along_axis(times, binding[None], axis=0)[0]
    fill = np.zeros(s.shape)
    if phase.fill and (protocol == "simple" or phase.in_network):
        halves = np.array([table_of(levels[ld.level], tables).half_bandwidth_bytes(
            protocol, phase.in_network) / r if r > 0 else np.inf
            for ld, r in zip(phase.loads, rates, strict=True)])
        fill = np.where(transfer > 0, halves[binding], 0.0)
    return PhaseCost(latency, transfer, fill, binding)


def phase_seconds(phase: Phase, levels: Sequence[Level], protocol: str, sizes: np.ndarray,
                  tables: Tables | None = None) -> np.ndarray:
    """Total seconds of :func:`phase_time_s` (the same numbers, without the breakdown)."""
    latency = sum((steps * step_latency_s(levels[j], protocol, phase.in_network, tables)
                   for j, steps in phase.steps), 0.0) + phase.number("extra_latency_s", 0.0)
    if not phase.loads:
        return np.full(sizes.shape, latency)
    fill_on = phase.fill and (protocol == "simple" or phase.in_network)
    best = np.zeros(sizes.shape)
    fill = np.zeros(sizes.shape)
    for ld in phase.loads:
        rate = load_rate_bytes_per_s(ld, levels, protocol, phase, tables)
        t = ld.bytes * sizes / rate if rate > 0 else np.full(sizes.shape, np.inf)
        if fill_on:
            half = table_of(levels[ld.level], tables).half_bandwidth_bytes(
                protocol, phase.in_network)
            fill = np.where(t > best, half / rate if rate > 0 else np.inf, fill)
        best = np.maximum(best, t)
    return latency + best + np.where(best > 0, fill, 0.0)


def schedule_time_s(schedule: Schedule, tables: Tables, sizes: npt.ArrayLike) -> np.ndarray:
    """Seconds of a whole schedule for message sizes ``sizes`` (bytes, array): NCCL's base
    latency of the algorithm family plus every phase in sequence, with ``tables``' values."""
    s = np.asarray(sizes, dtype=float)
    total = np.full(s.shape, tables.base_latency(schedule.family, schedule.protocol))
    for phase in schedule.phases:
        total = total + phase_seconds(phase, schedule.levels, schedule.protocol, s, tables)
    return np.where(s > 0, total, 0.0)


def binding_tier(schedule: Schedule, sizes: npt.ArrayLike, tables: Tables | None = None
                 ) -> np.ndarray:
    """Name of the tier whose port binds the longest phase, per size (object array)."""
    s = np.asarray(sizes, dtype=float)
    best = np.full(s.shape, -np.inf)
    names = np.full(s.shape, "", dtype=object)
    for phase in schedule.phases:
        cost = phase_time_s(phase, schedule.levels, schedule.protocol, s, tables)
        if not phase.loads:
            continue
        level_of = np.array([schedule.levels[ld.level].tier.name for ld in phase.loads],
                            dtype=object)
        longer = cost.transfer_s > best
        names = np.where(longer, level_of[cost.binding], names)
        best = np.maximum(best, cost.transfer_s)
    return names

"""Collectives as flows, realised from the same schedules the α-β model costs.

For ``op`` over ``groups`` (a ``G x n`` array of accelerator indices, ``G`` groups running
the same collective at once, members in rank order), the algorithm's
:class:`~supernode.collectives.schedule.Schedule` is built on the groups' view of the
cluster's collective fabric (:func:`supernode.collectives.groups.view_from_members`:
where they straddle domains, the worst group binds) and each of its phases becomes

* one delay: the phase's latency (protocol steps at each tier, each at least the tier's one-way
  latency, which equals the routed path latency) and its pipeline fill, from
  :func:`~supernode.collectives.schedule.phase_time_s` (and the schedule's base latency
  once);
* one transfer of flows, per pattern: ``ring`` (channels of :mod:`.channels`), ``chain``,
  ``tree`` (chains inside parts, NCCL's double binary tree across them, one channel per
  NIC and tree), ``multicast`` (in-switch reduction: the switches merge the flows,
  ``FlowSpec.reduce``), ``pairs`` (all-to-all), ``partner`` (halving-doubling, PAT),
  ``p2p`` and ``dimension_rings`` (torus); each flow carries the phase's ``flow_bytes``
  times the message, and takes ``1/η`` of each link (η per link tier: the protocol's
  efficiency, or the in-network one), so only congestion separates the simulator from
  the α-β model.

Scopes: ``group`` (each group), ``parts`` (each group's members in one domain),
``rails`` (member ``i`` of every part). ``repeat`` fuses that many back-to-back identical
collectives (bytes and latencies times ``repeat``); ``mode="step"`` splits ring phases
into their steps; ``coupled=False`` gives every flow its own class.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from supernode.collectives import Fabric, Tables, choose, get_algorithm
from supernode.collectives.efficiency import load_efficiency_tables
from supernode.collectives.groups import view_from_members
from supernode.collectives.levels import Level
from supernode.collectives.schedule import (
    NotApplicable,
    Phase,
    Schedule,
    load_efficiency,
    phase_time_s,
)
from supernode.errors import InputError
from supernode.netsim.channels import block_bounds
from supernode.netsim.network import Network
from supernode.netsim.patterns import PATTERNS
from supernode.netsim.tasks import FlowSpec
from supernode.topology.graph import FABRIC_TIERS, LINK_TIERS, SCALE_UP_TIERS

MODES = ("pipelined", "step")
ALIASES = {"in_switch": "nvls", "sharp": "collnet"}


@dataclass(frozen=True)
class PhaseFlows:
    """One realised phase: a delay (seconds), then flows."""

    delay_s: float
    flows: tuple[FlowSpec, ...]


Phases = list[PhaseFlows]


@dataclass(frozen=True)
class Ctx:
    """How to build the flows: fusion, step or pipelined, coupling, the network, label, and
    the cluster's collective fabric with the efficiency tables to cost it."""

    repeat: float = 1.0
    mode: str = "pipelined"
    coupled: bool = True
    net: Network | None = None
    label: str = ""
    fabric: Fabric | None = None
    tables: Tables | None = None


def _schedule(op: str, algorithm: str | None, view: Fabric, n: int, message_bytes: float,
              tables: Tables) -> Schedule:
    """The schedule that runs: the named algorithm under its fastest protocol, or the
    fastest algorithm and protocol (InputError when the named one cannot run)."""
    from supernode.collectives.model import options

    name = None if algorithm is None else get_algorithm(ALIASES.get(algorithm, algorithm)).name
    choice = choose(op, message_bytes, n, view, name, tables=tables)
    runnable, _ = options(op, view, n, tables, (str(choice.algorithm),))
    for option in runnable:
        if option.protocol == str(choice.protocol):
            return option.schedule
    raise InputError("algorithm", f"{choice.algorithm!r} has no schedule here")


def collective_phases(op: str, algorithm: str | None, groups: np.ndarray,
                      message_bytes: float, ctx: Ctx = Ctx()) -> Phases:
    """Phases of flows of ``op`` by ``algorithm`` over ``groups`` (``G x n`` indices)."""
    if ctx.mode not in MODES:
        raise InputError("mode", f"unknown mode {ctx.mode!r}; known: {', '.join(MODES)}")
    if ctx.net is None or ctx.fabric is None:
        raise InputError("algorithm", "collectives need the network and its fabric")
    if algorithm is not None:
        found = get_algorithm(ALIASES.get(algorithm, algorithm))
        if op not in found.ops:
            raise InputError("algorithm", f"{found.name!r} does not perform {op}; it serves "
                             f"{', '.join(sorted(found.ops))}")
    groups = np.atleast_2d(np.asarray(groups, dtype=np.int64))
    if groups.shape[1] < 2 or message_bytes <= 0:
        return []
    tables = ctx.tables or load_efficiency_tables()
    n = groups.shape[1]
    view = view_from_members(ctx.fabric, groups)
    try:
        schedule = _schedule(op, algorithm, view, n, float(message_bytes), tables)
    except NotApplicable as exc:
        raise InputError("algorithm", str(exc)) from None
    s = float(message_bytes)
    out: Phases = []
    base = tables.base_latency(schedule.family, schedule.protocol) * ctx.repeat
    for k, phase in enumerate(schedule.phases):
        cost = phase_time_s(phase, schedule.levels, schedule.protocol, np.array([s]), tables,
                            collisions=False)
        delay = float(cost.latency_s[0] + cost.fill_s[0]) * ctx.repeat + (base if k == 0 else 0)
        specs = realise(phase, schedule, groups, s, ctx, tables)
        steps = _split_steps(phase, ctx)
        if steps > 1:
            out += [PhaseFlows(delay / steps, tuple(_scaled(f, 1.0 / steps) for f in specs))
                    ] * steps
        else:
            out.append(PhaseFlows(delay, tuple(specs)))
    return out


def _split_steps(phase: Phase, ctx: Ctx) -> int:
    """Step mode splits a ring phase into its steps (whole numbers of them)."""
    if ctx.mode != "step" or phase.pattern != "ring":
        return 1
    return max(1, int(round(sum(s for _, s in phase.steps) * ctx.repeat)))


def _scaled(spec: FlowSpec, factor: float) -> FlowSpec:
    return FlowSpec(spec.src, spec.dst, spec.bytes * factor, spec.hops, spec.coupled,
                    spec.label, spec.reduce, spec.efficiency)


def link_efficiency(phase: Phase, schedule: Schedule, tables: Tables) -> tuple[float, ...]:
    """η per link tier for the phase's flows: the innermost level's on scale-up links, the
    first outer level's on NIC, leaf, spine and core links (PCIe to the NIC included)."""
    levels = schedule.levels
    eff = [1.0] * len(LINK_TIERS)

    def of(level: Level) -> float:
        from supernode.collectives.schedule import Load

        probe = Load(level.index, 1.0, 1.0)
        return max(load_efficiency(probe, levels, schedule.protocol, phase, tables), 1e-9)

    inner = of(levels[0])
    for tier in SCALE_UP_TIERS:
        eff[LINK_TIERS.index(tier)] = inner
    outer = [lv for lv in levels if lv.index > 0 and lv.used]
    out_eff = of(outer[0]) if outer else inner
    for tier in ("host", *FABRIC_TIERS):
        eff[LINK_TIERS.index(tier)] = out_eff
    return tuple(eff)


def _rows(groups: np.ndarray, net: Network, scope: str) -> list[np.ndarray]:
    """Rows of accelerators a phase's pattern runs over, grouped by equal block layout."""
    if scope == "group":
        return [groups]
    dom = net.acc_domain[groups[0]]
    bounds = block_bounds(dom)
    sizes = np.diff(bounds)
    if scope == "parts":
        out = []
        for b in range(sizes.size):
            out.append(groups[:, bounds[b]:bounds[b + 1]])
        return out
    width = int(sizes.min())
    rails = [np.stack([groups[:, bounds[b] + i] for b in range(sizes.size)], axis=1)
             for i in range(width)]
    return [np.concatenate(rails, axis=0)]


def realise(phase: Phase, schedule: Schedule, groups: np.ndarray, s: float, ctx: Ctx,
            tables: Tables) -> list[FlowSpec]:
    """The flows of one phase (see the module docstring)."""
    net = ctx.net
    assert net is not None
    eff = link_efficiency(phase, schedule, tables)
    nbytes = phase.flow_bytes * s * ctx.repeat
    out = []
    for rows in _rows(groups, net, phase.scope):
        if rows.shape[1] < 2:
            continue
        src, dst, reduce, per_flow = PATTERNS[phase.pattern](rows, net, phase, schedule)
        for a, b, scale in zip(src, dst, per_flow, strict=True):
            # flows the switches merge move as one (coupled) class whatever ctx.coupled says
            out.append(FlowSpec(np.asarray(a, dtype=np.int64).ravel(),
                                np.asarray(b, dtype=np.int64).ravel(), nbytes * scale, 0.0,
                                ctx.coupled or reduce, ctx.label, reduce, eff))
    return out

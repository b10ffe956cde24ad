"""Flat algorithms as schedules: ring, chain (broadcast/reduce), direct all-to-all, p2p,
recursive halving-doubling, PAT.

Every builder takes ``(op, levels, protocol)`` (levels of :mod:`.levels`, innermost first,
the last one holding the whole group) and returns a :class:`~.schedule.Schedule`, or
raises :class:`NotApplicable` saying why it cannot run there. Sizes are per byte of
message (nccl-tests semantics, :mod:`.busbw`).

Rings follow NCCL's topology-aware rings: a group spread over several parts runs one
channel per NIC of its smallest part (``C = smallest``), each channel entering and
leaving every part once, through a different rank and NIC, so the traffic leaving a part
is spread over its NICs; inside one part a full mesh runs ``g - 1`` rotations (RCCL's
rings over xGMI, one link each) and several parts run Walecki's Hamiltonian paths (each
link once); a torus runs one ring each way (2 ports). Latency counts each hop at its own
tier (NCCL ``nInterSteps``).
"""

from __future__ import annotations

import math

from supernode.collectives.busbw import busbw_factor
from supernode.collectives.levels import Level, outer, used_levels
from supernode.collectives.schedule import Load, NotApplicable, Phase, Schedule, require_op

RING_OPS = frozenset({"all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce"})
HALVING_DOUBLING_OPS = frozenset({"all_reduce", "all_gather", "reduce_scatter"})
PAT_OPS = frozenset({"all_gather", "reduce_scatter"})
#: NCCL's PAT bandwidth factor (``busBw *= .75``) and its linear latency term
#: (``nRanks * 2.8`` µs), src/graph/tuning.cc.
PAT_EFFICIENCY = 0.75
PAT_RANK_LATENCY_S = 2.8e-6


def ranks_of(levels: list[Level]) -> int:
    """Ranks of the collective (the outermost level's members)."""
    return levels[-1].ranks


def ring_channels(levels: list[Level]) -> int:
    """NCCL-style ring channel count (see the module docstring); a rail's ring is one
    channel (the rail already is one of its group's channels)."""
    if levels[0].rail:
        return 1
    out = outer(levels)
    if out:
        return out[0].smallest
    inner = levels[0]
    if inner.tier.kind == "full_mesh":
        return max(1, inner.members - 1)
    return 2 if inner.tier.kind == "torus" else 1


def _inner_ring_load(levels: list[Level], wire: float, channels: int) -> Load | None:
    """Load of a ring's hops inside tier-0 parts (per unit message)."""
    from supernode.collectives.torus import torus_ring_load

    inner = levels[0]
    if inner.members <= 1:
        return None
    if inner.rail:  # a rail's ports are NICs: every hop leaves through one
        return Load(0, wire, 1.0, "nic")
    crossing = bool(outer(levels))
    if inner.tier.kind == "full_mesh":
        return Load(0, wire / channels, 1.0 / max(1, inner.tier.group_size - 1), "link")
    if inner.tier.kind == "torus":
        return torus_ring_load(inner, wire)
    aligned = crossing and outer(levels)[0].smallest == inner.members
    return Load(0, wire * (1.0 - 1.0 / channels) if aligned else wire, 1.0, "port")


def ring_loads(levels: list[Level], wire: float) -> tuple[tuple[Load, ...], int]:
    """Loads of a ring moving ``wire`` bytes per rank (per unit message) and its channels."""
    channels = ring_channels(levels)
    loads = []
    inner = _inner_ring_load(levels, wire, channels)
    if inner is not None:
        loads.append(inner)
    loads += [Load(lv.index, wire / lv.smallest, 1.0, "nic" if lv.index == 1 else "uplink")
              for lv in outer(levels)]
    return tuple(loads), channels


def chain_steps(levels: list[Level], passes: float) -> tuple[tuple[int, float], ...]:
    """Latency steps of ``passes`` pipelined passes over every hop of a chain."""
    return tuple((lv.index, passes * lv.chain_hops) for lv in levels if lv.chain_hops > 0)


def ring(op: str, levels: list[Level], protocol: str) -> Schedule:
    """Ring: all-reduce ``2(n-1)`` steps moving ``2(n-1)/n · S`` per rank, all-gather and
    reduce-scatter ``n-1`` steps and ``(n-1)/n · S``, broadcast/reduce a pipelined chain
    (``n-1`` hops, ``S`` per hop); Thakur et al. 2005, NCCL rings."""
    require_op("ring", op, RING_OPS)
    n = ranks_of(levels)
    chain = op in ("broadcast", "reduce")
    wire = 1.0 if chain else float(busbw_factor(op, n))
    loads, channels = ring_loads(levels, wire)
    passes = 2.0 if op == "all_reduce" else 1.0
    phase = Phase("chain" if chain else "ring", "group", loads, chain_steps(levels, passes),
                  wire / channels, params=(("channels", channels), ("passes", passes),
                                           ("reverse", op == "reduce")))
    return Schedule("ring", op, protocol, "ring", (phase,), tuple(levels))


def direct(op: str, levels: list[Level], protocol: str) -> Schedule:
    """Direct all-to-all (pairwise exchange; NCCL grouped p2p): every rank sends ``S/n`` to
    every peer at once; per level the bytes to peers beyond the rank's own part cross
    that level's ports (a torus routes them over its shortest paths). One step latency
    at the outermost tier: NCCL posts every send and receive of the group together."""
    from supernode.collectives.torus import torus_all_to_all_loads

    require_op("direct", op, frozenset({"all_to_all"}))
    n = ranks_of(levels)
    loads: list[Load] = []
    inner = levels[0]
    if inner.rail:  # the NIC carries every peer's share
        loads.append(Load(0, (n - 1) / n, 1.0, "nic"))
    elif inner.members > 1:
        if inner.tier.kind == "torus":
            loads += torus_all_to_all_loads(inner, n)
        elif inner.tier.kind == "full_mesh":
            loads.append(Load(0, 1.0 / n, 1.0 / max(1, inner.tier.group_size - 1), "link"))
        else:
            loads.append(Load(0, (inner.members - 1) / n, 1.0, "port"))
    loads += [Load(lv.index, (n - lv.smallest) / n, 1.0, "nic" if lv.index == 1 else "uplink")
              for lv in outer(levels)]
    top = used_levels(levels)[-1].index if used_levels(levels) else 0
    phase = Phase("pairs", "group", tuple(loads), ((top, 1.0),), 1.0 / n)
    return Schedule("direct", op, protocol, "p2p", (phase,), tuple(levels))


def p2p(op: str, levels: list[Level], protocol: str) -> Schedule:
    """Point-to-point send of ``S`` between the group's first and last ranks (``ranks`` is
    the span of the pair): one step at the tier they cross, ``S`` through each port."""
    require_op("p2p", op, frozenset({"p2p"}))
    crossed = used_levels(levels)
    top = crossed[-1].index if crossed else 0
    loads = [Load(0, 1.0, 1.0, "port")] if not outer(levels) and levels[0].members > 1 else []
    loads += [Load(lv.index, 1.0, 1.0, "nic" if lv.index == 1 else "uplink")
              for lv in outer(levels)]
    if levels[0].tier.kind == "full_mesh" and not outer(levels):
        loads = [Load(0, 1.0, 1.0 / max(1, levels[0].tier.group_size - 1), "link")]
    phase = Phase("p2p", "group", tuple(loads), ((top, 1.0),), 1.0)
    return Schedule("p2p", op, protocol, "p2p", (phase,), tuple(levels))


def _partner_level(levels: list[Level], distance: int) -> int:
    """Index of the outermost level some rank crosses to reach its partner ``distance``
    away (``i xor distance`` among the first power-of-two ranks, or ``i + distance`` for a
    fold), ranks laid out consecutively in parts of each level's members."""
    import numpy as np

    n = ranks_of(levels)
    p = 2 ** int(math.floor(math.log2(max(n, 1))))
    if distance >= p:
        a = np.arange(n - p)
        b = a + p
    else:
        a = np.arange(p)
        b = a ^ distance
    top = 0
    for lv in levels[1:]:
        size = levels[lv.index - 1].members
        if np.any(a // size != b // size):
            top = lv.index
    return top


def _exchange(levels: list[Level], distance: int, size: float) -> Phase:
    """One exchange of ``size`` (per unit message) with the partner ``distance`` away."""
    top = _partner_level(levels, distance)
    if top == 0:
        inner = levels[0]
        share = 1.0 / max(1, inner.tier.group_size - 1) if inner.tier.kind == "full_mesh" else 1.0
        loads: tuple[Load, ...] = (Load(0, size, share, "port"),)
    else:
        loads = tuple(Load(j, size, 1.0, "nic" if j == 1 else "uplink")
                      for j in range(1, top + 1) if levels[j].used)
    return Phase("partner", "group", loads, ((top, 1.0),), size,
                 params=(("distance", distance),))


def halving_doubling(op: str, levels: list[Level], protocol: str) -> Schedule:
    """Recursive halving / doubling (Thakur, Rabenseifner & Gropp 2005): reduce-scatter by
    halving, all-gather by doubling, all-reduce both; step ``k`` exchanges ``S/2^(k+1)``
    with the partner ``2^k`` away (nearest first). A rank count that is not a power of
    two first folds the extra ranks' ``S`` onto partners and unfolds it last."""
    require_op("halving_doubling", op, HALVING_DOUBLING_OPS)
    n = ranks_of(levels)
    k_max = int(math.floor(math.log2(max(n, 1))))
    p = 2 ** k_max
    halving = [_exchange(levels, 2 ** k, 1.0 / 2 ** (k + 1)) for k in range(k_max)]
    fold = [_exchange(levels, p, 1.0)] if n > p else []
    phases = {"all_reduce": fold + halving + halving[::-1] + fold,
              "reduce_scatter": fold + halving, "all_gather": halving[::-1] + fold}[op]
    return Schedule("halving_doubling", op, protocol, "ring", tuple(phases), tuple(levels))


def pat(op: str, levels: list[Level], protocol: str) -> Schedule:
    """PAT (NCCL 2.23+ all-gather / reduce-scatter with one rank per node): ``log2 n``
    steps exchanging doubling (halving) shares ``2^k·S/n`` with the rank ``2^k`` away,
    ``(n-1)/n · S`` per rank in all, at NCCL's bandwidth factor 0.75 and latency
    ``log2(n)·α/3.5 + n · 2.8 µs`` (src/graph/tuning.cc)."""
    require_op("pat", op, PAT_OPS)
    if levels[0].members > 1 or not outer(levels):
        raise NotApplicable("PAT runs only with one rank per scale-up domain (NCCL: nNodes "
                            "== nRanks)")
    n = ranks_of(levels)
    k_max = int(math.ceil(math.log2(n)))
    phases = []
    for k in range(k_max):
        share = min(2 ** k, n - 2 ** k) / n
        phase = _exchange(levels, 2 ** k, share)
        phases.append(Phase(phase.pattern, phase.scope, phase.loads,
                            tuple((j, s / 3.5) for j, s in phase.steps), share,
                            params=phase.params + (("efficiency", PAT_EFFICIENCY),
                                                   ("kind", "shift"))))
    if op == "reduce_scatter":
        phases = phases[::-1]
    first = phases[0]
    phases[0] = Phase(first.pattern, first.scope, first.loads, first.steps, first.flow_bytes,
                      params=first.params + (("extra_latency_s", n * PAT_RANK_LATENCY_S),))
    return Schedule("pat", op, protocol, "pat", tuple(phases), tuple(levels))

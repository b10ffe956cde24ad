"""Two-level algorithms: inside each part, then across parts along the rails.

A *part* is one tier-0 group of the collective (a domain's members); a *rail* is the
``i``-th member of every part, which reaches the others through its own NIC. Phases of a
part scope run on every part at once, phases of a rail scope on every rail at once; their
levels are :func:`part_levels` and :func:`rail_levels`, and their loads are remapped onto
the whole group's levels (a rail's level ``i`` is the group's level ``i + 1``).

* ``hierarchical`` all-reduce (Thakur et al. 2005 §6; Horovod's hierarchical mode):
  ring reduce-scatter of ``S`` inside the parts, the faster of ring and halving-doubling
  all-reduce of ``S/g`` along the rails, ring all-gather inside.
* ``hierarchical_a2a``: an all-to-all inside the parts (regrouping by destination rail),
  then one across parts along each rail: fewer, larger messages.
"""

from __future__ import annotations

import dataclasses
from types import MappingProxyType

from supernode.collectives.algorithms import direct, halving_doubling, ring
from supernode.collectives.efficiency import Tables
from supernode.collectives.levels import Level, outer
from supernode.collectives.schedule import Load, NotApplicable, Phase, Schedule, require_op


def part_levels(levels: list[Level]) -> list[Level]:
    """Levels of one part alone (tier 0 with the part's members)."""
    inner = levels[0]
    return [dataclasses.replace(inner, ranks=inner.members, groups=1)]


def rail_levels(levels: list[Level]) -> list[Level]:
    """Levels of one rail: the parts' ``i``-th members, one per part (needs outer levels).

    The rail's tier 0 is the group's first outer tier (kind ``nic``: its NICs);
    members and parts are counted in parts of the group.
    """
    crossed = [lv for lv in levels if lv.index > 0]
    if not outer(levels):
        raise NotApplicable("the group sits in one part: there is no rail across parts")
    g = max(1, levels[0].members)
    ranks = max(2, -(-levels[0].ranks // g))
    out = []
    for k, lv in enumerate(crossed):
        members = max(1, -(-lv.members // g))
        if k == 0:
            parts, smallest = members, 1
        else:
            parts, smallest = lv.parts, max(1, lv.smallest // g)
        tier = dataclasses.replace(lv.tier, kind="nic") if k == 0 else lv.tier
        out.append(dataclasses.replace(lv, index=k, tier=tier, members=members, parts=parts,
                                       smallest=smallest, groups=-(-ranks // members),
                                       ranks=ranks))
    return out


def scoped(phase: Phase, scope: str, shift: int, scale: float) -> Phase:
    """``phase`` of a sub-schedule moved to ``scope``: levels shifted by ``shift``, sizes
    multiplied by ``scale`` (the sub-collective's message per byte of the group's)."""
    loads = tuple(Load(ld.level + shift, ld.bytes * scale, ld.share, ld.port)
                  for ld in phase.loads)
    steps = tuple((j + shift, s) for j, s in phase.steps)
    return dataclasses.replace(phase, scope=scope, loads=loads, steps=steps,
                               flow_bytes=phase.flow_bytes * scale)


def _inner(op: str, levels: list[Level], protocol: str) -> Phase:
    return scoped(ring(op, part_levels(levels), protocol).phases[0], "parts", 0, 1.0)


def _fastest_across(levels: list[Level], protocol: str) -> Schedule:
    """The faster flat all-reduce along a rail (ring or halving-doubling), judged at a
    reference size of 1 GiB."""
    from supernode.collectives.schedule import schedule_time_s

    rails = rail_levels(levels)
    own = Tables(MappingProxyType({lv.tier.efficiency: lv.table for lv in rails}))
    best, best_t = None, None
    for build in (ring, halving_doubling):
        try:
            schedule = build("all_reduce", rails, protocol)
        except NotApplicable:
            continue
        t = float(schedule_time_s(schedule, own, 2.0**30))
        if best_t is None or t < best_t:
            best, best_t = schedule, t
    assert best is not None
    return best


def _require_equal_parts(name: str, levels: list[Level]) -> None:
    """Both phases assume parts of one size (every rail has a member in every part)."""
    crossed = outer(levels)
    if not crossed or levels[0].members < 2:
        raise NotApplicable(f"{name} needs several parts of 2 or more ranks")
    if crossed[0].smallest != levels[0].members:
        raise NotApplicable(f"{name} needs parts of equal size; this group splits "
                            f"{levels[0].members} + ... + {crossed[0].smallest}")


def hierarchical(op: str, levels: list[Level], protocol: str) -> Schedule:
    """Hierarchical all-reduce (see the module docstring)."""
    require_op("hierarchical", op, frozenset({"all_reduce"}))
    _require_equal_parts("hierarchical", levels)
    g = levels[0].members
    across = _fastest_across(levels, protocol)
    phases = (_inner("reduce_scatter", levels, protocol),
              *(scoped(p, "rails", 1, 1.0 / g) for p in across.phases),
              _inner("all_gather", levels, protocol))
    return Schedule("hierarchical", op, protocol, "ring", phases, tuple(levels))


def hierarchical_a2a(op: str, levels: list[Level], protocol: str) -> Schedule:
    """Two-phase all-to-all (see the module docstring)."""
    require_op("hierarchical_a2a", op, frozenset({"all_to_all"}))
    _require_equal_parts("hierarchical_a2a", levels)
    inside = scoped(direct(op, part_levels(levels), protocol).phases[0], "parts", 0, 1.0)
    across = scoped(direct(op, rail_levels(levels), protocol).phases[0], "rails", 1, 1.0)
    return Schedule("hierarchical_a2a", op, protocol, "p2p", (inside, across), tuple(levels))

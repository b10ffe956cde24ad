"""The tiers one collective of ``n`` ranks uses, as :class:`Level` s.

For tier ``j`` of a fabric (or of a group view, :mod:`.groups`) and a collective of ``n``
ranks:

* ``members``: ranks inside one tier-``j`` group (``min(n, G_j)``);
* ``parts``: tier-``(j-1)`` parts inside it (for tier 0: the members themselves);
* ``smallest``: ranks in the smallest part, i.e. the fewest ports (NICs) behind one
  crossing of tier ``j`` (for tier 0: 1). Equal to ``members_{j-1}`` when the group is
  aligned; smaller when it straddles a boundary (72-GPU racks under 32-rank groups);
* ``groups``: tier-``j`` groups the collective spans (``ceil(n / members)``);
* ``blocks``: tier-``(j-1)`` parts the whole collective spans;
* ``chain_hops``: hops of a chain through all ``n`` ranks whose slowest link is tier ``j``
  (``blocks - groups``; they sum to ``n - 1``: NCCL's ``nInterSteps``).

A level is *used* when it joins several parts (``parts > 1``). A tier 0 of kind ``nic``
(a scale-out tier innermost: one-GPU hosts, or a rail's view,
:func:`supernode.collectives.hierarchy.rail_levels`) has NICs for ports, which every hop
uses.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from supernode.collectives.efficiency import EfficiencyTable, Tables, get_table
from supernode.collectives.fabric import Fabric, FabricTier


@dataclass(frozen=True)
class Level:
    """One tier as used by a collective of ``n`` ranks (see the module docstring)."""

    index: int
    tier: FabricTier
    table: EfficiencyTable
    members: int
    parts: int
    smallest: int
    groups: int
    ranks: int
    blocks: int = 0

    @property
    def rail(self) -> bool:
        """Tier 0 whose ports are NICs (every hop leaves through one)."""
        return self.index == 0 and self.tier.kind == "nic"

    @property
    def used(self) -> bool:
        """The level joins several parts (its links carry traffic)."""
        return self.parts > 1

    @property
    def chain_hops(self) -> int:
        """Hops of a chain through the collective's ranks at this level's speed."""
        if self.index == 0:
            return self.ranks - self.groups
        return max(self.blocks, self.parts) - self.groups


@lru_cache(maxsize=8192)
def _shape(fabric: Fabric, n: int) -> tuple[tuple[int, ...], ...]:
    """(members, parts, smallest, groups, ranks, blocks) per tier for ``n`` ranks."""
    out = []
    previous = 1
    for j, tier in enumerate(fabric.tiers):
        members = min(n, tier.group_size)
        groups = -(-n // members)
        if j == 0:
            parts, smallest, blocks = members, 1, n
        elif tier.parts:
            parts, smallest = min(tier.parts, -(-members // max(previous, 1))), tier.smallest
            blocks = parts * groups
        else:
            parts = -(-members // previous)
            rest = members % previous
            smallest = rest if (rest and parts > 1) else previous
            blocks = -(-n // previous)
        out.append((members, parts, smallest, groups, n, blocks))
        previous = members
        if tier.group_size >= n:
            break
    return tuple(out)


def group_levels(fabric: Fabric, n: int, tables: Tables) -> list[Level]:
    """The :class:`Level` of every tier of ``fabric`` that ``n`` ranks reach (innermost
    first, up to the innermost tier holding them all)."""
    n = int(n)
    return [Level(j, fabric.tiers[j], get_table(tables, fabric.tiers[j].efficiency), *row)
            for j, row in enumerate(_shape(fabric, n))]


def used_levels(levels: list[Level]) -> list[Level]:
    """The levels that carry traffic."""
    return [lv for lv in levels if lv.used]


def outer(levels: list[Level]) -> list[Level]:
    """Used levels above tier 0 (those crossed through NICs)."""
    return [lv for lv in used_levels(levels) if lv.index > 0]

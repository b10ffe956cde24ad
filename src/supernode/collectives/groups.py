"""Which tiers a group of ranks crosses, decided by alignment: the slowest group binds.

A parallel dimension's groups are ``n`` ranks at a stride (or nested strided *factors*
``((stride, size), ...)``, mixed radix), repeated over the job. Where the group size
does not divide a tier's group size (32-rank groups on 72-GPU racks), some groups straddle
a boundary: they cross the next tier, with their ranks split unevenly (8 + 24). Every
group of a dimension runs the same collective at once, so the slowest binds the step.

:func:`group_view` enumerates the distinct groups (one period of the rank pattern) and
returns, per tier the worst group crosses, a tier of the view whose ``group_size`` is its
members inside one tier group, ``parts``/``smallest`` the tier-``(j-1)`` parts inside and
the members of the smallest (the fewest NICs behind a crossing), and on a torus the box
it occupies. :func:`members_view` does the same for explicit member lists (the
simulator's groups of accelerators).
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from supernode.collectives.fabric import Fabric, FabricTier, with_group_size

Factors = tuple[tuple[int, int], ...]
#: Most ranks enumerated to find the worst group (beyond, groups are sampled evenly).
ENUMERATION_LIMIT = 1 << 20


def _offsets(factors: Factors) -> np.ndarray:
    """Rank offsets of one group's members from its first rank (mixed radix)."""
    out = np.zeros(1, dtype=np.int64)
    for stride, size in factors:
        out = (out[:, None] + stride * np.arange(size, dtype=np.int64)[None, :]).ravel()
    return np.sort(out)


def _bases(factors: Factors, period: int) -> np.ndarray:
    """First ranks of the groups within ``[0, period)``: every digit of a factor is 0."""
    r = np.arange(period, dtype=np.int64)
    keep = np.ones(period, dtype=bool)
    for stride, size in factors:
        keep &= (r // stride) % size == 0
    return r[keep]


def _period(fabric: Fabric, factors: Factors) -> int:
    """Ranks after which the group pattern repeats against every tier boundary."""
    span = max((s * n for s, n in factors), default=1)
    period = span
    for tier in fabric.tiers[:-1]:
        period = math.lcm(period, tier.group_size)
        if period > fabric.capacity:
            return fabric.capacity
    return min(period, fabric.capacity)


def _tier_stats(members: np.ndarray, inner: int, outer_size: int
                ) -> tuple[int, int, int, int]:
    """For groups (rows of ``members``) against tier blocks of ``outer_size`` made of parts
    of ``inner``: the worst row's (members in a block, parts in it, smallest part,
    largest part).

    Worst: the smallest part, then the most parts, then the most members.
    """
    rows = np.repeat(np.arange(members.shape[0], dtype=np.int64), members.shape[1])
    flat = members.ravel()
    block, part = flat // outer_size, flat // inner
    blocks, parts_ = int(block.max()) + 1, int(part.max()) + 1
    if members.shape[0] * blocks * parts_ < 2**62:
        # (row, block, part) as one int64 in lexicographic order: a 1-D sort, ~50x faster
        # than np.unique(axis=0) on the triples (which sorts them as void records)
        key = (rows * blocks + block) * parts_ + part
        unique, counts = np.unique(key, return_counts=True)
        row_block = unique // parts_
        first = np.flatnonzero(np.r_[True, row_block[1:] != row_block[:-1]])
        total = unique.shape[0]
    else:
        triples, counts = np.unique(np.stack([rows, block, part], axis=1), axis=0,
                                    return_counts=True)
        _, first = np.unique(triples[:, :2], axis=0, return_index=True)
        first = np.sort(first)
        total = triples.shape[0]
    bounds = np.append(first, total)
    smallest = np.minimum.reduceat(counts, first)
    largest = np.maximum.reduceat(counts, first)
    parts = np.diff(bounds)
    size = np.add.reduceat(counts, first)
    worst = np.lexsort((-size, -parts, smallest))[0]
    return int(size[worst]), int(parts[worst]), int(smallest[worst]), int(largest[worst])


def _torus_shape(tier: FabricTier, members: np.ndarray) -> tuple[tuple[int, bool], ...]:
    """(extent, wrap) per dimension of the box the members of one domain span."""
    local = members % tier.group_size
    coords = []
    for d in tier.dims:
        local, c = np.divmod(local, d)
        coords.append(c)
    out = []
    for d, c in zip(tier.dims, coords, strict=True):
        extent = int(np.unique(c).size)
        out.append((extent, extent == d and tier.wraparound and d > 2))
    return tuple(out)


def view_from_members(fabric: Fabric, members: np.ndarray) -> Fabric:
    """The view of groups given as rows of rank (accelerator) indices; the worst row binds.

    Tier ``j`` blocks are ``G_j`` consecutive ranks. Tiers the groups do not cross are
    left out; the last tier of the view holds the whole group.
    """
    members = np.atleast_2d(np.asarray(members, dtype=np.int64))
    n = members.shape[1]
    tiers: list[FabricTier] = []
    previous = 1
    for j, tier in enumerate(fabric.tiers):
        inside = bool(np.all(members // tier.group_size == members[:, :1] // tier.group_size))
        last = j == len(fabric.tiers) - 1
        if j == 0:
            blocks = members // tier.group_size  # the most members of a row in one block
            key = np.arange(members.shape[0])[:, None] * (int(blocks.max()) + 1) + blocks
            size = int(np.unique(key, return_counts=True)[1].max())
            shape = _torus_shape(tier, members[0]) if tier.kind == "torus" else ()
            tiers.append(with_group_size(tier, size, shape=shape))
            previous = size
        else:
            size, parts, smallest, largest = _tier_stats(
                members, fabric.tiers[j - 1].group_size,
                fabric.capacity if last else tier.group_size)
            if parts > 1:
                aligned = smallest == previous and size == parts * previous
                if not aligned and len(tiers) == 1:  # the binding group's own largest part
                    tiers[0] = with_group_size(tiers[0], largest, shape=tiers[0].shape)
                    previous = largest
                tiers.append(with_group_size(tier, size, parts=0 if aligned else parts,
                                             smallest=0 if aligned else smallest))
                previous = size
        if inside:  # every group sits in one block of this tier: no tier above is crossed
            break
    if tiers[-1].group_size < n:  # the group needs the outermost tier at its full size
        top = fabric.tiers[-1]
        tiers.append(with_group_size(top, n, parts=2, smallest=1))
    return Fabric(tuple(_drop_unused(tiers)))


def _drop_unused(tiers: list[FabricTier]) -> list[FabricTier]:
    """Keep tier 0 and every tier whose group grows."""
    out = [tiers[0]]
    for t in tiers[1:]:
        if t.group_size > out[-1].group_size:
            out.append(t)
    return out


def _aligned_view(fabric: Fabric, stride: int, size: int) -> Fabric | None:
    """The view of one strided factor when it splits evenly at every tier; else None.

    Tier ``j`` blocks of ``G`` ranks hold ``G/stride`` members of a group (or one when the
    stride is at least ``G``: members that far apart never share a block); the split is
    even then, or when the stride divides ``G`` and the group fits a block an exact number
    of times either way. (A pipeline hop of a one-stage pipeline, stride the whole job,
    is viewed here too: its second member lies beyond the fabric and it carries nothing.)
    """
    tiers: list[FabricTier] = []
    for tier in fabric.tiers[:-1]:
        g = tier.group_size
        if stride >= g:
            per = 1
        elif g % stride == 0:
            per = g // stride
            if (per >= size and g % (stride * size)) or (per < size and size % per):
                return None
        else:
            return None
        members = min(size, per)
        if not tiers or members > tiers[-1].group_size:
            shape: tuple[tuple[int, bool], ...] = ()
            if tier.kind == "torus":
                offsets = stride * np.arange(members, dtype=np.int64)
                shape = _torus_shape(tier, offsets)
            tiers.append(with_group_size(tier, members, shape=shape))
        if members >= size:
            return Fabric(tuple(tiers))
    if not tiers or size > tiers[-1].group_size:
        top = fabric.tiers[-1]
        shape = (_torus_shape(top, stride * np.arange(size, dtype=np.int64))
                 if top.kind == "torus" else ())
        tiers.append(with_group_size(top, size, shape=shape))
    return Fabric(tuple(tiers))


@lru_cache(maxsize=4096)
def group_view(fabric: Fabric, factors: Factors) -> Fabric:
    """The fabric seen by the groups of nested strided ``factors`` (see module doc)."""
    factors = tuple((int(s), int(n)) for s, n in factors if int(n) > 1)
    size = math.prod(n for _, n in factors) if factors else 1
    if size <= 1:
        return Fabric((with_group_size(fabric.tiers[0], 1),))
    if len(factors) == 1 and size <= fabric.capacity:
        fast = _aligned_view(fabric, *factors[0])
        if fast is not None:
            return fast
    offsets = _offsets(factors)
    if offsets[-1] >= fabric.capacity:
        from supernode.errors import InputError

        raise InputError("ranks", f"a group spanning {int(offsets[-1]) + 1} ranks exceeds the "
                         f"fabric's {fabric.capacity}")
    period = _period(fabric, factors)
    bases = _bases(factors, period)
    bases = bases[bases + offsets[-1] < fabric.capacity]
    if bases.size * size > ENUMERATION_LIMIT:
        bases = bases[:: math.ceil(bases.size * size / ENUMERATION_LIMIT)]
    return view_from_members(fabric, bases[:, None] + offsets[None, :])


def consecutive_view(fabric: Fabric, ranks: int) -> Fabric:
    """The view of ``ranks`` consecutive ranks from rank 0 (the collective command)."""
    return group_view(fabric, ((1, int(ranks)),))

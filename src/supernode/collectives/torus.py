"""Collectives on a torus or mesh scale-up domain (TPU ICI, Trainium NeuronLink).

A group occupies a box of the torus: an extent per dimension, each with wrap-around when
it covers a whole wrapped dimension of more than 2 (:func:`torus_shape`). What a
dimension really offers is its ports: a ring along a wrapped dimension runs one way on
each of its 2 ports (``W/2`` per port); a line (a mesh dimension, or part of one) must
come back on the same links, so each port carries the whole ``W``.

``dimension_ordered`` (TPU-style multi-dimensional all-reduce; Kumar & Jouppi et al.,
the bucket algorithm of Barnett et al. 1994) splits the data into one part per
dimension and runs reduce-scatter along the dimensions in rotated orders, so every
dimension's ports work at once; all-gather retraces the steps. All-to-all uses every
dimension's shortest paths (:func:`torus_all_to_all_loads`).
"""

from __future__ import annotations

from supernode.collectives.levels import Level, outer
from supernode.collectives.schedule import Load, NotApplicable, Phase, Schedule, require_op

TORUS_OPS = frozenset({"all_reduce", "all_gather", "reduce_scatter"})


def torus_shape(level: Level) -> tuple[tuple[int, int, bool, float], ...]:
    """``(dim, extent, wrap, link bytes/s)`` of every dimension the group spans (> 1).

    From the group view's ``shape`` when given, else the first ``members`` ranks in
    index order (the first dimension fastest).
    """
    tier = level.tier
    if tier.shape:
        extents = [e for e, _ in tier.shape]
        wraps = [w for _, w in tier.shape]
    else:
        extents, wraps, left = [], [], level.members
        for d in tier.dims:
            e = max(1, min(d, left))
            extents.append(e)
            wraps.append(e == d and tier.wraparound and d > 2)
            left = -(-left // e)
    return tuple((i, e, bool(w), tier.dim_bandwidth_bytes_per_s[i])
                 for i, (e, w) in enumerate(zip(extents, wraps, strict=False)) if e > 1)


def is_box(level: Level) -> bool:
    """True when the group's ranks fill the box its shape describes."""
    size = 1
    for _, e, _, _ in torus_shape(level):
        size *= e
    return size == level.members


def _port_bytes(wire: float, wrap: bool) -> float:
    """Bytes per port of a ring moving ``wire`` per rank along one dimension."""
    return wire / 2.0 if wrap else wire


def torus_ring_load(level: Level, wire: float) -> Load:
    """Busiest port of a flat ring, one each way, over the group's box in rank order:
    the first dimension carries the hops along it (``W/2`` per port with wrap-around,
    ``W`` on a line, which the ring must come back along); every other dimension only
    carries the hops from one line to the next (``W/2``)."""
    dims = torus_shape(level)
    loads = [Load(0, _port_bytes(wire, wrap) if k == 0 else wire / 2.0,
                  bw / level.tier.bandwidth_bytes_per_s, f"dim{i}")
             for k, (i, _, wrap, bw) in enumerate(dims)]
    return max(loads, key=lambda ld: ld.bytes / ld.share)


def _crossings(extent: int, wrap: bool) -> float:
    """Ordered pairs of a ring (line) of ``extent`` whose shortest path crosses its busiest
    directed link (ties split evenly)."""
    if wrap:
        return sum(min(k, extent - k) for k in range(1, extent)) / 2.0
    return float((extent // 2) * (extent - extent // 2))


def torus_all_to_all_loads(level: Level, n: int) -> list[Load]:
    """Per dimension: bytes on its busiest port per unit message of a direct all-to-all
    (``crossings / extent``: each of the ``n`` ranks sends ``S/n`` to every peer)."""
    return [Load(0, _crossings(e, w) / e, bw / level.tier.bandwidth_bytes_per_s, f"dim{i}")
            for i, e, w, bw in torus_shape(level)]


def dimension_ordered(op: str, levels: list[Level], protocol: str) -> Schedule:
    """Dimension-ordered rings on a torus (see the module docstring)."""
    require_op("dimension_ordered", op, TORUS_OPS)
    inner = levels[0]
    if inner.tier.kind != "torus" or outer(levels) or not is_box(inner):
        raise NotApplicable("dimension-ordered rings need a group filling a box of one "
                            "torus or mesh domain")
    dims = torus_shape(inner)
    parts = len(dims)
    rs = []
    for k in range(parts):
        loads, rings, steps = [], [], 0.0
        for p in range(parts):
            size = 1.0 / parts
            for i in range(k):
                size /= dims[(p + i) % parts][1]
            dim, extent, wrap, bw = dims[(p + k) % parts]
            wire = (extent - 1) / extent * size
            loads.append(Load(0, _port_bytes(wire, wrap), bw / inner.tier.bandwidth_bytes_per_s,
                              f"dim{dim}"))
            rings.append((dim, wire / 2.0))
            steps = max(steps, float(extent - 1))
        rs.append(Phase("dimension_rings", "group", tuple(loads), ((0, steps),),
                        max(b for _, b in rings), params=(("rings", tuple(rings)),)))
    phases = {"reduce_scatter": rs, "all_gather": rs[::-1], "all_reduce": rs + rs[::-1]}[op]
    return Schedule("dimension_ordered", op, protocol, "ring", tuple(phases), tuple(levels))

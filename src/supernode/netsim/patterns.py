"""Flow patterns: which accelerators send to which in one phase of a collective schedule.

Each pattern takes ``rows`` (groups x members, accelerator indices in rank order, one
part or rail each as :func:`supernode.netsim.collectives.realise` splits them), the
network, the phase and its schedule, and returns ``(sources, destinations, reduce,
byte scale per flow set)``: ring and chain hops of :mod:`.channels`, NCCL's double binary
trees with chains inside parts, in-switch multicast, all-to-all pairs, halving-doubling and
PAT partners, point to point, and torus dimension rings.
"""

from __future__ import annotations

import numpy as np

from supernode.collectives.schedule import Phase, Schedule
from supernode.netsim.channels import block_bounds, chain_hops, ring_hops, walecki_paths
from supernode.netsim.network import Network


def _kind(schedule: Schedule, scope: str) -> str:
    """Layout of the parts a pattern's rows visit (rails cross parts: switch-like)."""
    return "switch" if scope == "rails" else schedule.levels[0].tier.kind


def _bounds(rows: np.ndarray, net: Network, phase: Phase) -> np.ndarray:
    """Block layout of the rows: their domains (a rail's members: one block each)."""
    if phase.scope == "rails":
        return np.arange(rows.shape[1] + 1)
    return block_bounds(net.acc_domain[rows[0]])


def _ring(rows, net, phase, schedule):
    bounds = _bounds(rows, net, phase)
    src, dst = ring_hops(rows, bounds, _kind(schedule, phase.scope))
    return [src], [dst], False, [1.0]


def _chain(rows, net, phase, schedule):
    bounds = _bounds(rows, net, phase)
    src, dst = chain_hops(rows, bounds, _kind(schedule, phase.scope),
                          bool(phase.param("reverse", False)))
    return [src], [dst], False, [1.0]


def _tree(rows, net, phase, schedule):
    """Chains inside parts and NCCL's two trees across them, one channel per NIC and tree."""
    from supernode.collectives.trees import double_tree

    kind = _kind(schedule, phase.scope)
    bounds = _bounds(rows, net, phase)
    sizes = np.diff(bounds)
    m, b = sizes.size, int(sizes.min())
    src, dst = [], []
    trees = double_tree(m) if m > 1 else ()
    for c in range(2 * b):
        heads = rows[:, bounds[:-1] + (c % b)]  # R x m
        for parent in (trees[c // b],) if trees else ():
            child = np.flatnonzero(parent >= 0)
            src += [heads[:, child], heads[:, parent[child]]]
            dst += [heads[:, parent[child]], heads[:, child]]
        if phase.param("chain", True):
            for k in range(m):
                g = int(sizes[k])
                if g < 2:
                    continue
                paths = walecki_paths(g) if kind == "full_mesh" else None
                local = paths[c % g] if paths is not None else (np.arange(g) + c % b) % g
                chain = rows[:, bounds[k] + local]
                src += [chain[:, 1:], chain[:, :-1]]
                dst += [chain[:, :-1], chain[:, 1:]]
    return [np.concatenate([x.ravel() for x in src])], [np.concatenate(
        [x.ravel() for x in dst])], False, [1.0]


def _multicast(rows, net, phase, schedule):
    root = np.repeat(rows[:, :1], rows.shape[1] - 1, axis=1)
    rest = rows[:, 1:]
    return ([np.concatenate([rest, root], axis=1)], [np.concatenate([root, rest], axis=1)],
            True, [1.0])


def _pairs(rows, net, phase, schedule):
    n = rows.shape[1]
    i, j = np.nonzero(~np.eye(n, dtype=bool))
    return [rows[:, i]], [rows[:, j]], False, [1.0]


def _partner(rows, net, phase, schedule):
    n = rows.shape[1]
    d = int(phase.number("distance", 1))
    if phase.param("kind") == "shift":  # PAT: rank i sends to i + d
        pos = np.arange(n)
        return [rows[:, pos]], [rows[:, (pos + d) % n]], False, [1.0]
    if d >= n or (n & (n - 1) and d >= 2 ** int(np.floor(np.log2(n)))):
        p = 2 ** int(np.floor(np.log2(n)))  # fold: the extra ranks hand over to partners
        return [rows[:, p:]], [rows[:, : n - p]], False, [1.0]
    p = 2 ** int(np.floor(np.log2(n)))
    pos = np.arange(p)
    return [rows[:, pos]], [rows[:, pos ^ d]], False, [1.0]


def _p2p(rows, net, phase, schedule):
    return [rows[:, 0]], [rows[:, -1]], False, [1.0]


def _dimension_rings(rows, net, phase, schedule):
    """Rings both ways along each dimension of the group's torus box, one size each."""
    dims = np.array(schedule.levels[0].tier.dims, dtype=np.int64)
    size = int(np.prod(dims))
    base, local = (rows // size) * size, rows % size
    coords = np.stack(np.unravel_index(local, tuple(dims), order="F"), axis=-1)
    low = coords.min(axis=1, keepdims=True)
    extent = coords.max(axis=1, keepdims=True) - low + 1
    rings = phase.param("rings", ())
    top = max(b for _, b in rings)
    src, dst, scale = [], [], []
    for dim, nbytes in rings:
        for step in (1, -1):
            moved = coords - low
            moved[..., dim] = (moved[..., dim] + step) % extent[..., dim]
            target = np.ravel_multi_index(tuple(np.moveaxis(moved + low, -1, 0)), tuple(dims),
                                          order="F")
            src.append(rows.ravel())
            dst.append((base + target).ravel())
            scale.append(nbytes / top)
    return src, dst, False, scale


#: Pattern name (``Phase.pattern``) -> its flows.
PATTERNS = {
    "ring": _ring,
    "chain": _chain,
    "tree": _tree,
    "multicast": _multicast,
    "pairs": _pairs,
    "partner": _partner,
    "p2p": _p2p,
    "dimension_rings": _dimension_rings,
}

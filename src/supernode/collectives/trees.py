"""NCCL's double binary tree across parts, and the tree all-reduce built on it.

The tree over ``m`` parts (nodes, racks) is NCCL's (``src/graph/trees.cc``): a binary tree
rooted at 0 whose inner nodes alternate with leaves along the node order (node ``r``'s
parent is ``r`` with its lowest set bit cleared and the next bit set, or cleared when that
is out of range), and a second tree that mirrors it (``m`` even) or shifts it by one
(``m`` odd), so that most inner nodes of one are leaves of the other (Sanders, Speck &
Träff 2009). Each tree carries half the data, up (reduce) and down (broadcast), pipelined.

NCCL runs the trees over several channels, each entering a part through a different
rank and NIC; here ``2b`` channels for a smallest part of ``b`` ranks (each NIC carries
one channel of each tree). Inside a part the ranks form a chain per channel, rotated so
that every rank heads two channels.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from supernode.collectives.levels import Level, outer
from supernode.collectives.schedule import Load, NotApplicable, Phase, Schedule, require_op

#: NCCL's tree all-reduce bandwidth factor (``busBw * .92``, src/graph/tuning.cc).
TREE_EFFICIENCY = 0.92


def _btree_parent(rank: np.ndarray, m: int) -> np.ndarray:
    """Parent of each node in NCCL's binary tree over ``m`` nodes (-1 for the root 0)."""
    r = np.asarray(rank, dtype=np.int64)
    bit = r & -r
    up = (r ^ bit) | (bit << 1)
    up = np.where(up >= m, r ^ bit, up)
    return np.where(r == 0, -1, up)


@lru_cache(maxsize=512)
def double_tree(m: int) -> tuple[np.ndarray, np.ndarray]:
    """Parent arrays of NCCL's two trees over ``m`` nodes (-1 marks a root)."""
    nodes = np.arange(m, dtype=np.int64)
    first = _btree_parent(nodes, m)
    if m % 2:
        shifted = _btree_parent((nodes - 1) % m, m)
        second = np.where(shifted < 0, -1, (shifted + 1) % m)
    else:
        mirrored = _btree_parent(m - 1 - nodes, m)
        second = np.where(mirrored < 0, -1, m - 1 - mirrored)
    first.flags.writeable = False
    second.flags.writeable = False
    return first, second


def tree_sends(m: int) -> np.ndarray:
    """Sends of each node summed over both trees: to its parent (reduce) and to each
    child (broadcast); each send carries half the data over the node's channels."""
    out = np.zeros(m)
    for parent in double_tree(m):
        has_parent = parent >= 0
        out += has_parent
        np.add.at(out, parent[has_parent], 1.0)
    return out


def cross_sends(m: int, per_group: int) -> np.ndarray:
    """Sends over tree edges leaving each group of ``per_group`` consecutive nodes."""
    groups = -(-m // per_group)
    out = np.zeros(groups)
    nodes = np.arange(m)
    for parent in double_tree(m):
        child = nodes[parent >= 0]
        par = parent[parent >= 0]
        crossing = child // per_group != par // per_group
        np.add.at(out, child[crossing] // per_group, 1.0)   # reduce: child -> parent
        np.add.at(out, par[crossing] // per_group, 1.0)     # broadcast: parent -> child
    return out


def tree_nodes(levels: list[Level]) -> int:
    """Parts the tree joins (``m``): the product of the parts of every outer level."""
    m = 1
    for lv in outer(levels):
        m *= lv.parts
    return m


def tree_outer_loads(levels: list[Level]) -> tuple[Load, ...]:
    """Bytes per port of the cross-part trees, per unit message (NIC and uplinks)."""
    crossed = outer(levels)
    if not crossed:
        return ()
    m = tree_nodes(levels)
    b = crossed[0].smallest
    loads = [Load(crossed[0].index, float(tree_sends(m).max()) * 0.5 / b, 1.0, "nic")]
    for lv in crossed[1:]:
        per_group = max(1, lv.smallest // max(1, levels[0].members))
        sends = cross_sends(m, per_group).max()
        loads.append(Load(lv.index, float(sends) * 0.5 / lv.smallest, 1.0, "uplink"))
    return tuple(loads)


def tree_depth_steps(levels: list[Level]) -> float:
    """NCCL's tree latency count across parts: ``log2i(m)`` (floor)."""
    m = tree_nodes(levels)
    return float(int(np.floor(np.log2(m)))) if m > 1 else 0.0


def _chain_load(inner: Level) -> Load | None:
    """Per-port bytes of the in-part chains (up and down, every rank heads 2 channels)."""
    g = inner.members
    if g <= 1:
        return None
    if inner.tier.kind == "torus":
        raise NotApplicable("the NCCL tree has no chain on a torus domain; use ring or "
                            "dimension_ordered")
    if inner.tier.kind == "full_mesh":
        return Load(0, 2.0 / g, 1.0 / max(1, inner.tier.group_size - 1), "link")
    return Load(0, 2.0 * (1.0 - 1.0 / g), 1.0, "port")


def tree(op: str, levels: list[Level], protocol: str) -> Schedule:
    """NCCL tree all-reduce: chains inside parts, the double binary tree across them,
    pipelined, at NCCL's tree factor 0.92: latency ``2[(g-1)α_0 + log2i(m)·α_out]``."""
    require_op("tree", op, frozenset({"all_reduce"}))
    inner = levels[0]
    chain = _chain_load(inner)
    across = list(tree_outer_loads(levels))
    if inner.rail and chain is not None and across:  # chains and trees share the NIC
        chain = Load(0, chain.bytes + across[0].bytes, 1.0, "nic")
    loads = [ld for ld in (chain,) if ld is not None] + across
    top = outer(levels)[-1].index if outer(levels) else 0
    steps = ((0, 2.0 * (inner.members - 1)),) + (
        ((top, 2.0 * tree_depth_steps(levels)),) if outer(levels) else ())
    b = outer(levels)[0].smallest if outer(levels) else inner.members
    phase = Phase("tree", "group", tuple(loads), steps, 0.5 / b,
                  params=(("channels", 2 * b), ("nodes", tree_nodes(levels)),
                          ("chain", inner.members > 1), ("efficiency", TREE_EFFICIENCY)))
    return Schedule("tree", op, protocol, "tree", (phase,), tuple(levels))


def cross_tree_phase(levels: list[Level]) -> Phase:
    """The tree across parts alone (NVLS_TREE's second phase): no chains."""
    crossed = outer(levels)
    if not crossed:
        raise NotApplicable("the group sits in one part: no tree across parts")
    b = crossed[0].smallest
    return Phase("tree", "group", tree_outer_loads(levels),
                 ((crossed[-1].index, 2.0 * tree_depth_steps(levels)),), 0.5 / b,
                 params=(("channels", 2 * b), ("nodes", tree_nodes(levels)), ("chain", False)))

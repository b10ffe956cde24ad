"""Collectives as flows: each algorithm becomes a sequence of phases of flows.

The algorithm names are those of :mod:`supernode.collectives` (``ring``, ``tree``,
``halving_doubling``, ``hierarchical``, ``nvls`` alias ``in_switch``, ``direct``,
``hierarchical_a2a``, ``p2p``); ``message_bytes`` follows nccl-tests (the whole buffer
for all-reduce / all-gather / reduce-scatter, the per-rank send buffer for all-to-all,
the sent tensor for p2p). ``groups`` is a ``G x n`` array of accelerator indices: ``G``
groups run the same collective at once, in rank order along each row.

* ``ring``: rank ``i`` sends to ``i + 1``. Step mode: ``2(n-1)`` phases of ``S/n``
  (all-reduce; ``n-1`` for all-gather / reduce-scatter), one path latency each.
  Pipelined mode (NCCL's chunked rings): one coupled class carrying ``2(n-1)/n * S`` per
  link at the pace of the slowest, paying the ``2(n-1)`` latencies. Several rings run at
  once over different links (channels, :mod:`.channels`), each with its share.
  Broadcast/reduce: a pipelined chain, ``S`` per hop, ``n-1`` latencies.
* ``tree``: double binary tree (Sanders, Speck & Träff 2009): two heap-shaped trees over
  the ranks, the second mirrored so that inner nodes of one are leaves of the other; each
  carries ``S/2`` up (reduce) and down (broadcast), pipelined: ``2 floor(log2 n)``
  latencies.
* ``halving_doubling``: ``log2 n`` exchanges with the partner ``i xor 2^k`` of
  ``S/2^(k+1)`` (reduce-scatter), then the same in reverse (all-gather); ranks beyond the
  largest power of two first hand their whole buffer to a partner and get it back last.
* ``hierarchical``: ring reduce-scatter inside each scale-up domain, ring all-reduce of
  ``S/g0`` along each rail across domains, ring all-gather inside.
* ``nvls`` / ``in_switch``: in-network reduction: every rank's buffer goes up to the
  switches and the result comes back down; switches merge the flows, so each link carries
  ``S`` once per direction (``FlowSpec.reduce``).
* ``direct``: every rank sends ``S/n`` to every other at once. ``hierarchical_a2a``:
  ``S/g0`` to each peer of the domain (regrouped by destination rail), then ``S/m`` to
  each domain along the rail.
* ``p2p``: ``groups[:, 0] -> groups[:, 1]``, ``S`` each.

``repeat`` fuses that many back-to-back identical collectives into one (bytes and
latencies times ``repeat``): exact on links nobody else uses. ``coupled=False`` gives every
flow its own class (the unaggregated reference).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from supernode.errors import InputError
from supernode.netsim.channels import ring_hops
from supernode.netsim.engine import FlowSpec
from supernode.netsim.network import Network
from supernode.topology.registry import Registry

Phases = list[list[FlowSpec]]
MODES = ("pipelined", "step")


@dataclass(frozen=True)
class Ctx:
    """How to build the flows: fusion, step or pipelined, coupling, the network, label."""

    repeat: float = 1.0
    mode: str = "pipelined"
    coupled: bool = True
    net: Network | None = None
    label: str = ""

    def flows(self, src, dst, nbytes: float, hops: float, reduce: bool = False) -> list:
        """One phase moving ``nbytes`` per flow, paying ``hops`` path latencies."""
        return [FlowSpec(np.asarray(src, dtype=np.int64).ravel(),
                         np.asarray(dst, dtype=np.int64).ravel(), float(nbytes),
                         float(hops), self.coupled, self.label, reduce)]

    def steps(self, src, dst, chunk: float, count: int) -> Phases:
        """``count`` identical steps: fused into one phase, or one phase each."""
        if count <= 0:
            return []
        if self.mode == "step":
            return [self.flows(src, dst, chunk, 1.0)] * int(round(count * self.repeat))
        return [self.flows(src, dst, chunk * count * self.repeat, count * self.repeat)]


Decomposer = Callable[[str, np.ndarray, float, Ctx], Phases]
COLLECTIVE_ALGORITHMS: Registry[tuple[Decomposer, frozenset[str]]] = Registry(
    "collective algorithm")
ALIASES = {"in_switch": "nvls"}


def register(name: str, ops: tuple[str, ...]) -> Callable[[Decomposer], Decomposer]:
    """Decorator: register a decomposition for ``ops`` under ``name`` (unique)."""
    def wrap(fn: Decomposer) -> Decomposer:
        COLLECTIVE_ALGORITHMS.register(name, (fn, frozenset(ops)))
        return fn
    return wrap


def default_algorithm(op: str) -> str:
    """The algorithm used when none is named: ring, direct (all-to-all) or p2p."""
    return {"all_to_all": "direct", "p2p": "p2p"}.get(op, "ring")


def collective_phases(op: str, algorithm: str | None, groups: np.ndarray,
                      message_bytes: float, ctx: Ctx = Ctx()) -> Phases:
    """Phases of flows of ``op`` by ``algorithm`` over ``groups`` (``G x n`` indices)."""
    name = ALIASES.get(algorithm or default_algorithm(op), algorithm or default_algorithm(op))
    fn, ops = COLLECTIVE_ALGORITHMS.get(name, "algorithm")
    if op not in ops:
        raise InputError("algorithm", f"{name!r} does not perform {op}; it serves "
                         f"{', '.join(sorted(ops))}")
    if ctx.mode not in MODES:
        raise InputError("mode", f"unknown mode {ctx.mode!r}; known: {', '.join(MODES)}")
    groups = np.atleast_2d(np.asarray(groups, dtype=np.int64))
    if groups.shape[1] < 2 or message_bytes <= 0:
        return []
    return fn(op, groups, float(message_bytes), ctx)


@register("ring", ("all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce"))
def ring(op: str, groups: np.ndarray, s: float, ctx: Ctx) -> Phases:
    """Ring (see the module docstring), over channels (:mod:`.channels`)."""
    n = groups.shape[1]
    if op in ("broadcast", "reduce"):
        chain = groups if op == "broadcast" else groups[:, ::-1]
        return [ctx.flows(chain[:, :-1], chain[:, 1:], s * ctx.repeat, (n - 1) * ctx.repeat)]
    steps = 2 * (n - 1) if op == "all_reduce" else n - 1
    src, dst = ring_hops(groups, ctx.net)
    return ctx.steps(src, dst, s / n / src.shape[0], steps)


def tree_edges(n: int) -> tuple[np.ndarray, np.ndarray]:
    """(child, parent) positions of both trees of a double binary tree over ``n`` ranks."""
    child = np.arange(1, n)
    parent = (child - 1) // 2
    mirror = n - 1 - np.arange(n)
    return (np.concatenate([child, mirror[child]]),
            np.concatenate([parent, mirror[parent]]))


@register("tree", ("all_reduce",))
def tree(op: str, groups: np.ndarray, s: float, ctx: Ctx) -> Phases:
    """Double binary tree all-reduce, pipelined (see the module docstring)."""
    n = groups.shape[1]
    child, parent = tree_edges(n)
    src = np.concatenate([groups[:, child], groups[:, parent]], axis=1)
    dst = np.concatenate([groups[:, parent], groups[:, child]], axis=1)
    depth = int(np.floor(np.log2(n)))
    return [ctx.flows(src, dst, s / 2 * ctx.repeat, 2 * depth * ctx.repeat)]


@register("halving_doubling", ("all_reduce", "all_gather", "reduce_scatter"))
def halving_doubling(op: str, groups: np.ndarray, s: float, ctx: Ctx) -> Phases:
    """Recursive halving / doubling (see the module docstring)."""
    n = groups.shape[1]
    levels = int(np.floor(np.log2(n)))
    p = 2**levels
    pos = np.arange(p)
    fold = [ctx.flows(groups[:, p:], groups[:, : n - p], s * ctx.repeat, ctx.repeat)] \
        if n > p else []
    rs = [ctx.flows(groups[:, pos], groups[:, pos ^ (1 << k)], s / 2 ** (k + 1) * ctx.repeat,
                    ctx.repeat) for k in range(levels)]
    ag = rs[::-1]
    unfold = [ctx.flows(groups[:, : n - p], groups[:, p:], s * ctx.repeat, ctx.repeat)] \
        if n > p else []
    body = {"all_reduce": fold + rs + ag + unfold, "reduce_scatter": fold + rs,
            "all_gather": ag + unfold}[op]
    if ctx.mode == "step" and ctx.repeat != 1:
        one = Ctx(1.0, ctx.mode, ctx.coupled, ctx.net, ctx.label)
        return halving_doubling(op, groups, s, one) * int(round(ctx.repeat))
    return body


def split_by_domain(groups: np.ndarray, net: Network | None) -> tuple[np.ndarray, np.ndarray]:
    """Inner groups (members in one scale-up domain) and rails (j-th member of each).

    Raises :class:`InputError` unless every group spans several domains with the same
    number of members in each.
    """
    if net is None:
        raise InputError("algorithm", "hierarchical algorithms need the network")
    dom = net.acc_domain[groups]
    order = np.argsort(dom, axis=1, kind="stable")
    members = np.take_along_axis(groups, order, axis=1)
    sorted_dom = np.take_along_axis(dom, order, axis=1)
    n = groups.shape[1]
    g0 = int(np.sum(sorted_dom[0] == sorted_dom[0, 0]))
    ok = g0 > 1 and n % g0 == 0 and n > g0
    if ok:
        blocks = sorted_dom.reshape(groups.shape[0], n // g0, g0)
        ok = bool(np.all(blocks == blocks[:, :, :1])) and bool(
            np.all(np.diff(blocks[:, :, 0], axis=1) != 0))
    if not ok:
        raise InputError("algorithm", "hierarchical needs groups spanning several scale-up "
                         "domains with the same number (> 1) of members in each")
    inner = members.reshape(-1, g0)
    rails = members.reshape(groups.shape[0], n // g0, g0).transpose(0, 2, 1).reshape(
        -1, n // g0)
    return inner, rails


@register("hierarchical", ("all_reduce",))
def hierarchical(op: str, groups: np.ndarray, s: float, ctx: Ctx) -> Phases:
    """Two-level all-reduce: RS inside domains, AR of S/g0 along rails, AG inside."""
    inner, rails = split_by_domain(groups, ctx.net)
    g0 = inner.shape[1]
    return (ring("reduce_scatter", inner, s, ctx) + ring("all_reduce", rails, s / g0, ctx)
            + ring("all_gather", inner, s, ctx))


@register("nvls", ("all_reduce",))
def in_switch(op: str, groups: np.ndarray, s: float, ctx: Ctx) -> Phases:
    """In-network reduction: up to the switches and back, merged (see the docstring)."""
    net = ctx.net
    if net is not None:
        dom = net.acc_domain[groups]
        inside = bool(np.all(dom == dom[:, :1]))
        tier = "scale_up_l1" if inside else "leaf"
        if tier not in net.reducing_tiers:
            where = "scale-up switches" if inside else "fabric switches"
            raise InputError("algorithm", f"in-switch reduction needs {where} that reduce "
                                          "(NVLS / SHARP); this cluster's do not")
    root = np.repeat(groups[:, :1], groups.shape[1] - 1, axis=1)
    rest = groups[:, 1:]
    src = np.concatenate([rest, root], axis=1)
    dst = np.concatenate([root, rest], axis=1)
    return [ctx.flows(src, dst, s * ctx.repeat, ctx.repeat, reduce=True)]


def pairs(groups: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every ordered pair of distinct members within each group."""
    n = groups.shape[1]
    i, j = np.nonzero(~np.eye(n, dtype=bool))
    return groups[:, i], groups[:, j]


@register("direct", ("all_to_all",))
def direct(op: str, groups: np.ndarray, s: float, ctx: Ctx) -> Phases:
    """Direct all-to-all: ``S/n`` to every peer at once."""
    src, dst = pairs(groups)
    return [ctx.flows(src, dst, s / groups.shape[1] * ctx.repeat, ctx.repeat)]


@register("hierarchical_a2a", ("all_to_all",))
def hierarchical_a2a(op: str, groups: np.ndarray, s: float, ctx: Ctx) -> Phases:
    """Two-phase all-to-all: inside domains (``S/g0`` per peer), then along rails."""
    inner, rails = split_by_domain(groups, ctx.net)
    g0, m = inner.shape[1], rails.shape[1]
    a, b = pairs(inner)
    c, d = pairs(rails)
    return [ctx.flows(a, b, s / g0 * ctx.repeat, ctx.repeat),
            ctx.flows(c, d, s / m * ctx.repeat, ctx.repeat)]


@register("p2p", ("p2p",))
def p2p(op: str, groups: np.ndarray, s: float, ctx: Ctx) -> Phases:
    """Point to point: the first member of each row sends ``S`` to the second."""
    return [ctx.flows(groups[:, 0], groups[:, 1], s * ctx.repeat, ctx.repeat)]

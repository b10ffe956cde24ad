"""Shortest-path routing on one part of the network (a scale-up domain or the fabric).

A :class:`SubGraph` holds the usable arcs among some nodes in local numbering. A path may
pass through *transit* nodes only (switches; accelerators of direct-link domains such as a
torus); its ends may be anything. Hop distances to a target come from one multi-source
breadth-first search (``scipy.sparse.csgraph.dijkstra``, unit weights) and are cached; the
candidates at node ``u`` toward ``t`` are the arcs to a neighbour one hop closer.

:func:`walk` moves every flow hop by hop; at each hop all flows are grouped by
``(node, target)`` and the routing policy assigns every group's flows to its candidates
in one vectorised call. Domains with the same local structure (arcs, capacities,
latencies, transit nodes) share one :class:`LocalShape`: the 2,048 identical 8-GPU
domains of a 16k-GPU cluster cost one search per local target and are walked together.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import cast

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import dijkstra

from supernode.errors import InputError
from supernode.netsim.policies import RoutingPolicy


@dataclass
class LocalShape:
    """Structure of a subgraph in local numbering; caches distances and candidates.

    Arc arrays: ``indptr`` (CSR by tail), ``arc_head``, ``arc_cap`` (bytes/s),
    ``arc_latency_s``; node arrays: ``transit``, ``node_latency_s``.
    """

    n: int
    indptr: np.ndarray
    arc_head: np.ndarray
    arc_cap: np.ndarray
    arc_latency_s: np.ndarray
    transit: np.ndarray
    node_latency_s: np.ndarray
    reverse: csr_matrix
    preds: csr_matrix
    dist_cache: dict[int, np.ndarray] = field(default_factory=dict)
    cand_cache: dict[int, np.ndarray] = field(default_factory=dict)

    def dist(self, t: int) -> np.ndarray:
        """Hops from every local node to ``t`` through transit nodes (inf: unreachable)."""
        cached = self.dist_cache.get(t)
        if cached is not None:
            return cached
        preds = self.preds.indices[self.preds.indptr[t]:self.preds.indptr[t + 1]]
        d = np.full(self.n, np.inf)
        if preds.size:
            d = dijkstra(self.reverse, directed=True, indices=preds, unweighted=True,
                         min_only=True) + 1.0
        d[t] = 0.0
        self.dist_cache[t] = d
        return d

    def candidates(self, u: int, t: int) -> np.ndarray:
        """Local arc indices leaving ``u`` one hop closer to ``t`` (empty: no route)."""
        key = u * self.n + t
        cached = self.cand_cache.get(key)
        if cached is not None:
            return cached
        d = self.dist(t)
        arcs = np.arange(self.indptr[u], self.indptr[u + 1])
        heads = self.arc_head[arcs]
        ok = (heads == t) | (self.transit[heads] & (d[heads] == d[u] - 1.0))
        out = arcs[ok & np.isfinite(d[u])]
        self.cand_cache[key] = out
        return out


    def candidates_many(self, keys: list[int]) -> list[np.ndarray]:
        """:meth:`candidates` of many ``u * n + t`` keys; misses computed per target."""
        out: list[np.ndarray | None] = [self.cand_cache.get(k) for k in keys]
        missing = [i for i, c in enumerate(out) if c is None]
        if not missing:
            return cast(list[np.ndarray], out)  # every entry cached
        miss = np.array([keys[i] for i in missing], dtype=np.int64)
        us, ts = miss // self.n, miss % self.n
        for t in np.unique(ts).tolist():
            sel = np.flatnonzero(ts == t)
            u = us[sel]
            d = self.dist(t)
            lo, hi = self.indptr[u], self.indptr[u + 1]
            sizes = hi - lo
            arcs = expand_ranges(lo, sizes)
            heads = self.arc_head[arcs]
            du = np.repeat(d[u], sizes)
            ok = ((heads == t) | (self.transit[heads] & (d[heads] == du - 1.0))) \
                & np.isfinite(du)
            owner = np.repeat(np.arange(u.size), sizes)
            kept, who = arcs[ok], owner[ok]
            cuts = np.searchsorted(who, np.arange(u.size + 1))
            for j, i in enumerate(sel.tolist()):
                cand = kept[cuts[j]:cuts[j + 1]]
                self.cand_cache[int(miss[i])] = cand
                out[missing[i]] = cand
        return cast(list[np.ndarray], out)  # every entry cached or computed

    def candidate_table(self, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Candidates of ``u * n + t`` keys as CSR ``(ptr, arcs)`` (local arc ids)."""
        cands = self.candidates_many(np.asarray(keys).tolist())
        sizes = np.fromiter((c.size for c in cands), dtype=np.int64, count=len(cands))
        arcs = np.concatenate(cands) if cands else np.zeros(0, dtype=np.int64)
        return np.concatenate([[0], np.cumsum(sizes)]), arcs.astype(np.int64, copy=False)


def expand_ranges(start: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """Concatenated ``arange(start[i], start[i] + sizes[i])`` over ``i``."""
    return np.repeat(start - np.cumsum(sizes) + sizes, sizes) + np.arange(int(sizes.sum()))


def merge_tables(groups: int, *parts: tuple[np.ndarray, np.ndarray, np.ndarray]
                 ) -> tuple[np.ndarray, np.ndarray]:
    """One CSR table over ``groups`` from parts ``(group ids, sizes, flat values)`` that
    cover disjoint groups (each part's values in its groups' order)."""
    sizes = np.zeros(groups, dtype=np.int64)
    for ids, part_sizes, _ in parts:
        sizes[ids] = part_sizes
    ptr = np.concatenate([[0], np.cumsum(sizes)])
    out = np.empty(int(ptr[-1]), dtype=np.int64)
    for ids, part_sizes, values in parts:
        out[expand_ranges(ptr[ids], part_sizes)] = values
    return ptr, out


@dataclass
class SubGraph:
    """A part of the network: global ids of its nodes and arcs over a shared shape."""

    nodes: np.ndarray
    arc_link: np.ndarray
    shape: LocalShape

    def local(self, global_nodes: np.ndarray) -> np.ndarray:
        """Local ids of global node indices (KeyError if one is not in this subgraph)."""
        pos = np.minimum(np.searchsorted(self.nodes, global_nodes), self.nodes.size - 1)
        if not np.all(self.nodes[pos] == global_nodes):
            raise KeyError("node outside the subgraph")
        return pos


def build_subgraph(tail: np.ndarray, head: np.ndarray, capacity: np.ndarray,
                   latency_s: np.ndarray, node_latency_s: np.ndarray, links: np.ndarray,
                   transit_global: np.ndarray,
                   shapes: dict[bytes, LocalShape] | None = None) -> SubGraph:
    """Subgraph of the directed ``links`` (global ids); ``shapes`` shares identical ones."""
    nodes = np.unique(np.concatenate([tail[links], head[links]]))
    lt, lh = np.searchsorted(nodes, tail[links]), np.searchsorted(nodes, head[links])
    order = np.lexsort((lh, lt))
    lt, lh, arc_link = lt[order], lh[order], links[order]
    cap, lat = capacity[arc_link], latency_s[arc_link]
    transit, node_lat = transit_global[nodes], node_latency_s[nodes]
    key = b"".join(a.tobytes() for a in (lt, lh, cap, lat, transit, node_lat))
    if shapes is not None and key in shapes:
        return SubGraph(nodes, arc_link, shapes[key])
    n = nodes.size
    indptr = np.searchsorted(lt, np.arange(n + 1))
    keep = transit[lh]  # reverse arc head -> tail, usable when the head may be passed
    reverse = csr_matrix((np.ones(int(keep.sum())), (lh[keep], lt[keep])), shape=(n, n))
    reverse.sum_duplicates()
    preds = csr_matrix((np.ones(lh.size), (lh, lt)), shape=(n, n))
    preds.sum_duplicates()
    shape = LocalShape(n, indptr, lh, cap, lat, transit, node_lat, reverse, preds)
    if shapes is not None:
        shapes[key] = shape
    return SubGraph(nodes, arc_link, shape)


@dataclass
class Walk:
    """Routed flows: ``(flow, arc, share)`` triples (local arcs) and each flow's latency."""

    flow: np.ndarray
    arc: np.ndarray
    share: np.ndarray
    latency_s: np.ndarray


def walk(shape: LocalShape, src: np.ndarray, dst: np.ndarray, keys: np.ndarray,
         policy: RoutingPolicy, load: np.ndarray | None = None) -> Walk:
    """Route flows ``src[i] -> dst[i]`` (local ids) on ``shape`` under ``policy``.

    ``shape`` may be any object with a :class:`LocalShape`'s arrays and
    ``candidate_table`` (:class:`~supernode.netsim.updown.UpDownShape`). ``load`` (per
    local arc) feeds load-aware policies. Latency of a flow: arc latencies
    plus the latency of every node entered except its target, the slowest branch when a
    flow is split. Raises :class:`InputError` when a flow has no route.
    """
    n = shape.n
    pm, pu = np.arange(src.size), np.asarray(src, dtype=np.int64)
    pw, plat = np.ones(src.size), np.zeros(src.size)
    lat = np.zeros(src.size)
    out: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    for _hop in range(n + 1):
        done = pu == dst[pm]
        np.maximum.at(lat, pm[done], plat[done])
        keep = ~done
        pm, pu, pw, plat = pm[keep], pu[keep], pw[keep], plat[keep]
        if pm.size == 0:
            break
        pm, pu, pw, plat = _step(shape, pm, pu, pw, plat, dst, keys, policy, load, out)
    else:
        raise InputError("routing", "a route did not converge (loop in the topology?)")
    if not out:
        empty = np.zeros(0, dtype=np.int64)
        return Walk(empty, empty, np.zeros(0), lat)
    flow, arc, share = (np.concatenate(parts) for parts in zip(*out, strict=True))
    return Walk(flow, arc, share, lat)


def _step(shape: LocalShape, pm, pu, pw, plat, dst, keys, policy, load, out):
    """Advance every particle one hop; merge particles that meet at the same node."""
    n = shape.n
    gkey = pu * n + dst[pm]
    uniq, group = np.unique(gkey, return_inverse=True)
    ptr, arcs = shape.candidate_table(uniq)
    if np.any(np.diff(ptr) == 0):
        raise InputError("routing", "no route left between two accelerators (failed links "
                                    "or switches disconnect them)")
    now = load[arcs] if load is not None else np.zeros(arcs.size)
    f, c, share = policy.assign_many(ptr, shape.arc_cap[arcs], now, keys[pm], group,
                                     uniq // n)
    chosen = arcs[c]
    heads = shape.arc_head[chosen]
    members, weight = pm[f], pw[f] * share
    target = dst[members]
    out.append((members, chosen, weight))
    step_lat = shape.arc_latency_s[chosen] + np.where(heads == target, 0.0,
                                                      shape.node_latency_s[heads])
    pm, pu, pw, plat = members, heads, weight, plat[f] + step_lat
    key = pm * n + pu
    uniq, inv = np.unique(key, return_inverse=True)
    if uniq.size == key.size:
        return pm, pu, pw, plat
    weights = np.bincount(inv, weights=pw)
    merged = np.full(uniq.size, -np.inf)
    np.maximum.at(merged, inv, plat)
    return uniq // n, uniq % n, weights, merged

"""Result tables of a run: link utilisation per tier, hot links and their flows,
completion times per collective, and the timeline. Plots read these, never the engine.

Utilisation of a link is its load over its capacity. ``mean`` is time-averaged over the
run (bytes carried / (capacity x duration)); ``peak`` the highest instantaneous value; a
link is *hot* when it spent at least ``hot_min_share`` of the run at or above the
threshold (80 %, seed 003 §3.2).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from supernode.netsim.engine import Environment
from supernode.netsim.network import Network, node_name
from supernode.topology.graph import LINK_TIERS, SWITCH_TIERS

#: Timeline categories of a training step's communication (others: "communication").
PARALLEL_DIMS = ("tp", "cp", "ep", "pp", "dp", "dp_expert")
#: A link is listed as hot when this share of the run was spent at >= the threshold.
HOT_MIN_SHARE = 0.01


@dataclass
class LinkStats:
    """Per-link arrays over the links in service: ids, tier, mean, peak, hot seconds."""

    links: np.ndarray
    tier: np.ndarray
    mean: np.ndarray
    peak: np.ndarray
    hot_s: np.ndarray
    bytes: np.ndarray


@dataclass
class RunTables:
    """Everything reported about a run (SI units)."""

    duration_s: float
    links: LinkStats
    link_utilization: dict[str, dict[str, float]]
    hot_links: list[dict[str, Any]]
    hot_counts: dict[str, int]
    collectives: dict[str, dict[str, float]]
    timeline: list[tuple[str, str, str, float, float]]
    events: int
    classes: int
    solves: int
    extra: dict[str, Any] = field(default_factory=dict)


def link_stats(env: Environment, net: Network, duration_s: float) -> LinkStats:
    """Per-link utilisation statistics over the links in service."""
    ids = np.flatnonzero(net.up & (net.capacity_bytes_per_s > 0))
    cap = net.capacity_bytes_per_s[ids]
    carried = env.link_bytes[ids]
    span = max(duration_s, 1e-300)
    return LinkStats(ids, net.tier[ids], carried / (cap * span), env.fluid.peak[ids],
                     env.fluid.hot_s[ids], carried)


def tier_table(stats: LinkStats) -> dict[str, dict[str, float]]:
    """Per tier: links, mean / p50 / p99 / max of time-averaged utilisation, peak."""
    out: dict[str, dict[str, float]] = {}
    for code in np.unique(stats.tier).tolist():
        sel = stats.tier == code
        u = stats.mean[sel]
        out[LINK_TIERS[code]] = {
            "links": int(sel.sum()), "mean": float(u.mean()),
            "p50": float(np.percentile(u, 50)), "p99": float(np.percentile(u, 99)),
            "max": float(u.max()), "peak": float(stats.peak[sel].max()),
        }
    return out


def hot_table(env: Environment, net: Network, stats: LinkStats, duration_s: float,
              top: int, min_share: float = HOT_MIN_SHARE
              ) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """Hot links (most time hot first, at most ``top``) with the flows that loaded them,
    and the count of hot links per tier."""
    share = stats.hot_s / max(duration_s, 1e-300)
    hot = np.flatnonzero(share >= min_share)
    counts: dict[str, int] = defaultdict(int)
    for code in stats.tier[hot].tolist():
        counts[LINK_TIERS[code]] += 1
    order = hot[np.lexsort((-stats.peak[hot], -share[hot]))][:top]
    chosen = stats.links[order]
    flows = _flows_on(env, chosen)
    rows = []
    for i, link in zip(order.tolist(), chosen.tolist(), strict=True):
        by_label = flows.get(link, {})
        total = sum(by_label.values()) or 1.0
        rows.append({
            "link": net.link_name(link), "tier": net.tier_name(link),
            "utilization": float(stats.mean[i]), "peak": float(stats.peak[i]),
            "hot_share": float(share[i]), "bytes": float(stats.bytes[i]),
            "flows": [{"label": k, "bytes": v, "share": v / total} for k, v in
                      sorted(by_label.items(), key=lambda kv: (-kv[1], kv[0]))[:5]],
        })
    return rows, dict(counts)


def _flows_on(env: Environment, links: np.ndarray) -> dict[int, dict[str, float]]:
    """Bytes each flow label put on each of ``links``."""
    wanted = set(links.tolist())
    per_vid: dict[tuple[int, str], float] = defaultdict(float)
    for c in env.classes:
        per_vid[(c.vid, c.label)] += c.bytes
    out: dict[int, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for (vid, label), nbytes in per_vid.items():
        v = env.fluid.vectors.items[vid]
        sel = np.isin(v.links, links)
        for link, m in zip(v.links[sel].tolist(), v.mult[sel].tolist(), strict=True):
            if link in wanted:
                out[link][label] += m * nbytes
    return out


def collective_table(env: Environment) -> dict[str, dict[str, float]]:
    """Completion-time distribution (seconds) of each kind of collective."""
    times: dict[str, list[float]] = defaultdict(list)
    for r in env.records:
        if np.isfinite(r.duration_s):
            key = f"{r.job}: {r.label}" if r.job else r.label
            times[key].append(r.duration_s)
    out = {}
    for key in sorted(times):
        t = np.asarray(times[key])
        out[key] = {"count": int(t.size), "mean_s": float(t.mean()),
                    "p50_s": float(np.percentile(t, 50)), "p90_s": float(np.percentile(t, 90)),
                    "p99_s": float(np.percentile(t, 99)), "max_s": float(t.max()),
                    "total_s": float(t.sum())}
    return out


def timeline(env: Environment) -> list[tuple[str, str, str, float, float]]:
    """(job, lane, category, start, end) of compute delays and transfers, by start."""
    rows = []
    for t in env.tasks:
        if t.kind == "join" or not np.isfinite(t.end_s) or t.end_s <= t.start_s:
            continue
        if t.kind == "delay" and t.label in ("trigger", "wait"):
            continue
        if t.kind == "delay":
            category = t.label
        else:
            first = t.label.split(" ")[0]
            category = first if first in PARALLEL_DIMS else "communication"
        rows.append((t.job, t.lane, category, t.start_s, t.end_s))
    rows.sort(key=lambda r: (r[3], r[1]))
    return rows


def heatmap(env: Environment, net: Network, stats: LinkStats, duration_s: float,
            bins: int = 120, per_tier: int = 48, switches: int = 16
            ) -> dict[str, dict[str, Any]]:
    """Utilisation per time bin, per tier: the tier as a whole, its busiest switches and
    its busiest links.

    Returns ``{tier: table}``; each table has ``edges_s`` (bin edges, s); ``links``,
    ``hot`` and ``utilization`` (one row per link, most bytes first, at most
    ``per_tier``; ``hot`` as in :func:`hot_table`); ``link_count`` and ``mean`` (every
    link of the tier in service: bytes carried per bin over their summed capacity); and
    ``switches``: the busiest ``switches`` switches the tier's links attach to (the end
    in the link's own switch tier, else the higher switch end), each with ``names``,
    ``links`` (its links of the tier), ``hot_links`` and ``utilization`` (its links' bytes
    per bin over their summed capacity). Cost: one sparse product per table over the
    path vectors' links, so it grows with the flows, not with the links drawn.
    """
    edges = np.linspace(0.0, max(duration_s, 1e-300), bins + 1)
    carried = _BinnedVectors(env, edges, net.links)
    hot = stats.hot_s / max(duration_s, 1e-300) >= HOT_MIN_SHARE
    capacity = net.capacity_bytes_per_s
    out: dict[str, dict[str, Any]] = {}
    for code in np.unique(stats.tier).tolist():
        sel = np.flatnonzero(stats.tier == code)
        links, link_hot = stats.links[sel], hot[sel]
        pick = np.argsort(-stats.bytes[sel], kind="stable")[:per_tier]
        top = links[pick]
        util = carried.per_group(top, np.arange(top.size), top.size)
        util /= capacity[top][:, None] * carried.width[None, :]
        whole = carried.per_group(links, np.zeros(links.size, np.int64), 1)[0]
        name = LINK_TIERS[code]
        out[name] = {"links": [net.link_name(k) for k in top.tolist()],
                     "edges_s": edges.tolist(), "utilization": util.tolist(),
                     "hot": link_hot[pick].tolist(), "link_count": int(links.size),
                     "mean": (whole / (capacity[links].sum() * carried.width)).tolist(),
                     "switches": _switch_rows(net, carried, links, stats.bytes[sel],
                                              link_hot, name, switches)}
    return out


class _BinnedVectors:
    """Bytes per flow of every path vector in each time bin, and the links they cross
    (flattened: one entry per (vector, link) with the link's multiplicity)."""

    def __init__(self, env: Environment, edges: np.ndarray, links: int) -> None:
        per_vid = _vector_bytes_per_bin(env, edges)
        vids = sorted(per_vid)
        self.width = np.diff(edges)
        self.rows = (np.array([per_vid[v] for v in vids]) if vids
                     else np.zeros((0, edges.size - 1)))
        items = [env.fluid.vectors.items[v] for v in vids]
        sizes = [v.links.size for v in items]
        self.link = np.concatenate([v.links for v in items]) if items else np.zeros(0, int)
        self.mult = np.concatenate([v.mult for v in items]) if items else np.zeros(0)
        self.vector = np.repeat(np.arange(len(items)), sizes)
        self.links = links

    def per_group(self, links: np.ndarray, group: np.ndarray, groups: int) -> np.ndarray:
        """Bytes per bin carried by ``links`` summed per ``group`` (``groups`` x bins)."""
        from scipy.sparse import coo_matrix

        of_link = np.full(self.links, -1, dtype=np.int64)
        of_link[links] = group
        g = of_link[self.link] if self.link.size else np.zeros(0, np.int64)
        keep = g >= 0
        matrix = coo_matrix((self.mult[keep], (g[keep], self.vector[keep])),
                            shape=(groups, self.rows.shape[0])).tocsr()
        return np.asarray(matrix @ self.rows, dtype=float).reshape(groups, -1)


def switch_of_links(net: Network, links: np.ndarray, tier: str) -> np.ndarray:
    """The switch node each link attaches to: its end in the switch tier named like the
    link tier (a ``spine`` link's spine switch), else its higher switch end; -1 for a
    link between two non-switches (or when the network has no switch tiers)."""
    if net.node_tier.size == 0:
        return np.full(links.size, -1, dtype=np.int64)
    ends = np.stack([net.tail[links], net.head[links]], axis=1)
    level = net.node_tier[ends].astype(np.int64)
    own = SWITCH_TIERS.index(tier) if tier in SWITCH_TIERS else -2
    score = np.where(level == own, 1 << 20, level)  # own tier first, else the higher one
    best = np.argmax(score, axis=1)
    chosen = ends[np.arange(links.size), best]
    return np.where(level[np.arange(links.size), best] >= 0, chosen, -1)


def _switch_rows(net: Network, carried: _BinnedVectors, links: np.ndarray,
                 nbytes: np.ndarray, hot: np.ndarray, tier: str, top: int
                 ) -> dict[str, list[Any]]:
    """The busiest switches of one tier (most bytes through their links of the tier)."""
    switch = switch_of_links(net, links, tier)
    attached = switch >= 0
    if not attached.any():
        return {"names": [], "links": [], "hot_links": [], "utilization": []}
    nodes, group = np.unique(switch[attached], return_inverse=True)
    total = np.bincount(group, weights=nbytes[attached], minlength=nodes.size)
    chosen = np.argsort(-total, kind="stable")[:top]
    rank = np.full(nodes.size, -1, dtype=np.int64)
    rank[chosen] = np.arange(chosen.size)
    member = rank[group] >= 0
    ids, row = links[attached][member], rank[group][member]
    util = carried.per_group(ids, row, chosen.size)
    cap = np.bincount(row, weights=net.capacity_bytes_per_s[ids], minlength=chosen.size)
    count = np.bincount(row, minlength=chosen.size)
    hot_count = np.bincount(row, weights=hot[attached][member], minlength=chosen.size)
    return {"names": [node_name(net.nodes[v]) for v in nodes[chosen].tolist()],
            "links": count.tolist(), "hot_links": hot_count.astype(int).tolist(),
            "utilization": (util / (cap[:, None] * carried.width[None, :])).tolist()}


def _vector_bytes_per_bin(env: Environment, edges: np.ndarray) -> dict[int, np.ndarray]:
    """Bytes per flow on each path vector in each time bin (from the rate log)."""
    out = {}
    for vid, entries in env.fluid.history.items():
        times = np.array([t for t, _ in entries] + [edges[-1]])
        rates = np.array([r for _, r in entries])
        cumulative = np.concatenate([[0.0], np.cumsum(rates * np.diff(times))])
        at_edges = np.interp(edges, times, cumulative, left=0.0)
        out[vid] = np.diff(at_edges)
    return out


def tables(env: Environment, net: Network, duration_s: float, top: int = 20,
           bins: int = 0) -> RunTables:
    """All result tables of a finished run (``bins`` > 0 adds the utilisation heatmap)."""
    stats = link_stats(env, net, duration_s)
    hot, counts = hot_table(env, net, stats, duration_s, top)
    out = RunTables(duration_s, stats, tier_table(stats), hot, counts, collective_table(env),
                    timeline(env), env.events, len(env.classes), env.fluid.solves)
    if bins:
        out.extra["heatmap"] = heatmap(env, net, stats, duration_s, bins)
    return out

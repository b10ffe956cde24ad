"""Graph algorithms that check the closed forms on built graphs (small instances).

These walk or cut the graph, so they cost ``O(V * E)`` or a max-flow; the CLI never calls
them on large clusters. Tests compare them with :mod:`~supernode.topology.domain_metrics`,
:mod:`~supernode.topology.grid_metrics` and :mod:`~supernode.topology.fabric_metrics`.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

import networkx as nx

from supernode.topology.graph import FABRIC_TIERS

_SCALE = 1024  # capacities are scaled to integers with this resolution (bytes/s / 1024)


def capacity(data: dict[str, Any]) -> float:
    """Capacity of an edge per direction: ``count * bandwidth_bytes_per_s`` (bytes/s)."""
    bytes_per_s: float = data["count"] * data["bandwidth_bytes_per_s"]
    return bytes_per_s


def graph_counts(g: nx.Graph) -> dict[str, Counter[str]]:
    """Counts read off a graph: ``nodes`` by kind, ``switches`` and ``links`` by tier
    (links = sum of edge ``count``, which splits a port-equivalent uplink over several
    narrow edges; sums are rounded to whole links), ``cables`` and ``optical`` links."""
    nodes = Counter(d["kind"] for _, d in g.nodes(data=True))
    switches = Counter(d["tier"] for _, d in g.nodes(data=True) if d["kind"] == "switch")
    links: Counter[str] = Counter()
    cables: Counter[str] = Counter()
    optical: Counter[str] = Counter()
    for _, _, d in g.edges(data=True):
        links[d["tier"]] += d["count"]
        if d["medium"] != "pcb":
            cables[d["tier"]] += d["count"]
        if d["medium"] == "optical":
            optical[d["tier"]] += d["count"]
    for counter in (links, cables, optical):
        for tier, value in counter.items():
            counter[tier] = round(value, 6) if value != int(value) else int(value)
    return {"nodes": nodes, "switches": switches, "links": links, "cables": cables,
            "optical": optical}


def accelerators(g: nx.Graph) -> list[Any]:
    """Accelerator nodes of ``g`` in node order."""
    return [v for v, d in g.nodes(data=True) if d["kind"] == "accelerator"]


def _hops_between(
    g: nx.Graph, sources: list[Any], targets: set[Any], worst_pair: list[Any] | None = None,
) -> tuple[int, float]:
    """Max and mean shortest-path links from each source to the other targets (BFS);
    the farthest pair is written into ``worst_pair`` when one is given."""
    worst, total, pairs = 0, 0, 0
    for s in sources:
        dist = nx.single_source_shortest_path_length(g, s)
        for t in targets:
            if t == s:
                continue
            if t not in dist:
                raise ValueError(f"{t} is unreachable from {s}")
            if dist[t] > worst and worst_pair is not None:
                worst_pair[:] = [s, t]
            worst = max(worst, dist[t])
            total += dist[t]
            pairs += 1
    return worst, (total / pairs if pairs else 0.0)


def accelerator_hops(g: nx.Graph) -> tuple[int, float]:
    """(diameter, mean) in links between accelerators of a scale-up graph (switches and
    other nodes may be intermediate). Raises ``ValueError`` if some pair is disconnected."""
    accs = accelerators(g)
    return _hops_between(g, accs, set(accs))


def accelerator_diameter_switches(g: nx.Graph) -> int:
    """Switches crossed on a shortest path between the two farthest accelerators."""
    accs, pair = accelerators(g), list[Any]()
    _hops_between(g, accs, set(accs), pair)
    if not pair:
        return 0
    path = nx.shortest_path(g, pair[0], pair[1])
    return sum(1 for v in path if g.nodes[v]["kind"] == "switch")


def server_hops(g: nx.Graph) -> tuple[int, float]:
    """(diameter, mean) NIC-to-NIC links between hosts in the fabric, over host pairs, each
    pair using its closest NIC ports. Only NICs and fabric switches are walked."""
    fabric = g.subgraph(
        v for v, d in g.nodes(data=True)
        if d["kind"] == "nic" or d.get("tier") in FABRIC_TIERS
    ).copy()
    hosts = sorted({d["host"] for _, d in fabric.nodes(data=True) if d["kind"] == "nic"})
    for v, d in list(fabric.nodes(data=True)):
        if d["kind"] == "nic":
            fabric.add_edge(("server", d["host"]), v)
    servers = [("server", h) for h in hosts]
    worst, mean = _hops_between(fabric, servers, set(servers))
    return max(0, worst - 2), max(0.0, mean - 2)


def cut_capacity(
    g: nx.Graph, side_a: Iterable[Any], side_b: Iterable[Any],
    flow_func: Callable[..., Any] | None = None,
) -> float:
    """Max flow (bytes/s, one direction) from nodes ``side_a`` to nodes ``side_b``; every
    edge carries ``count * bandwidth`` each way. Equal to the min cut separating them,
    with every other node free to sit on either side."""
    side_a, side_b = list(side_a), list(side_b)
    if not side_a or not side_b:
        return 0.0
    h = nx.Graph()
    for u, v, d in g.edges(data=True):
        h.add_edge(u, v, capacity=round(capacity(d) * _SCALE))  # integers: exact max-flow
    for v in side_a:
        h.add_edge("_source", v)  # no capacity attribute: infinite
    for v in side_b:
        h.add_edge(v, "_sink")
    flow: float = nx.maximum_flow_value(h, "_source", "_sink", flow_func=flow_func)
    return flow / _SCALE


def min_bisection_bruteforce(g: nx.Graph) -> float:
    """Exact minimum balanced bisection (bytes/s) of a graph whose nodes are all
    accelerators, by enumerating every split into ``floor(n/2)`` and ``ceil(n/2)``.
    Exponential: for ``n <= 16`` only."""
    nodes = list(g.nodes)
    n = len(nodes)
    if n > 16:
        raise ValueError(f"{n} nodes: brute force is limited to 16")
    index = {v: i for i, v in enumerate(nodes)}
    edges = [(index[u], index[v], capacity(d)) for u, v, d in g.edges(data=True)]
    best = float("inf")
    if n % 2 == 0:  # node 0 on side A: each split counted once
        splits = ({0, *c} for c in itertools.combinations(range(1, n), n // 2 - 1))
    else:
        splits = (set(c) for c in itertools.combinations(range(n), n // 2))
    for side in splits:
        best = min(best, sum(c for u, v, c in edges if (u in side) != (v in side)))
    return best

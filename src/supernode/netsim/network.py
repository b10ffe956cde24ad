"""The simulator's view of a topology: directed links as arrays, nodes by index.

Built once from a topology graph (:mod:`supernode.topology.graph` conventions), or
straight into arrays from a resolved cluster (:mod:`supernode.netsim.build`, whose
:func:`~supernode.netsim.build.network_from_cluster` picks the way). Every
undirected edge becomes two directed links, ``2k`` (u -> v) and ``2k + 1`` (v -> u), so the
reverse of link ``l`` is ``l ^ 1``. A link's capacity is ``count * bandwidth_bytes_per_s``
(bytes/s, one direction), its latency the edge's ``latency_s``. CPU sockets and their PCIe
links are left out: they carry no collective traffic. The PCIe link between an accelerator
and its NIC stays (tier ``host``).

Node names are the graph's tuple ids joined with ``/``: ``leaf/3``, ``scale_up_l1/0/5``,
``acc/12``, ``nic/4/1``; a link is ``u->v``. Failure specs and reports use these names.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from supernode.topology.graph import FABRIC_TIERS, LINK_TIERS, SCALE_UP_TIERS, SWITCH_TIERS

if TYPE_CHECKING:
    import networkx as nx

#: Node kind codes.
ACC, NIC, SWITCH = 0, 1, 2
_KIND_CODES = {"accelerator": ACC, "nic": NIC, "switch": SWITCH}
#: Tier codes index into LINK_TIERS.
TIER_CODES = {name: i for i, name in enumerate(LINK_TIERS)}
SCALE_UP_CODES = frozenset(TIER_CODES[t] for t in SCALE_UP_TIERS)
#: Switch tier codes index into SWITCH_TIERS (``node_tier``; -1: not a switch).
SWITCH_TIER_CODES = {name: i for i, name in enumerate(SWITCH_TIERS)}
FABRIC_CODES = frozenset(TIER_CODES[t] for t in FABRIC_TIERS)


def kind_code(kind: str | None) -> int:
    """Node kind code of a graph ``kind`` attribute (-1 for anything else)."""
    return _KIND_CODES.get(kind, -1) if kind is not None else -1


def node_name(node: Hashable) -> str:
    """Printable name of a graph node id: ``("leaf", 3)`` -> ``leaf/3``."""
    if isinstance(node, tuple):
        return "/".join(str(part) for part in node)
    return str(node)


@dataclass(frozen=True)
class Network:
    """Directed links (arrays over link ids) and node facts (arrays over node indices).

    Capacities in bytes/s per direction, latencies in seconds. ``up`` marks links in
    service; a failed link keeps its id (reports stay comparable) with ``up = False``.
    ``acc_node[i]`` is the node of accelerator ``i``; ``acc_nic[i]`` the NIC node it sends
    through (-1 without one); ``nic_link[n]`` the PCIe link accelerator -> NIC ``n``.
    ``reducing_tiers``: link tiers whose switches reduce in-network (NVLS, SHARP).
    ``node_tier[v]``: the switch tier of node ``v`` (code into ``SWITCH_TIERS``; -1 for
    anything else; empty when unknown).
    """

    name: str
    nodes: Sequence[Hashable]
    kind: np.ndarray
    domain: np.ndarray
    rail: np.ndarray
    node_latency_s: np.ndarray
    tail: np.ndarray
    head: np.ndarray
    capacity_bytes_per_s: np.ndarray
    latency_s: np.ndarray
    tier: np.ndarray
    up: np.ndarray
    acc_node: np.ndarray
    acc_domain: np.ndarray
    acc_host: np.ndarray
    acc_nic: np.ndarray
    nic_link: dict[int, int]
    rail_optimized: bool = False
    reducing_tiers: frozenset[str] = frozenset()
    index: Mapping[Hashable, int] = field(default_factory=dict, repr=False)
    link_keys: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64), repr=False)
    link_order: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64), repr=False)
    node_tier: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int8), repr=False)

    @property
    def links(self) -> int:
        """Number of directed links (twice the graph's edges)."""
        return int(self.tail.size)

    @property
    def accelerators(self) -> int:
        """Number of accelerators."""
        return int(self.acc_node.size)

    def link_name(self, link: int) -> str:
        """``tail->head`` name of a directed link."""
        return (f"{node_name(self.nodes[self.tail[link]])}->"
                f"{node_name(self.nodes[self.head[link]])}")

    def find_link(self, u: int, v: int) -> int | None:
        """Id of the directed link from node ``u`` to node ``v`` (None if there is none)."""
        key = u * len(self.nodes) + v
        pos = int(np.searchsorted(self.link_keys, key))
        if pos < self.link_keys.size and self.link_keys[pos] == key:
            return int(self.link_order[pos])
        return None

    def tier_name(self, link: int) -> str:
        """Tier of a link (``scale_up_l1``, ``leaf``, ``spine`` ...)."""
        return LINK_TIERS[int(self.tier[link])]

    def with_links(self, up: np.ndarray, capacity_bytes_per_s: np.ndarray) -> Network:
        """A copy with other link states and capacities (failures, slow links)."""
        return replace(self, up=up, capacity_bytes_per_s=capacity_bytes_per_s)


def reducing_tiers(cluster: Any) -> frozenset[str]:
    """Link tiers whose switches reduce in-network (NVLS on scale-up, SHARP on the fabric)."""
    out, up = cluster.scale_out, cluster.scale_up
    reducing: set[str] = set()
    if up.switch is not None and up.switch.in_network_reduction:
        reducing |= {"scale_up_l1", "scale_up_l2"}
    if out is not None and out.in_network_reduction:
        reducing |= set(FABRIC_TIERS)
    return frozenset(reducing)


@dataclass(frozen=True)
class LinkArrays:
    """Directed links of undirected edges ``u[k] - v[k]``: ``2k`` is u -> v, ``2k + 1``
    v -> u; ``keys`` (``tail * nodes + head``) sorted, ``order`` the link of each key."""

    tail: np.ndarray
    head: np.ndarray
    capacity_bytes_per_s: np.ndarray
    latency_s: np.ndarray
    tier: np.ndarray
    keys: np.ndarray
    order: np.ndarray

    def find(self, tails: np.ndarray, heads: np.ndarray, nodes: int) -> np.ndarray:
        """Link ids of existing directed links ``tails[i] -> heads[i]``."""
        return self.order[np.searchsorted(self.keys, tails * nodes + heads)]


def link_arrays(nodes: int, u: np.ndarray, v: np.ndarray, capacity: np.ndarray,
                latency_s: np.ndarray, tier: np.ndarray) -> LinkArrays:
    """Both directions of every edge (capacity in bytes/s per direction, latency in s)."""
    a, b = np.asarray(u, dtype=np.int64), np.asarray(v, dtype=np.int64)
    pairs = np.stack([np.stack([a, b], 1), np.stack([b, a], 1)], 1).reshape(-1, 2)
    keys = pairs[:, 0] * nodes + pairs[:, 1]
    order = np.argsort(keys, kind="stable")
    return LinkArrays(pairs[:, 0].copy(), pairs[:, 1].copy(),
                      np.repeat(np.asarray(capacity, dtype=float), 2),
                      np.repeat(np.asarray(latency_s, dtype=float), 2),
                      np.repeat(np.asarray(tier, dtype=np.int8), 2), keys[order], order)


def network_from_graph(g: nx.Graph, rail_optimized: bool = False,
                       reducing_tiers: frozenset[str] = frozenset()) -> Network:
    """Convert a topology graph into a :class:`Network` (CPU nodes and links dropped).

    ``reducing_tiers`` names the link tiers whose switches reduce in-network.
    """
    nodes = [v for v, d in g.nodes(data=True) if d.get("kind") != "cpu"]
    index = {v: i for i, v in enumerate(nodes)}
    n = len(nodes)
    kind = np.full(n, -1, dtype=np.int8)
    domain = np.full(n, -1, dtype=np.int64)
    rail = np.full(n, -1, dtype=np.int64)
    node_latency = np.zeros(n)
    node_tier = np.full(n, -1, dtype=np.int8)
    for v, i in index.items():
        d = g.nodes[v]
        kind[i] = kind_code(d.get("kind"))
        if kind[i] == SWITCH:
            node_tier[i] = SWITCH_TIER_CODES.get(d.get("tier"), -1)
        dom = d.get("domain")
        domain[i] = -1 if dom is None else int(dom)
        rail[i] = int(d.get("rail", -1) if d.get("rail") is not None else -1)
        node_latency[i] = float(d.get("latency_s") or 0.0) if kind[i] == SWITCH else 0.0
    us, vs, caps, lats, tiers = [], [], [], [], []
    for u, v, d in g.edges(data=True):
        iu, iv = index.get(u), index.get(v)
        if iu is None or iv is None:
            continue
        us.append(iu)
        vs.append(iv)
        caps.append(float(d.get("count", 1)) * float(d["bandwidth_bytes_per_s"]))
        lats.append(float(d.get("latency_s", 0.0)))
        tiers.append(TIER_CODES[d["tier"]])
    links = link_arrays(n, np.array(us, dtype=np.int64), np.array(vs, dtype=np.int64),
                        np.array(caps, dtype=float), np.array(lats, dtype=float),
                        np.array(tiers, dtype=np.int8))
    accs = _accelerators(g, index)
    acc_node = np.array([index[a] for a in accs], dtype=np.int64)
    host = np.array([g.nodes[a].get("host") if g.nodes[a].get("host") is not None else -1
                     for a in accs], dtype=np.int64)
    nic_link, acc_nic = _nic_assignment(g, index, accs, links.keys, links.order)
    return assemble(str(g.graph.get("name", "")), nodes, index, kind, domain, rail,
                    node_latency, node_tier, links, acc_node, host, nic_link, acc_nic,
                    rail_optimized, reducing_tiers)


def assemble(name: str, nodes: Sequence[Hashable], index: Mapping[Hashable, int],
             kind: np.ndarray, domain: np.ndarray, rail: np.ndarray,
             node_latency_s: np.ndarray, node_tier: np.ndarray, links: LinkArrays,
             acc_node: np.ndarray,
             acc_host: np.ndarray, nic_link: dict[int, int], acc_nic: np.ndarray,
             rail_optimized: bool, reducing_tiers: frozenset[str]) -> Network:
    """A :class:`Network` from node facts, :class:`LinkArrays` and accelerator facts
    (every link in service)."""
    return Network(
        name=name, nodes=nodes, kind=kind, domain=domain, rail=rail,
        node_latency_s=node_latency_s, tail=links.tail, head=links.head,
        capacity_bytes_per_s=links.capacity_bytes_per_s, latency_s=links.latency_s,
        tier=links.tier, up=np.ones(links.tail.size, dtype=bool), acc_node=acc_node,
        acc_domain=domain[acc_node], acc_host=acc_host, acc_nic=acc_nic, nic_link=nic_link,
        rail_optimized=rail_optimized, reducing_tiers=reducing_tiers, index=index,
        link_keys=links.keys, link_order=links.order, node_tier=node_tier,
    )


def _accelerators(g: nx.Graph, index: dict[Hashable, int]) -> list[Hashable]:
    """Accelerator nodes ordered by their global index (``("acc", i)``)."""
    accs: list[Any] = [v for v in index if g.nodes[v].get("kind") == "accelerator"]
    return sorted(accs, key=lambda v: v[1] if isinstance(v, tuple) else v)


def _nic_assignment(
    g: nx.Graph, index: dict[Hashable, int], accs: list[Hashable], link_keys: np.ndarray,
    link_order: np.ndarray,
) -> tuple[dict[int, int], np.ndarray]:
    """PCIe link of every NIC (owner -> NIC) and the NIC each accelerator sends through.

    An accelerator uses the NIC on its own PCIe link (the lowest rail if several); one
    without a NIC uses NIC ``local * nics // accelerators`` of its host, through that NIC's
    PCIe link (a shared PCIe switch).
    """
    nic_link: dict[int, int] = {}
    owned: dict[int, list[tuple[int, int]]] = {}
    by_host: dict[int, list[tuple[int, int]]] = {}
    for v, i in index.items():
        d = g.nodes[v]
        if d.get("kind") != "nic":
            continue
        by_host.setdefault(int(d["host"]), []).append((int(d.get("rail", 0)), i))
        for peer in g.neighbors(v):
            if g.nodes[peer].get("kind") == "accelerator":
                key = index[peer] * len(index) + i
                nic_link[i] = int(link_order[np.searchsorted(link_keys, key)])
                owned.setdefault(index[peer], []).append((int(d.get("rail", 0)), i))
    host_accs: dict[object, list[Hashable]] = {}
    for a in accs:
        host_accs.setdefault(g.nodes[a].get("host"), []).append(a)
    acc_nic = np.full(len(accs), -1, dtype=np.int64)
    for k, a in enumerate(accs):
        mine = owned.get(index[a])
        if mine:
            acc_nic[k] = min(mine)[1]
            continue
        host = g.nodes[a].get("host")
        nics = sorted(by_host.get(int(host), [])) if host is not None else []
        if nics:
            peers = host_accs[host]
            acc_nic[k] = nics[peers.index(a) * len(nics) // len(peers)][1]
    return nic_link, acc_nic

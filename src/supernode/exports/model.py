"""The named hierarchy every export writes: nodes, supernodes, port groups, pods, top.

Built from :class:`~supernode.topology.hierarchy.Hierarchy` (the placement simulator's
view, so exported and simulated topologies agree). Names (:mod:`supernode.exports.names`):

* node ``h``: ``<node prefix>-<h+1>`` zero-padded to the host count's width (≥ 3 digits);
  the prefix defaults to the host's model name (``dgx-h100-001``);
* supernode ``d``: ``<cluster>-sn<d+1>``; rack ``r``: ``<cluster>-rack<r+1>``;
* port group ``g``: ``<cluster>-lg<g+1>`` (its leaves are one switch to a scheduler: on a
  rail-optimised fabric the rail leaves of a group serve exactly the same hosts);
* pod ``p`` (three tiers): ``<cluster>-pod<p+1>``; the top of the fabric (the spine layer of
  two tiers, the core of three, taken as one): ``<cluster>-spine`` / ``<cluster>-core``;
* Slurm block ``b``: the supernode's name where blocks are supernodes, else
  ``<cluster>-block<b+1>``.

:meth:`ExportModel.levels` lists the locality levels from the coarsest to the node, keeping
only levels that nest (every value of a finer level lies inside one value of the coarser):
Kueue's ``Topology`` and Volcano's ``HyperNode`` tree need nesting.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from supernode.exports.names import hostname, slurm_name
from supernode.spec.resolved import Cluster
from supernode.topology.hierarchy import Hierarchy, build_hierarchy


@dataclass(frozen=True)
class Switch:
    """One switch of a Slurm tree: name, level (0 = leaf), nodes below, child switches."""

    name: str
    level: int
    nodes: tuple[str, ...]
    children: tuple[str, ...] = ()


@dataclass(frozen=True)
class Level:
    """One locality level: ``kind`` (``fabric``, ``domain``, ``sub-domain``, ``host``),
    ``tier`` (fabric tier, 0 nearest the node; -1 otherwise) and each node's value."""

    kind: str
    tier: int
    values: tuple[str, ...]


@dataclass
class ExportModel:
    """Names for every host and grouping of one cluster (see the module doc)."""

    cluster: Cluster
    hierarchy: Hierarchy
    nodes: tuple[str, ...]
    domains: tuple[str, ...]
    groups: tuple[str, ...]
    pods: tuple[str, ...]
    top: str | None
    racks: tuple[str, ...]
    notes: list[str] = field(default_factory=list)

    @property
    def prefix(self) -> str:
        """The cluster part of switch names."""
        return slurm_name(self.cluster.name)

    def domain_of_node(self) -> tuple[str, ...]:
        """Each node's supernode name."""
        return tuple(self.domains[d] for d in self.hierarchy.host_domain)

    def tree(self) -> list[Switch]:
        """The Slurm ``topology/tree`` switches, leaves first."""
        h = self.hierarchy
        if h.fabric_tiers == 0:
            return [Switch(self.domains[d], 0, self._hosts(h.host_domain, d))
                    for d in range(h.domains)]
        leaves = [Switch(self.groups[g], 0, self._hosts(h.host_group, g))
                  for g in range(h.groups)]
        if h.fabric_tiers == 1:
            return leaves
        top = self.top
        assert top is not None  # a fabric of two or more tiers has a top (export_model)
        if h.fabric_tiers == 2:
            return [*leaves, Switch(top, 1, (), tuple(self.groups))]
        pods = [Switch(self.pods[p], 1, (),
                       tuple(self.groups[g] for g in np.flatnonzero(h.group_pod == p)))
                for p in range(h.pods)]
        return [*leaves, *pods, Switch(top, 2, (), tuple(self.pods))]

    def blocks(self) -> tuple[list[tuple[str, tuple[str, ...]]], list[int]]:
        """Slurm ``topology/block`` blocks (name, nodes) and ``BlockSizes``: the smallest
        block's node count, doubled while the blocks hold that many (topology.conf(5):
        every block holds at least the base size; each size is a power of two times the
        previous)."""
        h = self.hierarchy
        names = (self.domains if h.block_kind == "domain" else
                 tuple(slurm_name(self.prefix, f"-block{b + 1:0{_width(h.blocks)}d}")
                       for b in range(h.blocks)))
        blocks = [(names[b], self._hosts(h.host_block, b)) for b in range(h.blocks)]
        base = min(len(nodes) for _, nodes in blocks)
        sizes, k = [base], 1
        while 2**k <= h.blocks:
            sizes.append(base * 2**k)
            k += 1
        return blocks, sizes

    def fabric_levels(self) -> list[Level]:
        """Fabric tiers nearest the node first: port group, pod, top (those present)."""
        h = self.hierarchy
        if h.fabric_tiers == 0:
            return []
        out = [Level("fabric", 0, tuple(self.groups[g] for g in h.host_group))]
        if h.fabric_tiers == 3:
            pods = h.group_pod[h.host_group]
            out.append(Level("fabric", 1, tuple(self.pods[p] for p in pods)))
        if h.fabric_tiers >= 2:
            top = self.top
            assert top is not None  # a fabric of two or more tiers has a top (export_model)
            out.append(Level("fabric", len(out), tuple(top for _ in self.nodes)))
        return out

    def domain_levels(self) -> list[Level]:
        """The supernode (when it spans two or more hosts) and, when a supernode spans
        several racks, the rack as sub-domain."""
        h = self.hierarchy
        if h.domain_size < 2 * h.gpus_per_host:
            return []
        out = [Level("domain", -1, self.domain_of_node())]
        if h.host_rack is not None and _spans(h.host_domain, h.host_rack):
            out.append(Level("sub-domain", -1, tuple(self.racks[r] for r in h.host_rack)))
        return out

    def levels(self) -> list[Level]:
        """Nested locality levels from the coarsest to the node (see the module doc)."""
        fabric = list(reversed(self.fabric_levels()))
        inner = self.domain_levels()
        chain = [*fabric, *inner, Level("host", -1, self.nodes)]
        kept: list[Level] = []
        for i, level in enumerate(chain):
            finer = chain[i + 1:]
            if level.kind == "fabric" and not all(_nested(level.values, f.values)
                                                  for f in finer):
                self.notes.append(f"fabric tier {level.tier} does not nest the supernodes "
                                  "(a supernode spans two of its switches): left out of the "
                                  "Kueue and Volcano levels")
                continue
            kept.append(level)
        return kept

    def _hosts(self, labels: np.ndarray, value: int) -> tuple[str, ...]:
        return tuple(self.nodes[i] for i in np.flatnonzero(labels == value))


def _width(count: int) -> int:
    return max(2, len(str(count)))


def _nested(coarse: tuple[str, ...], fine: tuple[str, ...]) -> bool:
    """True when every value of ``fine`` lies inside one value of ``coarse``."""
    parent: dict[str, str] = {}
    return all(parent.setdefault(f, c) == c for c, f in zip(coarse, fine, strict=True))


def _spans(domain: np.ndarray, rack: np.ndarray) -> bool:
    """True when some domain holds hosts of two or more racks."""
    return any(len(np.unique(rack[domain == d])) > 1 for d in np.unique(domain))


def export_model(cluster: Cluster, node_prefix: str | None = None) -> ExportModel:
    """Name every host and grouping of ``cluster``; ``node_prefix`` replaces the host model
    name in node names (sanitised; a note says when it changed)."""
    h = build_hierarchy(cluster)
    notes: list[str] = []
    raw = node_prefix if node_prefix is not None else cluster.host.name
    stem = hostname(raw)
    if node_prefix is not None and stem != node_prefix:
        notes.append(f"node prefix {node_prefix!r} sanitised to {stem!r} (DNS-1123 label)")
    digits = max(3, len(str(h.hosts)))
    nodes = tuple(hostname(stem, f"-{i + 1:0{digits}d}") for i in range(h.hosts))
    prefix = slurm_name(cluster.name)
    domains = tuple(slurm_name(prefix, f"-sn{d + 1:0{_width(h.domains)}d}")
                    for d in range(h.domains))
    groups = tuple(slurm_name(prefix, f"-lg{g + 1:0{_width(h.groups)}d}")
                   for g in range(h.groups))
    pods = tuple(slurm_name(prefix, f"-pod{p + 1:0{_width(h.pods)}d}")
                 for p in range(h.pods)) if h.fabric_tiers == 3 else ()
    top = slurm_name(prefix, "-core" if h.fabric_tiers == 3 else "-spine") \
        if h.fabric_tiers >= 2 else None
    racks: tuple[str, ...] = ()
    if h.host_rack is not None:
        count = int(h.host_rack.max()) + 1
        racks = tuple(slurm_name(prefix, f"-rack{r + 1:0{_width(count)}d}") for r in range(count))
    return ExportModel(cluster, h, nodes, domains, groups, pods, top, racks, notes)

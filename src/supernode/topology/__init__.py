"""Topology builders, closed-form metrics and graph checks of supernode clusters.

Builders (pure functions returning :class:`networkx.Graph`; conventions in
:mod:`supernode.topology.graph`): :func:`full_mesh`, :func:`nvswitch_domain`,
:func:`switched_two_tier`, :func:`torus`, :func:`mesh`, :func:`hybrid`, :func:`fat_tree`
and :func:`build_cluster_graph`. Metrics: :func:`topology_report` (closed forms only).
Checks on built graphs: :mod:`supernode.topology.verify`. Scale-up kinds are registered
in :data:`SCALE_UP_KINDS`.
"""

from supernode.topology.cluster_graph import build_cluster_graph
from supernode.topology.fat_tree import fat_tree, fat_tree_layout
from supernode.topology.graph import LinkType, Place, SwitchType
from supernode.topology.hybrid import hybrid
from supernode.topology.kinds import SCALE_UP_KINDS, ScaleUpKind
from supernode.topology.metrics import TopologyReport, topology_report
from supernode.topology.scale_up import (
    full_mesh,
    mesh,
    nvswitch_domain,
    switched_two_tier,
    torus,
)
from supernode.topology.sizing import FatTreeSizing, RadixError, size_fat_tree

__all__ = [
    "SCALE_UP_KINDS",
    "FatTreeSizing",
    "LinkType",
    "Place",
    "RadixError",
    "ScaleUpKind",
    "SwitchType",
    "TopologyReport",
    "build_cluster_graph",
    "fat_tree",
    "fat_tree_layout",
    "full_mesh",
    "hybrid",
    "mesh",
    "nvswitch_domain",
    "size_fat_tree",
    "switched_two_tier",
    "topology_report",
    "torus",
]

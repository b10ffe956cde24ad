"""Topology builders, closed-form metrics and graph checks of supernode clusters.

Builders (pure functions returning :class:`networkx.Graph`; conventions in
:mod:`supernode.topology.graph`): :func:`full_mesh`, :func:`nvswitch_domain`,
:func:`switched_two_tier`, :func:`torus`, :func:`mesh` and :func:`build_cluster_graph`
here; ``fat_tree`` and ``hybrid`` share their modules' names, so they are imported from
those modules (``from supernode.topology.fat_tree import fat_tree``): a package-level name
would have to be imported with the package, and every cluster check (which needs only the
fat-tree sizing) would pay for the graph builders. Metrics: :func:`topology_report`
(closed forms only). Checks on built graphs: :mod:`supernode.topology.verify`. Scale-up
kinds are registered in :data:`SCALE_UP_KINDS`.
"""

from supernode.lazy import lazy_names

#: Where each other public name lives, imported when first asked for (a cluster check
#: needs the fat-tree sizing, not the graph builders and metrics).
_HOMES = {
    "build_cluster_graph": "cluster_graph", "fat_tree_layout": "fat_tree",
    "LinkType": "graph", "Place": "graph", "SwitchType": "graph",
    "SCALE_UP_KINDS": "kinds", "ScaleUpKind": "kinds",
    "TopologyReport": "metrics", "topology_report": "metrics",
    "full_mesh": "scale_up", "mesh": "scale_up", "nvswitch_domain": "scale_up",
    "switched_two_tier": "scale_up", "torus": "scale_up",
    "FatTreeSizing": "sizing", "RadixError": "sizing", "size_fat_tree": "sizing",
}
__getattr__ = lazy_names(__name__, globals(), _HOMES)

__all__ = [*_HOMES]

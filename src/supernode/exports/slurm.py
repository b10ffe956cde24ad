"""Slurm topology files: ``topology.conf`` (tree or block) and ``topology.yaml``.

Formats from topology.conf(5) and topology.yaml(5) (Slurm 25.05+ for the YAML):

* tree: one line per switch, ``SwitchName=<name> Nodes=<hostlist>`` for leaf switches and
  ``SwitchName=<name> Switches=<hostlist of switches>`` above (names ≤ 64 characters);
* block: ``BlockName=<name> Nodes=<hostlist>`` per block, then ``BlockSizes=<base>,...``
  where every block holds at least the base count of nodes and each size is a power of two
  times the previous;
* YAML: a list of topologies ``{topology, cluster_default, tree: {switches: [{switch,
  nodes | children}]}}`` and ``{topology, cluster_default, block: {block_sizes, blocks:
  [{block, nodes}]}}``; partitions pick one with ``Topology=<name>``.

What the switches are is :meth:`supernode.exports.model.ExportModel.tree`.
"""

from __future__ import annotations

from supernode.exports.hostlist import compress
from supernode.exports.model import ExportModel
from supernode.spec.documents import dump_yaml
from supernode.textsafe import comment_safe as comment

#: Names of the two topologies in ``topology.yaml``.
YAML_TREE, YAML_BLOCK = "fabric-tree", "supernode-block"


def _header(model: ExportModel, plugin: str) -> list[str]:
    h = model.hierarchy
    return [f"# topology.conf for TopologyPlugin=topology/{plugin}, cluster "
            f"{comment(model.cluster.name)}: written by `supernode export`",
            f"# {h.hosts} nodes, {h.domains} supernodes of {h.domain_size} accelerators, "
            f"{h.groups} port groups, {h.fabric_tiers} fabric tier(s)"]


def topology_conf_tree(model: ExportModel) -> str:
    """``topology.conf`` for ``topology/tree``: leaf-level switches are port groups."""
    lines = _header(model, "tree")
    if model.hierarchy.fabric_tiers:
        lines.append("# leaf-level switches are port groups: the rail leaves of one group "
                     "serve the same hosts")
    for group, leaves in zip(model.groups, model.hierarchy.group_leaves, strict=True):
        if leaves and model.hierarchy.fabric_tiers:
            lines.append(f"# {group}: fabric leaves {_span(leaves)}")
    for sw in model.tree():
        members = (f"Nodes={compress(sw.nodes)}" if sw.nodes else
                   f"Switches={compress(sw.children)}")
        lines.append(f"SwitchName={sw.name} {members}")
    return "\n".join(lines) + "\n"


def topology_conf_block(model: ExportModel) -> str:
    """``topology.conf`` for ``topology/block``: one block per supernode (or port group
    where a supernode is one host), then ``BlockSizes``."""
    blocks, sizes = model.blocks()
    lines = _header(model, "block")
    kind = model.hierarchy.block_kind
    lines.append(f"# blocks are {'supernodes' if kind == 'domain' else 'port groups'}; "
                 f"jobs: sbatch -N <n> --segment=<nodes per block> --exclusive=topo")
    for name, nodes in blocks:
        lines.append(f"BlockName={name} Nodes={compress(nodes)}")
    lines.append(f"BlockSizes={','.join(str(s) for s in sizes)}")
    return "\n".join(lines) + "\n"


def topology_yaml(model: ExportModel) -> str:
    """``topology.yaml`` with the tree (cluster default) and the block topology."""
    switches = []
    for sw in model.tree():
        entry = {"switch": sw.name}
        if sw.nodes:
            entry["nodes"] = compress(sw.nodes)
        else:
            entry["children"] = compress(sw.children)
        switches.append(entry)
    blocks, sizes = model.blocks()
    doc = [
        {"topology": YAML_TREE, "cluster_default": True, "tree": {"switches": switches}},
        {"topology": YAML_BLOCK, "cluster_default": False,
         "block": {"block_sizes": sizes,
                   "blocks": [{"block": name, "nodes": compress(nodes)}
                              for name, nodes in blocks]}},
    ]
    head = (f"# topology.yaml (Slurm >= 25.05) for {comment(model.cluster.name)}: written by "
            f"`supernode export`; partitions pick Topology={YAML_TREE} or {YAML_BLOCK}\n")
    return head + dump_yaml(doc)


def _span(leaves: tuple[int, ...]) -> str:
    return f"{leaves[0]}-{leaves[-1]}" if len(leaves) > 1 else str(leaves[0])

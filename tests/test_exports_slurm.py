"""Slurm exports against the rules of topology.conf(5) and topology.yaml(5), and goldens."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from supernode.cluster.load import load_cluster_spec
from supernode.cluster.scaling import scale_cluster
from supernode.exports import export_files
from supernode.exports.hostlist import compress, expand

GOLDEN = Path(__file__).parent / "data" / "exports"
CLUSTERS = [("gb200-nvl72-superpod", None), ("dgx-h100-superpod-su", None),
            ("dgx-h100-superpod-su", 4096), ("hgx-h100", None), ("gb200-nvl72", None),
            ("tpu-v4-pod", None)]
NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")


def _export(preset, gpus, formats):
    return export_files(scale_cluster(load_cluster_spec(preset), gpus).cluster, formats)


def parse_conf(text: str) -> list[dict[str, str]]:
    """``key=value`` records of a topology.conf, comments dropped."""
    out = []
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            out.append(dict(part.split("=", 1) for part in line.split()))
    return out


@pytest.mark.parametrize("preset, gpus", CLUSTERS)
def test_tree_is_a_tree_over_every_node(preset, gpus):
    result = _export(preset, gpus, ["slurm-tree"])
    records = parse_conf(result.files["slurm-tree"]["topology.conf"])
    names = [r["SwitchName"] for r in records]
    assert len(set(names)) == len(names) and all(NAME.match(n) for n in names)
    leaves = [r for r in records if "Nodes" in r]
    listed = [n for r in leaves for n in expand(r["Nodes"])]
    assert sorted(listed) == sorted(result.model.nodes)          # each node under one leaf
    parents: dict[str, int] = {}
    for r in records:
        assert ("Nodes" in r) != ("Switches" in r)
        for child in expand(r.get("Switches", "")):
            assert child in names
            parents[child] = parents.get(child, 0) + 1
    assert all(count == 1 for count in parents.values())          # one parent each
    roots = [n for n in names if n not in parents]
    assert len(roots) == (1 if result.model.hierarchy.fabric_tiers >= 1 else
                          result.model.hierarchy.domains)


@pytest.mark.parametrize("preset, gpus", CLUSTERS)
def test_block_rules_of_the_man_page(preset, gpus):
    """BlockSizes: a power of two times the previous; every block ≥ the base size; blocks
    partition the nodes; NVL72 blocks are the racks' 18 trays."""
    result = _export(preset, gpus, ["slurm-block"])
    records = parse_conf(result.files["slurm-block"]["topology.conf"])
    sizes = [int(s) for s in records[-1]["BlockSizes"].split(",")]
    blocks = {r["BlockName"]: expand(r["Nodes"]) for r in records[:-1]}
    assert all(NAME.match(b) for b in blocks)
    for a, b in zip(sizes, sizes[1:], strict=False):
        ratio = b / a
        assert ratio == int(ratio) and int(ratio) & (int(ratio) - 1) == 0 and ratio >= 2
    assert all(len(nodes) >= sizes[0] for nodes in blocks.values())
    assert sorted(n for ns in blocks.values() for n in ns) == sorted(result.model.nodes)
    if preset == "gb200-nvl72-superpod":
        assert sizes == [18, 36, 72, 144] and all(len(n) == 18 for n in blocks.values())


@pytest.mark.parametrize("preset, gpus", CLUSTERS[:3])
def test_topology_yaml_rules_and_agreement_with_conf(preset, gpus):
    result = _export(preset, gpus, ["slurm-tree", "slurm-yaml"])
    doc = yaml.safe_load(result.files["slurm-yaml"]["topology.yaml"])
    assert isinstance(doc, list) and [d["topology"] for d in doc] == ["fabric-tree",
                                                                     "supernode-block"]
    for entry in doc:
        assert next(iter(entry)) == "topology"                   # must be the first attribute
        assert sum(k in entry for k in ("tree", "block", "flat")) == 1
        assert isinstance(entry["cluster_default"], bool)
    assert [d["cluster_default"] for d in doc].count(True) == 1
    conf = parse_conf(result.files["slurm-tree"]["topology.conf"])
    tree = doc[0]["tree"]["switches"]
    assert [s["switch"] for s in tree] == [r["SwitchName"] for r in conf]
    for s, r in zip(tree, conf, strict=True):
        assert len(s["switch"]) <= 64 and ("nodes" in s) != ("children" in s)
        assert expand(s.get("nodes", s.get("children"))) == expand(r.get("Nodes",
                                                                            r.get("Switches")))
    block = doc[1]["block"]
    blocks = parse_conf(_export(preset, gpus, ["slurm-block"])
                        .files["slurm-block"]["topology.conf"])
    assert block["block_sizes"] == [int(x) for x in blocks[-1]["BlockSizes"].split(",")]


@pytest.mark.parametrize("fmt, name", [("slurm-tree", "topology-tree.conf"),
                                       ("slurm-block", "topology-block.conf"),
                                       ("slurm-yaml", "topology.yaml")])
def test_golden_gb200_superpod(fmt, name):
    result = _export("gb200-nvl72-superpod", None, [fmt])
    text = next(iter(result.files[fmt].values()))
    assert text == (GOLDEN / "gb200-nvl72-superpod" / name).read_text()


@given(st.lists(st.tuples(st.sampled_from(["gpu", "n-", "rack7-x"]), st.integers(0, 300),
                          st.sampled_from([1, 3, 4])), min_size=1, max_size=60))
def test_hostlist_round_trip(parts):
    names = list(dict.fromkeys(f"{p}{n:0{w}d}" for p, n, w in parts))
    assert sorted(expand(compress(names))) == sorted(names)


def test_hostlist_compresses_runs():
    assert compress([f"dgx-{i:03d}" for i in range(1, 33)]) == "dgx-[001-032]"
    assert compress(["a1", "a2", "a4", "b", "a10"]) == "a[1-2,4],b,a10"   # widths differ
    assert expand("gb-r01-n[01-03],sw") == ["gb-r01-n01", "gb-r01-n02", "gb-r01-n03", "sw"]

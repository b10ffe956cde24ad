"""Kubernetes exports validated against CRD schemas written from upstream (tests/data/k8s),
the CRDs' CEL rules, and the Kubernetes label rules."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from supernode.cluster.load import load_cluster_spec
from supernode.cluster.scaling import scale_cluster
from supernode.errors import InputError
from supernode.exports import ExportOptions, export_files
from supernode.exports.names import (
    DNS_LABEL,
    LABEL_VALUE,
    file_name,
    hostname,
    is_label_key,
    label_value,
    object_name,
    slurm_name,
)

SCHEMAS = Path(__file__).parent / "data" / "k8s"
CLUSTERS = [("gb200-nvl72-superpod", None), ("dgx-h100-superpod-su", 4096),
            ("hgx-h100", None), ("cloudmatrix384", None), ("gb200-nvl72", None)]


def _schema(name: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(json.loads((SCHEMAS / name).read_text()))


TOPOLOGY = _schema("kueue-topology-v1beta2.schema.json")
FLAVOR = _schema("kueue-resourceflavor-v1beta2.schema.json")
HYPERNODE = _schema("volcano-hypernode-v1alpha1.schema.json")
NODE = _schema("node-labels-v1.schema.json")


def _export(preset, gpus, options=None):
    cluster = scale_cluster(load_cluster_spec(preset), gpus).cluster
    return export_files(cluster, ["k8s-labels", "kueue", "volcano"], options)


def _docs(text: str) -> list[dict]:
    return [d for d in yaml.safe_load_all(text) if d]


def _label_ok(key: str, value: str) -> bool:
    return is_label_key(key) and len(value) <= 63 and bool(LABEL_VALUE.match(value))


@pytest.mark.parametrize("preset, gpus", CLUSTERS)
def test_kueue_objects_match_their_crds(preset, gpus):
    result = _export(preset, gpus)
    topology, flavor = _docs(result.files["kueue"]["kueue-topology.yaml"])
    TOPOLOGY.validate(topology)
    FLAVOR.validate(flavor)
    levels = [lv["nodeLabel"] for lv in topology["spec"]["levels"]]
    assert len(set(levels)) == len(levels)                         # CEL: must be unique
    assert levels[-1] == "kubernetes.io/hostname"                  # CEL: hostname lowest
    assert flavor["spec"]["topologyName"] == topology["metadata"]["name"]
    assert len(flavor["spec"]["nodeLabels"]) >= 1                  # CEL: needed with topology
    nodes = yaml.safe_load(result.files["k8s-labels"]["node-labels.yaml"])["items"]
    for node in nodes:                                            # the flavor selects them all
        labels = node["metadata"]["labels"]
        assert flavor["spec"]["nodeLabels"].items() <= labels.items()
        assert all(k in labels for k in levels[:-1])


@pytest.mark.parametrize("preset, gpus", CLUSTERS)
def test_node_labels_are_valid_and_nested(preset, gpus):
    result = _export(preset, gpus)
    nodes = yaml.safe_load(result.files["k8s-labels"]["node-labels.yaml"])["items"]
    assert [n["metadata"]["name"] for n in nodes] == list(result.model.nodes)
    for node in nodes:
        NODE.validate(node)
        assert DNS_LABEL.match(node["metadata"]["name"])
        assert all(_label_ok(k, v) for k, v in node["metadata"]["labels"].items())
    script = result.files["k8s-labels"]["label-nodes.sh"]
    assert script.count("kubectl label node ") == len(nodes)


@pytest.mark.parametrize("preset, gpus", CLUSTERS)
def test_volcano_hypernodes_form_a_tree_over_the_nodes(preset, gpus):
    result = _export(preset, gpus)
    objects = _docs(result.files["volcano"]["volcano-hypernodes.yaml"])
    by_name = {}
    for obj in objects:
        HYPERNODE.validate(obj)
        by_name[obj["metadata"]["name"]] = obj
        for m in obj["spec"]["members"]:
            assert len(m["selector"]) == 1                             # CEL: exactly one
            assert "labelMatch" not in m["selector"] or m["type"] == "Node"
    assert len(by_name) == len(objects)
    if not objects:
        assert result.model.hierarchy.hosts == 1
        return
    parent: dict[tuple[str, str], str] = {}
    for obj in objects:
        for m in obj["spec"]["members"]:
            key = (m["type"], m["selector"]["exactMatch"]["name"])
            assert key not in parent                                   # one parent each
            parent[key] = obj["metadata"]["name"]
            if m["type"] == "HyperNode":
                assert by_name[key[1]]["spec"]["tier"] == obj["spec"]["tier"] - 1
            else:
                assert obj["spec"]["tier"] == 1
    assert {name for kind, name in parent if kind == "Node"} == set(result.model.nodes)
    roots = [n for n in by_name if ("HyperNode", n) not in parent]
    assert len(roots) >= 1


def test_nvl72_superpod_levels_keep_the_rack_and_drop_the_straddling_leaf_tier():
    result = _export("gb200-nvl72-superpod", None)
    topology, _ = _docs(result.files["kueue"]["kueue-topology.yaml"])
    assert [lv["nodeLabel"] for lv in topology["spec"]["levels"]] == [
        "fabric.topograph.run/tier-1", "accelerator.topograph.run/domain",
        "kubernetes.io/hostname"]
    assert any("does not nest" in n for n in result.notes)
    nodes = yaml.safe_load(result.files["k8s-labels"]["node-labels.yaml"])["items"]
    first = nodes[0]["metadata"]["labels"]
    assert first["fabric.topograph.run/tier-0"].endswith("-lg01")
    assert first["accelerator.topograph.run/domain"].endswith("-sn01")


def test_legacy_and_custom_label_keys():
    legacy = _export("dgx-h100-superpod-su", 4096, ExportOptions(labels="nvidia-legacy"))
    labels = yaml.safe_load(legacy.files["k8s-labels"]["node-labels.yaml"])["items"][0]
    assert set(labels["metadata"]["labels"]) == {
        "network.topology.nvidia.com/leaf", "network.topology.nvidia.com/spine",
        "network.topology.nvidia.com/core", "supernode-cluster"}
    custom = _export("gb200-nvl72-superpod", None, ExportOptions(
        fabric_labels=("example.com/rack-switch",), accelerator_label="example.com/nvl",
        flavor_label="pool=gb200"))
    labels = yaml.safe_load(custom.files["k8s-labels"]["node-labels.yaml"])["items"][0]
    assert set(labels["metadata"]["labels"]) == {"example.com/rack-switch", "example.com/nvl",
                                                 "pool"}
    for bad in (ExportOptions(fabric_labels=("Bad Key",)), ExportOptions(labels="nope"),
                ExportOptions(flavor_label="novalue"), ExportOptions(flavor_label="k=a b")):
        with pytest.raises(InputError):
            _export("gb200-nvl72-superpod", None, bad)


TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=90)


@settings(max_examples=60)
@given(text=TEXT, number=st.integers(0, 99999))
def test_every_sanitiser_yields_a_valid_name(text, number):
    suffix = f"-{number:05d}"
    host = hostname(text, suffix)
    assert DNS_LABEL.match(host) and len(host) <= 63 and host.endswith(suffix)
    switch = slurm_name(text, suffix)
    assert len(switch) <= 64 and all(c.isalnum() or c in "_.-" for c in switch)
    assert "[" not in switch and "," not in switch and switch.endswith(suffix)
    value = label_value(text)
    assert len(value) <= 63 and LABEL_VALUE.match(value)
    obj = object_name(text)
    assert len(obj) <= 253 and obj
    name = file_name(text)
    assert "/" not in name and "\\" not in name and not name.startswith((".", "-")) and name


@settings(max_examples=20)
@given(cluster=TEXT.filter(lambda s: s.strip()), prefix=TEXT)
def test_hostile_cluster_names_and_prefixes_still_export_valid_objects(cluster, prefix):
    spec = load_cluster_spec("gb200-nvl72").model_copy(update={"name": cluster})
    result = export_files(scale_cluster(spec).cluster, ["k8s-labels", "kueue", "volcano",
                                                        "slurm-tree", "nccl-xml"],
                          ExportOptions(node_prefix=prefix))
    for node in yaml.safe_load(result.files["k8s-labels"]["node-labels.yaml"])["items"]:
        NODE.validate(node)
    for obj in _docs(result.files["kueue"]["kueue-topology.yaml"]):
        (TOPOLOGY if obj["kind"] == "Topology" else FLAVOR).validate(obj)
    for obj in _docs(result.files["volcano"]["volcano-hypernodes.yaml"]):
        HYPERNODE.validate(obj)
    conf = result.files["slurm-tree"]["topology.conf"]
    assert all(line.startswith(("#", "SwitchName=")) for line in conf.splitlines())
    assert conf.count("\n") == len(conf.splitlines())
    assert len(set(result.model.nodes)) == len(result.model.nodes)
    assert all("/" not in f for files in result.files.values() for f in files)

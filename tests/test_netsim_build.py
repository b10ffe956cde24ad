"""The array-built network against the converted networkx graph: identical arrays, names,
indices and NIC tables on every preset, example and a property-generated family."""

from __future__ import annotations

from pathlib import Path

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from supernode.catalog import cluster_presets
from supernode.cluster.load import load_cluster
from supernode.cluster.resolve import resolve_cluster
from supernode.netsim.build import _describe, domain_template, network_arrays, network_from_cluster
from supernode.netsim.network import Network
from supernode.netsim.node_names import NodeTable
from supernode.spec.cluster import ClusterSpec
from supernode.spec.loader import validate_document

ROOT = Path(__file__).resolve().parents[1]
ARRAYS = ("kind", "node_tier", "domain", "rail", "node_latency_s", "tail", "head",
          "capacity_bytes_per_s", "latency_s", "tier", "up", "acc_node", "acc_domain",
          "acc_host", "acc_nic", "link_keys", "link_order")
EXAMPLES = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "examples").rglob("*.yaml")
                  if "supernodes:" in p.read_text())


def assert_same_network(a: Network, b: Network) -> None:
    """Every field of two networks equal, arrays bit for bit with the same dtypes."""
    for name in ARRAYS:
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype, name
        assert np.array_equal(x, y), name
    assert list(a.nodes) == list(b.nodes)
    assert dict(a.index) == dict(b.index)
    assert a.nic_link == b.nic_link
    assert (a.name, a.rail_optimized, a.reducing_tiers) == (b.name, b.rail_optimized,
                                                           b.reducing_tiers)


def both(cluster) -> tuple[Network, Network]:
    arrays = network_arrays(cluster)
    assert arrays is not None
    return arrays, network_from_cluster(cluster, via_graph=True)


@pytest.mark.parametrize("name", sorted(cluster_presets()))
def test_presets_build_the_same_network_as_the_graph(name: str) -> None:
    assert_same_network(*both(load_cluster(name)))


@pytest.mark.parametrize("path", EXAMPLES)
def test_examples_build_the_same_network_as_the_graph(path: str) -> None:
    assert_same_network(*both(load_cluster(ROOT / path)))


def _cluster(supernodes, size, per_host, nics, kind, tiers, rail, over, chips):
    up = {"kind": kind, "size": size}
    if kind == "nvswitch":
        up |= {"switch": "nvsw", "switch_chips": chips, "links_per_accelerator": 4,
               "link_bandwidth_gbyte_per_s": 100}
    elif kind in ("torus", "mesh"):
        up |= {"dims": [size // 2, 2], "link_bandwidth_gbyte_per_s": 50}
    elif kind == "full_mesh":
        up |= {"link_bandwidth_gbyte_per_s": 50}
    doc = {
        "name": "prop", "supernodes": supernodes,
        "switches": [{"name": "sw", "radix_ports": 16, "port_speed_gbit_per_s": 400,
                      "latency_ns": 100},
                     {"name": "nvsw", "radix_ports": 64, "port_speed_gbit_per_s": 800,
                      "latency_ns": 50}],
        "host": {"accelerator": "h100-sxm-80gb", "accelerators_per_host": per_host,
                 "nics": {"count": nics, "speed_gbit_per_s": 400, "latency_ns": 500}},
        "scale_up": up,
        "scale_out": {"tiers": tiers, "switch": "sw", "rail_optimized": rail,
                      "oversubscription": [over]},
    }
    if nics == 0:
        del doc["host"]["nics"], doc["scale_out"]
    return resolve_cluster(validate_document(doc, ClusterSpec))


@settings(max_examples=40)
@given(st.integers(1, 12), st.sampled_from([1, 2, 4, 6]), st.sampled_from([1, 2, 4, 8]),
       st.sampled_from([0, 1, 2, 4, 8]), st.sampled_from(["nvswitch", "torus", "full_mesh"]),
       st.sampled_from([2, 3]), st.booleans(), st.sampled_from([1.0, 2.0]),
       st.sampled_from([2, 4, 8]))
def test_generated_clusters_build_the_same_network(supernodes, size, per_host, nics, kind,
                                                    tiers, rail, over, chips) -> None:
    if kind == "torus" and size < 4:
        kind = "full_mesh"
    if size == 1:
        kind = "none"
    try:
        cluster = _cluster(supernodes, size, per_host, nics, kind, tiers, rail, over, chips)
        expected = network_from_cluster(cluster, via_graph=True)
    except Exception as exc:  # the design itself is refused: both builds must refuse it
        with pytest.raises(type(exc)):
            network_arrays(_cluster(supernodes, size, per_host, nics, kind, tiers, rail,
                                    over, chips))
        return
    got = network_arrays(cluster)
    assert got is not None
    assert_same_network(got, expected)


def test_a_domain_that_is_not_a_translation_has_no_template() -> None:
    g = nx.Graph()
    g.add_node(("acc", 0), kind="accelerator")
    g.add_node("switch-without-domain", kind="switch")
    assert _describe(g, 1, 0) is None
    g = nx.Graph()
    g.add_node(("acc", 1), kind="accelerator")  # domain 0 must start at accelerator 0
    assert _describe(g, 1, 0) is None
    assert domain_template(load_cluster("dgx-h100-superpod-su")) is not None


def test_node_table_answers_like_a_tuple_and_a_dict() -> None:
    table = NodeTable(["acc", "leaf", "scale_up_l1"], [0, 1, 2, 0], [0, 3, 7, 1], [-1, -1, 2, -1])
    assert list(table) == [("acc", 0), ("leaf", 3), ("scale_up_l1", 7, 2), ("acc", 1)]
    assert table[-1] == ("acc", 1) and table[1:3] == [("leaf", 3), ("scale_up_l1", 7, 2)]
    index = table.index
    assert index[("scale_up_l1", 7, 2)] == 2 and index[("acc", 1)] == 3
    for missing in (("acc", 2), ("leaf", 3, 0), ("spine", 0), "acc", ("acc", True),
                    ("acc", -1), ("acc", "0"), (1, 2)):
        assert missing not in index
    with pytest.raises(KeyError):
        index[("leaf", 4)]
    with pytest.raises(IndexError):
        table[4]
    assert dict(index.items()) == {v: i for i, v in enumerate(table)}
    assert len(index) == 4

"""The closed-form report against counts and walks on the built cluster graph (differential)."""

from __future__ import annotations

import json
from collections import Counter

import networkx
import pytest
from work import counting_lines

from supernode.catalog import cluster_presets
from supernode.cluster.load import load_cluster
from supernode.cluster.resolve import resolve_cluster
from supernode.spec.cluster import ClusterSpec
from supernode.spec.loader import validate_document
from supernode.topology import build_cluster_graph, topology_report
from supernode.topology.verify import accelerator_hops, graph_counts, server_hops

CHIP = {
    "name": "chip", "peak_dense_tflops": {"bf16": 100}, "memory_gbyte": 64,
    "memory_bandwidth_tbyte_per_s": 1.0, "scale_up_ports": 8,
    "scale_up_port_bandwidth_gbyte_per_s": 50,
}
SWITCH = {"name": "sw16", "radix_ports": 16, "port_speed_gbit_per_s": 400}


def _cluster(scale_up: dict, supernodes: int = 1, per_host: int = 4, scale_out=None,
             nics: int = 4):
    doc = {
        "name": "synthetic", "accelerators": [CHIP], "switches": [SWITCH],
        "host": {"accelerator": "chip", "accelerators_per_host": per_host,
                 "nics": {"count": nics, "speed_gbit_per_s": 400},
                 "cpus": [{"model": "x86", "count": 2}]},
        "scale_up": scale_up, "supernodes": supernodes,
    }
    if scale_out:
        doc["scale_out"] = scale_out
    return resolve_cluster(validate_document(doc, ClusterSpec))


SYNTHETIC = {
    "full_mesh": lambda: _cluster({"kind": "full_mesh", "size": 8, "links_per_accelerator": 7}),
    "nvswitch_3tier": lambda: _cluster(
        {"kind": "nvswitch", "size": 8, "switch": "sw16", "switch_chips": 4},
        supernodes=16, scale_out={"tiers": 3, "switch": "sw16", "medium": "mixed"}),
    "two_tier_up": lambda: _cluster(
        {"kind": "nvswitch", "size": 32, "switch": "sw16", "switch_chips": 2,
         "switch_tiers": 2, "group_size": 4, "links_per_accelerator": 2, "medium": "optical"}),
    "torus_mixed": lambda: _cluster(
        {"kind": "torus", "size": 64, "dims": [4, 4, 4], "links_per_accelerator": 6,
         "medium": "optical"}, supernodes=2,
        scale_out={"tiers": 2, "switch": "sw16", "oversubscription": [3]}),
    "mesh": lambda: _cluster({"kind": "mesh", "size": 12, "dims": [4, 3]}),
    "hybrid": lambda: _cluster(
        {"kind": "hybrid", "size": 16, "switch": "sw16", "medium": "copper",
         "hybrid": {"group_kind": "full_mesh", "group_size": 4,
                    "group_links_per_accelerator": 3, "uplinks_per_accelerator": 2}},
        supernodes=2, scale_out={"tiers": 1, "switch": "sw16"}, nics=1),
    "none": lambda: _cluster({"kind": "none", "size": 1}, supernodes=8, per_host=1, nics=1,
                             scale_out={"tiers": 2, "switch": "sw16", "rail_optimized": False}),
}
SMALL_PRESETS = [name for name in sorted(cluster_presets())
                 if load_cluster(name).accelerators <= 5000]




@pytest.mark.parametrize("name", list(SYNTHETIC) + SMALL_PRESETS)
def test_report_counts_match_graph(name):
    cluster = SYNTHETIC[name]() if name in SYNTHETIC else load_cluster(name)
    report = topology_report(cluster)
    counts = graph_counts(build_cluster_graph(cluster))
    assert counts["nodes"]["accelerator"] == report.accelerators
    assert report.switches == dict(counts["switches"])
    assert report.links == dict(counts["links"])
    assert report.cables == {t: counts["cables"][t] for t in report.cables}
    assert sum(counts["cables"].values()) == sum(report.cables.values())
    assert report.optical_transceivers == {t: 2 * counts["optical"][t]
                                           for t in report.optical_transceivers}


@pytest.mark.parametrize("name", list(SYNTHETIC))
def test_report_hops_match_graph(name):
    cluster = SYNTHETIC[name]()
    report = topology_report(cluster)
    g = build_cluster_graph(cluster)
    domain = g.subgraph(v for v, d in g.nodes(data=True)
                        if d.get("domain") == 0 and d["kind"] in ("accelerator", "switch")
                        and d.get("tier", "scale_up").startswith("scale_up"))
    if cluster.scale_up.size > 1:
        diameter, mean = accelerator_hops(domain)
        assert report.diameter_hops["scale_up"] == diameter
        assert report.mean_hops["scale_up"] == pytest.approx(mean)
    if cluster.scale_out is not None:
        diameter, mean = server_hops(g)
        assert report.diameter_hops["scale_out"] == diameter
        assert report.mean_hops["scale_out"] == pytest.approx(mean)


def test_report_json_keys_are_stable():
    data = topology_report(load_cluster("dgx-h100-superpod-su")).to_dict()
    for key in ("accelerators", "switches", "links", "diameter_hops",
                "bisection_bandwidth_bytes_per_s", "scale_up_domain_size",
                "scale_up_to_hbm_bandwidth_ratio", "oversubscription", "cables",
                "optical_transceivers", "mean_hops", "injection_bandwidth_bytes_per_s",
                "scale_up_to_scale_out_ratio", "scale_out_links_per_supernode", "free_ports",
                "radix", "ports_used_per_switch", "checks"):
        assert key in data
    json.dumps(data, allow_nan=False)


def test_mixed_medium_rules():
    report = topology_report(SYNTHETIC["nvswitch_3tier"]())
    # mixed: NIC-leaf copper (no transceivers), leaf-spine and spine-core optical;
    # the 8-GPU NVSwitch of a 4-GPU host is not on one board: copper cables.
    assert report.optical_transceivers.get("leaf", 0) == 0
    assert report.optical_transceivers["spine"] == 2 * report.links["spine"]
    assert report.cables["scale_up_l1"] == report.links["scale_up_l1"]


def test_topology_report_is_instant_for_100k_accelerators(monkeypatch):
    """Instant as a property of the work, not of the clock: no graph is built and the
    report runs fewer Python lines than there are accelerators (about 66,000 for 100,000:
    its loops are over switch groups), so no walk over accelerators or links can hide in
    it. Its time is a benchmark's business."""
    cluster = _big_cluster()
    topology_report(cluster)  # the catalog and lookup caches filled, as in any process

    def no_graph(*args, **kwargs):
        raise AssertionError("topology_report built a graph")

    monkeypatch.setattr(networkx.Graph, "__init__", no_graph)
    with counting_lines(limit=cluster.accelerators):
        report = topology_report(cluster)
    assert report.accelerators == 100_000
    assert Counter(report.switches)["core"] > 0


def _big_cluster():
    doc = {
        "name": "100k", "switches": [{"name": "sw128", "radix_ports": 128,
                                      "port_speed_gbit_per_s": 400}],
        "host": {"accelerator": "h100-sxm-80gb", "accelerators_per_host": 8,
                 "nics": {"count": 8, "speed_gbit_per_s": 400}},
        "scale_up": {"kind": "nvswitch", "size": 8, "switch": "nvswitch-gen3",
                     "switch_chips": 4},
        "scale_out": {"tiers": 3, "switch": "sw128"},
        "supernodes": 12_500,
    }
    return resolve_cluster(validate_document(doc, ClusterSpec))


def test_twin_port_cages_serve_two_ports_with_one_module():
    """Quantum-2 QM9700: 32 twin-port OSFP cages for 64 ports (QM97XX user manual,
    Interfaces); GB200 compute trays use single-port ConnectX-7 OSFP NICs. A GB200 NVL72
    SuperPOD's leaf tier: 576 NIC modules + 576 / 2 switch modules = 864 (it counted the
    1,152 link ends as modules); a DGX H100 SU's, 4 OSFP cages per 8 NICs on the host
    (DGX H100 user guide) and twin-port at the leaf: 128 + 128."""
    from supernode.facility import facility_report

    c = load_cluster("gb200-nvl72-superpod")
    report = topology_report(c)
    assert report.optical_transceivers["leaf"] == 1152  # link ends: what fails
    assert report.optical_modules == {"leaf": 864, "spine": 640}
    fac = facility_report(c, report, None).to_dict()
    assert fac["cabling"]["transceivers_total"] == 864 + 640
    # power follows the bits: 288 + 640 switch-side 800G modules at 20 pJ/bit = 1,856 ends
    # at 400G, as before
    assert fac["power"]["fabric"]["optics_w"] == pytest.approx(1856 * 400e9 * 20e-12)
    h100 = topology_report(load_cluster("dgx-h100-superpod-su"))
    assert h100.optical_modules["leaf"] == 128 + 128

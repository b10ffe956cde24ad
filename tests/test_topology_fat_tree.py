"""Fat-tree builder against the closed-form sizing and metrics (differential tests)."""

from __future__ import annotations

from collections import Counter

import networkx as nx
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from supernode.topology import LinkType, RadixError, fat_tree_layout, size_fat_tree
from supernode.topology.fabric_metrics import fabric_metrics
from supernode.topology.fat_tree import fat_tree
from supernode.topology.verify import cut_capacity, graph_counts, server_hops

UNIT = LinkType(1.0)


def _al_fares(k: int) -> nx.Graph:
    """Reference k-ary fat tree (Al-Fares et al., SIGCOMM 2008, §3): k pods of k/2 edge and
    k/2 aggregation switches, (k/2)^2 cores; aggregation switch i of every pod connects to
    cores i*k/2 .. (i+1)*k/2 - 1; each edge switch has k/2 hosts."""
    g, half = nx.Graph(), k // 2
    for pod in range(k):
        for e in range(half):
            for h in range(half):
                g.add_edge(("host", pod, e, h), ("edge", pod, e))
            for a in range(half):
                g.add_edge(("edge", pod, e), ("agg", pod, a))
        for a in range(half):
            for c in range(half):
                g.add_edge(("agg", pod, a), ("core", a * half + c))
    return g


@pytest.mark.parametrize("k", [4, 8, 16])
def test_k_ary_fat_tree_builder_and_closed_form(k):
    hosts = k**3 // 4
    sizing = size_fat_tree(hosts, 1, k, 3, rail_optimized=False)
    assert sum(sizing.switches) == 5 * k * k // 4
    assert sizing.switches == (k * k // 2, k * k // 2, k * k // 4)
    g = fat_tree(hosts, 1, k, 3, rail_optimized=False, link=UNIT)
    counts = graph_counts(g)
    assert counts["nodes"]["nic"] == hosts
    assert counts["switches"] == Counter(dict(zip(("leaf", "spine", "core"), sizing.switches,
                                                  strict=True)))
    assert counts["links"] == Counter({"leaf": hosts, "spine": hosts, "core": hosts})
    assert all(g.degree(v) == k for v, t in g.nodes(data="tier") if t)  # every port used
    metrics = fabric_metrics(fat_tree_layout(hosts, 1, k, 3, (), False), 1.0, 1.0)
    assert metrics.bisection_bytes_per_s == k**3 / 8  # full bisection
    assert metrics.diameter_hops == 6


def test_k4_fat_tree_is_al_fares():
    assert nx.is_isomorphic(fat_tree(16, 1, 4, 3, rail_optimized=False), _al_fares(4))


def test_k6_fat_tree_is_al_fares():
    assert nx.is_isomorphic(fat_tree(54, 1, 6, 3, rail_optimized=False), _al_fares(6))


def test_dgx_h100_scalable_unit():
    # NVIDIA DGX SuperPOD H100 RA, Table 4: one SU = 32 DGX x 8 rails, 8 leaves, 4 spines.
    g = fat_tree(32, 8, 64, 2, link=LinkType(50e9))
    counts = graph_counts(g)
    assert counts["switches"] == Counter({"leaf": 8, "spine": 4})
    assert counts["links"] == Counter({"leaf": 256, "spine": 256})
    for leaf in range(8):  # rail-optimised: leaf r holds NIC r of every host
        assert {v[2] for v in g.neighbors(("leaf", leaf)) if v[0] == "nic"} == {leaf}


def test_superpod_four_su_sizing():
    # RA Table 4: 1/2/3/4 SUs -> 8/16/24/32 leaves, 4/8/16/16 spines.
    for sus, leaves, spines in ((1, 8, 4), (2, 16, 8), (3, 24, 16), (4, 32, 16)):
        assert size_fat_tree(32 * sus, 8, 64, 2).switches == (leaves, spines)


def test_radix_error_for_100k_on_64_ports():
    with pytest.raises(RadixError) as err:
        fat_tree_layout(12_500, 8, 64, 3)
    assert err.value.needed_ports == 74  # 74^3 / 4 = 101,306 >= 100,000 endpoints
    assert "74 ports" in str(err.value)


def test_oversubscribed_leaf():
    """64 NICs at 3:1 on 64-port leaves: two leaves (48 down ports at most), the NICs spread
    32 and 32, each with the uplinks its 32 NICs need at 3:1 (11: 2.91:1), not 48 + 16 NICs
    on 16 uplinks each (3:1 and 1:1)."""
    layout = fat_tree_layout(64, 1, 64, 2, (3.0,), rail_optimized=False)
    metrics = fabric_metrics(layout, 50e9, 50e9)
    assert layout.sizing.down_ports[0] == 32 and layout.sizing.up_ports[0] == 11
    assert [layout.leaf_endpoints(leaf) for leaf in range(layout.leaves)] == [32, 32]
    assert metrics.oversubscription["leaf"] == pytest.approx(32 / 11)
    assert metrics.oversubscription_average["leaf"] == pytest.approx(64 / 22)


def test_two_to_one_leaves_balance():
    """Issue 25: 64 hosts with ``oversubscription: [2]`` are leaves of 32 and 32 at 2.00:1;
    65 hosts split 33 and 32 (said by :func:`leaf_fills`), the fullest at 33:17."""
    from supernode.topology.sizing import leaf_fills, per_switch_oversubscription

    even = fat_tree_layout(64, 1, 64, 2, (2.0,), rail_optimized=True)
    assert leaf_fills(even.sizing, 64) == [32, 32]
    assert per_switch_oversubscription(even.sizing, 50e9, 50e9) == (pytest.approx(2.0),)
    odd = fat_tree_layout(65, 1, 64, 2, (2.0,), rail_optimized=True)
    assert leaf_fills(odd.sizing, 65) == [33, 32]
    assert [odd.leaf_endpoints(leaf) for leaf in range(odd.leaves)] == [33, 32]
    assert per_switch_oversubscription(odd.sizing, 50e9, 50e9) == (pytest.approx(33 / 17),)


fabrics = st.tuples(
    st.integers(1, 40), st.integers(1, 4), st.sampled_from([4, 6, 8, 10, 12]),
    st.integers(1, 3), st.booleans(), st.lists(st.sampled_from([1.0, 2.0, 3.0]), max_size=2),
)


def _layout(params):
    hosts, nics, radix, tiers, rail, over = params
    over = tuple(over[: tiers - 1])
    try:
        return fat_tree_layout(hosts, nics, radix, tiers, over, rail), over
    except RadixError:
        assume(False)
        raise


@given(fabrics)
@settings(max_examples=60, deadline=None)
def test_server_hops_closed_form_matches_graph(params):
    layout, over = _layout(params)
    hosts, nics, radix, tiers, rail, _ = params
    assume(hosts >= 2)
    g = fat_tree(hosts, nics, radix, tiers, over, rail, link=UNIT)
    metrics = fabric_metrics(layout, 1.0, 1.0)
    diameter, mean = server_hops(g)
    assert metrics.diameter_hops == diameter
    assert metrics.mean_hops == pytest.approx(mean)
    assert metrics.diameter_switches == diameter - 1
    if tiers <= 2:
        assert diameter <= 4  # seed 001 §2.3: two-tier CLOS, at most 4 hops between servers


@given(fabrics)
@settings(max_examples=60, deadline=None)
def test_bisection_closed_form_matches_max_flow(params):
    layout, over = _layout(params)
    hosts, nics, radix, tiers, rail, _ = params
    g = fat_tree(hosts, nics, radix, tiers, over, rail, link=UNIT)
    half = hosts // 2
    nic_nodes = [(v, d["host"]) for v, d in g.nodes(data=True) if d["kind"] == "nic"]
    flow = cut_capacity(g, [v for v, h in nic_nodes if h < half],
                        [v for v, h in nic_nodes if h >= half])
    closed = fabric_metrics(layout, 1.0, 1.0).bisection_bytes_per_s
    pods = layout.sizing.pods
    if tiers < 3 or pods < 2 or radix % pods == 0:  # uniformly wired top tier: exact
        assert closed == pytest.approx(flow)
    else:  # otherwise the closed form is an upper bound
        assert flow <= closed + 1e-9


def test_link_counts_match_sizing_per_tier():
    layout = fat_tree_layout(300, 4, 16, 3, (2.0,), rail_optimized=True)
    g = fat_tree(300, 4, 16, 3, (2.0,), True, link=UNIT)
    counts = graph_counts(g)
    assert tuple(counts["links"][t] for t in ("leaf", "spine", "core")) == \
        layout.sizing.links_per_tier
    used = Counter()
    for u, v, d in g.edges(data=True):
        for node in (u, v):
            used[node] += d["count"]
    free = Counter()
    for node, tier in g.nodes(data="tier"):
        if tier:
            assert used[node] <= 16
            free[tier] += 16 - used[node]
    assert tuple(free[t] for t in ("leaf", "spine", "core")) == layout.sizing.free_ports


def test_more_pods_than_core_ports_is_refused():
    # 8 hosts x 3 rails on 4-port switches at 3:1 / 2:1: leaves are rounded up per rail
    # to 9 for 8 hosts, 5 pods of 2, but a 4-port core cannot reach 5 pods.
    with pytest.raises(RadixError, match="5 pods"):
        fat_tree_layout(8, 3, 4, 3, (3.0, 2.0), True)


def test_nic_faster_than_its_switch_port_runs_at_the_port_rate():
    """An 800G NIC on a 400G-port switch: injection, bisection and oversubscription are
    the 400G port's (the old report doubled injection and bisection and called it
    non-blocking)."""
    from supernode.cluster.resolve import resolve_cluster
    from supernode.spec.cluster import ClusterSpec
    from supernode.spec.loader import validate_document
    from supernode.topology.metrics import topology_report

    def report(nic: int):
        doc = {"name": "c", "supernodes": 32,
               "host": {"accelerator": "h100-sxm-80gb", "accelerators_per_host": 8,
                        "nics": {"count": 8, "speed_gbit_per_s": nic}},
               "scale_up": {"kind": "nvswitch", "size": 8, "switch": "nvswitch-gen3",
                            "switch_chips": 4},
               "scale_out": {"tiers": 2, "switch": "quantum2-qm9700"}}
        return topology_report(resolve_cluster(validate_document(doc, ClusterSpec)))

    fast, matched = report(800), report(400)
    assert fast.injection_bandwidth_bytes_per_s["scale_out"] == pytest.approx(50e9)
    assert (fast.bisection_bandwidth_bytes_per_s["scale_out"]
            == pytest.approx(matched.bisection_bandwidth_bytes_per_s["scale_out"]))
    assert fast.oversubscription["leaf"] == pytest.approx(1.0)

"""Routing at scale against the search it replaces.

* closed-form up/down candidates (:mod:`supernode.netsim.updown`) equal the shortest-path
  search's for every (node, leaf) pair, on two- and three-tier, multi-pod,
  oversubscribed and rail trees, intact and with failed switches; a failed link inside a
  pod falls back to the search;
* whole routes are identical with and without the closed form, for every policy;
* every domain's subgraph from the all-at-once table equals the one built alone.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_netsim_support import domain_cluster, fat_tree_cluster, network

from supernode.cluster.load import load_cluster
from supernode.netsim.failures import apply_failures
from supernode.netsim.grouping import group_rows
from supernode.netsim.routing import Router, RoutingConfig
from supernode.netsim.subgraph import LocalShape, build_subgraph
from supernode.netsim.updown import UpDownShape

FABRICS = {
    "two-tier": lambda: fat_tree_cluster(40),
    "three-tier, 4 pods": lambda: fat_tree_cluster(64, radix=8, tiers=3),
    "three-tier, 7 pods, partial": lambda: fat_tree_cluster(100, radix=8, tiers=3),
    "three-tier 2:1": lambda: fat_tree_cluster(64, radix=8, tiers=3, oversubscription=2.0),
    "rail two-tier": lambda: domain_cluster(16, gpus=4),
}
THREE_TIER_FAILURES = ([], ["switch:spine/1"], ["switch:core/0"],
                       ["switch:spine/1", "switch:spine/6", "switch:core/2"])
CASES = [(name, failures) for name in sorted(FABRICS)
         for failures in (THREE_TIER_FAILURES if "three" in name
                          else ([], ["switch:spine/1"]))]


def fabric_shape(net):
    return Router(net).fabric.shape


def all_pairs(shape) -> np.ndarray:
    """Keys ``u * n + t`` of every node toward every leaf it can reach."""
    n = shape.base.n
    keys = [u * n + t for t in np.flatnonzero(shape.level == 0).tolist()
            for u in np.flatnonzero(np.isfinite(shape.base.dist(t))).tolist() if u != t]
    return np.array(keys, dtype=np.int64)


@pytest.mark.parametrize(("name", "failures"), CASES,
                         ids=[f"{n}: {','.join(f) or 'intact'}" for n, f in CASES])
def test_closed_form_candidates_equal_the_search(name: str, failures: list[str]) -> None:
    net, _ = apply_failures(network(FABRICS[name]()), failures)
    shape = fabric_shape(net)
    assert isinstance(shape, UpDownShape)  # failed switches keep the tree regular
    keys = all_pairs(shape)
    got, want = shape.candidate_table(keys), shape.base.candidate_table(keys)
    assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
    covered = shape.covered(keys // shape.base.n, keys % shape.base.n)
    assert covered.mean() > 0.85
    sizes, arcs = shape.masked_table(keys[covered] // shape.base.n, keys[covered] % shape.base.n)
    ptr, ref = shape.base.candidate_table(keys[covered])
    assert np.array_equal(sizes, np.diff(ptr)) and np.array_equal(arcs, ref)


def test_intact_regular_trees_take_the_closed_form_with_runs() -> None:
    for name, make in FABRICS.items():
        shape = fabric_shape(network(make()))
        assert isinstance(shape, UpDownShape), name
    three = fabric_shape(network(fat_tree_cluster(64, radix=8, tiers=3)))
    assert three.runs is not None and three.runs.run_lo is not None
    assert int(three.pod.max()) + 1 == 4


def test_a_failed_link_inside_a_pod_falls_back_to_the_search() -> None:
    net = network(fat_tree_cluster(64, radix=8, tiers=3))
    degraded, _ = apply_failures(net, ["link:leaf/0-spine/0"])
    assert isinstance(fabric_shape(degraded), LocalShape)
    off = Router(net, RoutingConfig(closed_form=False)).fabric.shape
    assert isinstance(off, LocalShape)


@pytest.mark.parametrize("policy", ["ecmp", "spray", "adaptive"])
@pytest.mark.parametrize("failures", [[], ["switch:spine/2"], ["link:leaf/1-spine/3"]])
def test_routes_are_identical_with_and_without_the_closed_form(policy, failures) -> None:
    net, _ = apply_failures(network(fat_tree_cluster(64, radix=8, tiers=3)), failures)
    rng = np.random.default_rng(3)
    src = rng.integers(0, 64, 400)
    dst = (src + rng.integers(1, 64, 400)) % 64
    load = rng.random(net.links) / 1e9 if policy == "adaptive" else None
    routes = [Router(net, RoutingConfig(fabric=policy, seed=5, closed_form=flag))
              .route(src, dst, load) for flag in (True, False)]
    for field in ("flow", "link", "share", "latency_s"):
        assert np.array_equal(getattr(routes[0], field), getattr(routes[1], field)), field


@pytest.mark.parametrize("name", ["gb200-nvl72-superpod", "dgx-h100-superpod-su",
                                  "cloudmatrix384", "examples/hybrid-mesh-switch.yaml"])
@pytest.mark.parametrize("failures", [[], ["switch:scale_up_l1/*/1"]])
def test_domain_table_equals_each_domain_built_alone(name: str, failures: list[str]) -> None:
    net, _ = apply_failures(network(load_cluster(name)), failures)
    router = Router(net)
    usable = router.usable & np.isin(net.tier, [1, 2, 3])
    shapes = {}
    for d in np.unique(net.acc_domain).tolist():
        links = np.flatnonzero(usable & (net.domain[net.tail] == d))
        alone = build_subgraph(net.tail, net.head, net.capacity_bytes_per_s, net.latency_s,
                               net.node_latency_s, links, router.transit)
        got = router.domain_graph(d)
        assert np.array_equal(got.nodes, alone.nodes)
        assert np.array_equal(got.arc_link, alone.arc_link)
        for field in ("indptr", "arc_head", "arc_cap", "arc_latency_s", "transit",
                      "node_latency_s"):
            assert np.array_equal(getattr(got.shape, field), getattr(alone.shape, field))
        shapes.setdefault(id(got.shape), got.shape)
    assert len(shapes) <= 2  # identical domains share one shape
    assert router.domain_graph(10**6) is None


def test_group_rows_is_exact_even_when_hashes_collide(monkeypatch) -> None:
    rng = np.random.default_rng(0)
    rows = rng.integers(0, 3, size=(500, 4))
    first, group = group_rows(rows)
    assert np.array_equal(rows, rows[first[group]])
    assert len(first) == len(np.unique(rows, axis=0))
    assert np.all(np.diff(first) > 0)  # numbered by first appearance
    import supernode.netsim.grouping as grouping

    monkeypatch.setattr(grouping, "_WEIGHTS", np.zeros(4096, dtype=np.uint64))
    first2, group2 = grouping.group_rows(rows)  # every hash equal: the exact fallback
    assert np.array_equal(first, first2) and np.array_equal(group, group2)

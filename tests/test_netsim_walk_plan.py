"""The adaptive fast path (:mod:`supernode.netsim.walk_plan`) against the walk it replaces.

Differential: on small fat trees (two and three tiers, oversubscribed, rail-optimised,
intact and with failed switches or links, the closed form and the search), for random
flow sets, flow keys and link loads with many ties, the planned walk gives the reference
walk's answer (:func:`supernode.netsim.subgraph.walk` under
:class:`~supernode.netsim.policies.Adaptive`, group by group and round by round)
**identically**: the same (flow, arc, share) triples in the same order and the same
latencies, not merely the same link loads. The router takes the fast path for
``adaptive`` and gives the routes of the reference path; where the walk fails, so does
the plan, with the same message.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_netsim_differential import three_tier
from test_netsim_support import domain_cluster, fat_tree_cluster, network

from supernode.errors import InputError
from supernode.netsim.build import network_from_cluster
from supernode.netsim.failures import apply_failures
from supernode.netsim.policies import Adaptive, least_loaded, rank_rounds, unit_draw
from supernode.netsim.routes import LinkLoad, RoutingConfig
from supernode.netsim.routing import Router
from supernode.netsim.subgraph import walk
from supernode.netsim.walk_plan import adaptive_walk, build_plan

FABRICS = {
    "two-tier": (lambda: fat_tree_cluster(40), ["switch:spine/1"]),
    "three-tier": (lambda: fat_tree_cluster(64, radix=8, tiers=3),
                   ["switch:spine/1", "switch:core/2"]),
    "three-tier 2:1": (lambda: fat_tree_cluster(64, radix=8, tiers=3, oversubscription=2.0),
                       ["link:leaf/1-spine/0"]),
    "rail two-tier": (lambda: domain_cluster(16, gpus=4), ["switch:spine/1"]),
}


def _shapes():
    """(name, fabric shape) of every fabric intact and degraded, closed form and search."""
    out = []
    for name, (make, failures) in FABRICS.items():
        net = network(make())
        degraded, _ = apply_failures(net, failures)
        for label, which in (("intact", net), ("degraded", degraded)):
            for closed in (True, False):
                router = Router(which, RoutingConfig(closed_form=closed))
                out.append((f"{name} {label} closed={closed}", router.fabric.shape))
    return out


SHAPES = _shapes()


def _flows(shape, seed: int, count: int, leaves_only: bool):
    """Random flows between fabric nodes (leaves, or any node the search may target),
    flow keys (some repeated) and arc loads drawn from a few values (ties)."""
    rng = np.random.default_rng(seed)
    tier = np.asarray(getattr(shape, "level", np.zeros(shape.n, dtype=np.int64)))
    ends = np.flatnonzero(tier == 0) if leaves_only else np.arange(shape.n)
    src, dst = rng.choice(ends, count), rng.choice(ends, count)
    keys = rng.integers(0, 2**63, count, dtype=np.uint64)
    keys[rng.random(count) < 0.2] = keys[0]
    load = rng.integers(0, 4, shape.arc_cap.size) / shape.arc_cap
    return src, dst, keys, load


def _same_walks(a, b) -> None:
    for field in ("flow", "arc", "share", "latency_s"):
        np.testing.assert_array_equal(getattr(a, field), getattr(b, field), err_msg=field)


@settings(max_examples=60, deadline=None)
@given(case=st.integers(0, len(SHAPES) - 1), seed=st.integers(0, 2**32 - 1),
       count=st.integers(1, 300), leaves_only=st.booleans())
def test_the_planned_walk_equals_the_reference_walk(case, seed, count, leaves_only) -> None:
    _, shape = SHAPES[case]
    src, dst, keys, load = _flows(shape, seed, count, leaves_only)
    try:
        want = walk(shape, src, dst, keys, Adaptive(), load)
    except InputError as error:
        with pytest.raises(InputError, match=str(error.args[-1])[:40]):
            adaptive_walk(build_plan(shape, src, dst, keys), shape.arc_cap, load.__getitem__)
        return
    got = adaptive_walk(build_plan(shape, src, dst, keys), shape.arc_cap, load.__getitem__)
    _same_walks(got, want)


def test_many_flows_per_group_are_placed_in_hash_order_like_the_walk() -> None:
    """Every leaf sends 40 flows to one other leaf: groups of many flows, several rounds
    each, over uneven loads (the walk's round-by-round levels, summed alike)."""
    for name, shape in SHAPES:
        leaves = np.flatnonzero(np.asarray(shape.level) == 0) if hasattr(shape, "level") \
            else np.arange(shape.n)
        src = np.repeat(leaves, 40)
        dst = np.roll(leaves, 1)[np.repeat(np.arange(leaves.size), 40)]
        _, _, keys, load = _flows(shape, 11, src.size, True)
        want = walk(shape, src, dst, keys, Adaptive(), load)
        got = adaptive_walk(build_plan(shape, src, dst, keys), shape.arc_cap, load.__getitem__)
        _same_walks(got, want)
        assert np.bincount(np.unique(src * shape.n + dst, return_counts=True)[1]).size > 2, \
            name


NET = network_from_cluster(three_tier(64))  # 512 GPUs, two leaves per rail


def test_the_router_routes_adaptive_like_the_reference_path() -> None:
    net = NET
    rng = np.random.default_rng(5)
    config = RoutingConfig(fabric="adaptive", seed=9)
    fast, slow = Router(net, config), Router(net, config)
    assert fast.planned
    slow.planned = False  # the reference: the generic walk under Adaptive.assign_many
    flows = rng.integers(0, 5, net.links).astype(float)
    load = LinkLoad(flows, np.where(net.up, net.capacity_bytes_per_s, 1e-300))
    for _ in range(3):
        src, dst = rng.integers(0, 512, 500), rng.integers(0, 512, 500)
        got, want = fast.route(src, dst, load), slow.route(src, dst, load)
        for field in ("flow", "link", "share", "latency_s"):
            np.testing.assert_array_equal(getattr(got, field), getattr(want, field))
        flows[rng.integers(0, net.links, 2000)] += 1.0  # the load moves between transfers
    assert len(fast._plans) == 3 and not slow._plans


def test_a_plan_is_shared_only_by_the_same_pairs_and_follows_the_load() -> None:
    net = NET
    router = Router(net, RoutingConfig(fabric="adaptive"))
    src, dst = np.arange(0, 256), np.arange(256, 512)
    idle = router.route(src, dst, np.zeros(net.links))
    busy_links = np.unique(idle.link)[::2]
    busy = np.zeros(net.links)
    busy[busy_links] = 10.0 / net.capacity_bytes_per_s[busy_links]
    moved = router.route(src, dst, busy)
    assert len(router._plans) == 1
    fabric = np.isin(net.tier, [net.tier[router.fabric.arc_link[0]]])
    assert np.any(fabric[idle.link]) and not np.array_equal(np.sort(idle.link),
                                                             np.sort(moved.link))


def _padded(ptr: np.ndarray, values: np.ndarray, fill: float) -> np.ndarray:
    sizes = np.diff(ptr)
    out = np.full((sizes.size, int(sizes.max())), fill)
    rows = np.repeat(np.arange(sizes.size), sizes)
    out[rows, np.arange(values.size) - ptr[rows]] = values
    return out


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), groups=st.integers(1, 12),
       spread=st.sampled_from([0, 1, 3, 20]), crowd=st.sampled_from([1, 4, 40]))
def test_least_loaded_places_flows_like_the_policy(seed, groups, spread, crowd) -> None:
    """The padded least-loaded choice (sorted slots where they apply, else rounds) against
    :meth:`Adaptive.assign_many` itself: uneven widths, two capacities, tied loads."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 9, groups)
    ptr = np.concatenate([[0], np.cumsum(sizes)])
    capacity = rng.choice([25e9, 50e9], ptr[-1])
    load = rng.integers(0, spread + 1, ptr[-1]) / capacity
    group = rng.integers(0, groups, int(rng.integers(1, crowd * groups + 1)))
    keys = rng.integers(0, 2**63, group.size, dtype=np.uint64)
    salt = rng.integers(0, 1000, groups)
    _, want, _ = Adaptive().assign_many(ptr, capacity, load, keys, group, salt)
    by_rank, cuts = rank_rounds(group, unit_draw(keys, salt[group]), groups)
    col = least_loaded(_padded(ptr, load, np.inf), _padded(ptr, 1.0 / capacity, 1.0), group,
                       by_rank, cuts)
    np.testing.assert_array_equal(ptr[group] + col, want)

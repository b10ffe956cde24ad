"""Invariants of the event-driven engine over random traffic (hypothesis).

* no link over capacity at any instant (the peak utilisation the engine records);
* every solution is max-min fair (the engine's ``check`` mode verifies each one);
* bytes delivered = bytes sent, per flow class and per link;
* identical results for identical inputs and seed; a different seed moves ECMP paths.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from test_netsim_support import fat_tree_cluster, network

from supernode.netsim.dag import delay
from supernode.netsim.engine import Environment, FlowSpec
from supernode.netsim.routing import Router, RoutingConfig

NET = network(fat_tree_cluster(32, oversubscription=2.0))


@st.composite
def traffic(draw):
    flows = []
    for _ in range(draw(st.integers(1, 12))):
        src = draw(st.integers(0, 31))
        dst = draw(st.integers(0, 31).filter(lambda d, s=src: d != s))
        flows.append((src, dst, draw(st.floats(1e6, 1e9)), draw(st.floats(0, 2e-2)),
                      draw(st.booleans())))
    return flows, draw(st.sampled_from(["ecmp", "spray", "adaptive"]))


def _run(flows, routing, seed=0, track_all=False):
    env = Environment(NET, Router(NET, RoutingConfig(fabric=routing, seed=seed)), check=True,
                      track_all_links=track_all)
    for i, (src, dst, nbytes, start, pair) in enumerate(flows):
        members = ([src, dst], [dst, src]) if pair else ([src], [dst])
        t = env.task(f"f{i}", "transfer", flows=(FlowSpec(np.array(members[0]),
                                                          np.array(members[1]), nbytes,
                                                          coupled=bool(i % 2)),))
        if start > 0:
            env.after(delay(env, f"d{i}", start), t)
    env.run()
    return env


@settings(max_examples=40, deadline=None)
@given(traffic())
def test_capacity_fairness_and_conservation(case) -> None:
    flows, routing = case
    env = _run(flows, routing)  # check=True raises on any unfair or infeasible solution
    assert np.all(env.fluid.peak <= 1.0 + 1e-9)
    expected = np.zeros(NET.links)
    for c in env.classes:
        assert abs(c.sent - c.bytes) <= 1e-6 * c.bytes + 1e-3  # delivered == sent
        v = env.fluid.vectors.items[c.vid]
        expected[v.links] += v.mult * c.bytes
    assert np.allclose(env.link_bytes, expected, rtol=1e-9, atol=1e-3)
    sent = sum(c.flows * c.bytes for c in env.classes)
    requested = sum(nbytes * (2 if pair else 1) for _, _, nbytes, _, pair in flows)
    assert np.isclose(sent, requested)
    assert all(np.isfinite(t.end_s) for t in env.tasks)


@settings(max_examples=15, deadline=None)
@given(traffic())
def test_identical_results_per_seed(case) -> None:
    flows, routing = case
    a, b = _run(flows, routing, seed=7), _run(flows, routing, seed=7)
    assert a.events == b.events
    assert [t.end_s for t in a.tasks] == [t.end_s for t in b.tasks]
    assert a.link_bytes.tobytes() == b.link_bytes.tobytes()


@settings(max_examples=25, deadline=None)
@given(traffic())
def test_private_link_statistics_match_tracking_every_link(case) -> None:
    flows, routing = case
    fast, slow = _run(flows, routing), _run(flows, routing, track_all=True)
    assert np.allclose(fast.fluid.peak, slow.fluid.peak, rtol=1e-9, atol=1e-12)
    assert np.allclose(fast.fluid.hot_s, slow.fluid.hot_s, rtol=1e-9, atol=1e-15)
    assert slow.fluid.peak.max() <= 1.0 + 1e-9


def test_seed_changes_ecmp_paths() -> None:
    # non-blocking 16-port leaves: 4 leaves of 8 hosts, 8 uplinks each over 2 spines (the
    # 2:1 tree's balanced leaves need only 4 uplinks each, one spine: a single path)
    net = network(fat_tree_cluster(32))
    src = np.arange(16)
    dst = (src + 16) % 32  # every flow crosses leaves
    paths = [Router(net, RoutingConfig(seed=s)).route(src, dst).link.tobytes()
             for s in (0, 0, 1)]
    assert paths[0] == paths[1] and paths[0] != paths[2]


def test_latency_is_paid_after_the_last_byte() -> None:
    net = network(fat_tree_cluster(4, latency_ns=100.0, nic_latency_ns=50.0))
    env = Environment(net, Router(net))
    env.task("t", "transfer", flows=(FlowSpec(np.array([0]), np.array([1]), 1e9, hops=3),))
    env.run()
    # acc->nic->leaf->nic->acc: 2 PCIe links (NIC latency 50 ns), 2 NIC-leaf links of
    # 100 ns and the leaf switch (100 ns)
    path = 2 * 50e-9 + 2 * 100e-9 + 100e-9
    bottleneck = min(net.capacity_bytes_per_s[net.up])
    assert np.isclose(env.now, 1e9 / bottleneck + 3 * path, rtol=1e-9)

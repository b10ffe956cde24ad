"""Routing (ECMP, spray, rail alignment, policy registry) and failures (rerouting)."""

from __future__ import annotations

import closed_forms as cf
import numpy as np
import pytest
from test_netsim_support import (
    NIC_BYTES_PER_S,
    domain_cluster,
    fat_tree_cluster,
    network,
    run_collective,
)

from supernode.errors import InputError
from supernode.netsim.collectives import Ctx
from supernode.netsim.failures import apply_failures, parse_failure
from supernode.netsim.policies import ROUTING_POLICIES, Ecmp
from supernode.netsim.routing import Router, RoutingConfig

DOM = network(domain_cluster(8, gpus=4))  # 8 hosts x 4 GPUs, 4 rails, 2-tier rail tree


def tiers_used(net, routes) -> set[str]:
    return {net.tier_name(int(k)) for k in np.unique(routes.link)}


def test_same_domain_stays_on_scale_up_and_sprays_over_planes() -> None:
    r = Router(DOM).route(np.array([0]), np.array([1]))
    assert tiers_used(DOM, r) == {"scale_up_l1"}
    assert np.isclose(r.share.sum(), 2.0)  # 4 planes up + 4 planes down, shares sum to 1
    assert len(r.link) == 8


def test_rail_aligned_cross_rail_goes_over_nvlink_first() -> None:
    src, dst = np.array([0]), np.array([4 * 3 + 2])  # GPU 0 of host 0 -> GPU 2 of host 3
    aligned = Router(DOM).route(src, dst)
    assert "scale_up_l1" in tiers_used(DOM, aligned)
    assert "spine" not in tiers_used(DOM, aligned)  # hosts 0 and 3 share rail-2's leaf
    plain = Router(DOM, RoutingConfig(rail_aligned=False)).route(src, dst)
    assert "scale_up_l1" not in tiers_used(DOM, plain)
    assert "spine" in tiers_used(DOM, plain)  # rail 0 leaf -> spine -> rail 2 leaf


def test_ecmp_is_weighted_by_capacity() -> None:
    keys = np.arange(20000, dtype=np.uint64) * np.uint64(2654435761)
    _, pick, _ = Ecmp().assign(np.array([1.0, 3.0]), np.zeros(2), keys, salt=5)
    assert abs(np.mean(pick == 1) - 0.75) < 0.02


def test_policy_registry_refuses_duplicates_and_unknown_names() -> None:
    with pytest.raises(ValueError, match="already registered"):
        ROUTING_POLICIES.register("ecmp", Ecmp())
    with pytest.raises(InputError, match="unknown routing policy"):
        Router(DOM, RoutingConfig(fabric="random-walk"))
    assert {"ecmp", "spray", "adaptive"} <= set(ROUTING_POLICIES.names())


def test_adaptive_spreads_flows_where_ecmp_collides() -> None:
    net = network(fat_tree_cluster(64))
    src = np.arange(0, 64, 8)
    dst = np.roll(src, -1)
    counts = {}
    for policy in ("ecmp", "adaptive"):
        r = Router(net, RoutingConfig(fabric=policy)).route(src, dst)
        up = [k for k in r.link.tolist() if net.tier_name(k) == "spine"
              and net.nodes[net.tail[k]][0] == "leaf"]
        counts[policy] = max(np.unique(up, return_counts=True)[1])
    assert counts["adaptive"] == 1 and counts["ecmp"] >= 1


def test_failed_link_is_avoided_and_named_in_errors() -> None:
    net = network(fat_tree_cluster(64))
    degraded, failures = apply_failures(net, ["link:leaf/0-spine/0"])
    assert failures[0].links and not degraded.up[list(failures[0].links)].any()
    r = Router(degraded).route(np.zeros(56, dtype=np.int64), np.arange(8, 64))
    assert degraded.up[r.link].all()
    with pytest.raises(InputError, match="no such link"):
        apply_failures(net, ["link:leaf/0-leaf/1"])
    with pytest.raises(InputError, match="no node 'leaf/99'"):
        apply_failures(net, ["switch:leaf/99"])
    with pytest.raises(InputError, match="factor"):
        apply_failures(net, ["slow:link:leaf/0-spine/0:1.5"])
    with pytest.raises(InputError, match="kinds"):
        apply_failures(net, ["cable:leaf/0-spine/0"])


def test_slow_link_and_wildcards() -> None:
    f = parse_failure(DOM, "slow:switch:scale_up_l1/*/3:0.5")
    assert len(f.links) == 8 * 4 * 2 and f.factor == 0.5
    slowed, _ = apply_failures(DOM, ["slow:link:acc/0-scale_up_l1/0/0:0.25"])
    k = DOM.find_link(DOM.index[("acc", 0)], DOM.index[("scale_up_l1", 0, 0)])
    assert slowed.capacity_bytes_per_s[k] == DOM.capacity_bytes_per_s[k] * 0.25


def test_nvswitch_plane_down_reroutes_and_costs_its_share() -> None:
    net = network(domain_cluster(1, gpus=4))
    healthy, _ = run_collective(net, "all_reduce", "ring", np.arange(4), 64e6)
    degraded, _ = apply_failures(net, ["switch:scale_up_l1/0/1"])
    slow, env = run_collective(degraded, "all_reduce", "ring", np.arange(4), 64e6)
    assert slow == pytest.approx(healthy * 4 / 3, rel=1e-6)  # 3 of 4 planes left
    assert degraded.up[np.flatnonzero(env.link_bytes)].all()


def test_failed_nic_fails_over_to_another_rail() -> None:
    degraded, _ = apply_failures(DOM, ["link:nic/0/0-leaf/0"])
    r = Router(degraded).route(np.array([0]), np.array([4]))  # GPU 0 host 0 -> host 1
    assert degraded.up[r.link].all()
    assert "scale_up_l1" in tiers_used(degraded, r)  # through a neighbour GPU's NIC
    t, _ = run_collective(degraded, "p2p", "p2p", [[0, 4]], 64e6)
    assert t == pytest.approx(cf.ring_time_s("broadcast", 2, 64e6, NIC_BYTES_PER_S, 0.0),
                              rel=1e-6)


def test_disconnected_pair_is_bad_input() -> None:
    net = network(fat_tree_cluster(16))
    cut, _ = apply_failures(net, ["switch:leaf/1"])
    with pytest.raises(InputError, match="NIC"):
        Router(cut).route(np.array([0]), np.array([9]))


def test_failure_file(tmp_path) -> None:
    path = tmp_path / "fail.yaml"
    path.write_text("failures:\n  - link:leaf/0-spine/0\n  - slow:switch:spine/1:0.5\n")
    degraded, failures = apply_failures(network(fat_tree_cluster(64)), [str(path)])
    assert [f.spec for f in failures] == ["link:leaf/0-spine/0", "slow:switch:spine/1:0.5"]
    bad = tmp_path / "bad.yaml"
    bad.write_text("failures: []\n")
    with pytest.raises(InputError):
        apply_failures(degraded, [str(bad)])


def test_ctx_modes_are_checked() -> None:
    with pytest.raises(InputError, match="mode"):
        run_collective(DOM, "all_reduce", "ring", np.arange(4), 1e6, mode="magic")
    assert Ctx().mode == "pipelined"

"""The simulator's collectives on idle fabrics against textbook closed forms (within 2%).

Flows come from the same schedules the α-β model costs; here, at line rate (no protocol
efficiency or latency) and on zero-latency fabrics, they must also equal the closed forms
of ``tests/closed_forms.py``: which bytes cross which links is right. The
general model-vs-simulator check is ``tests/test_collectives_differential.py``. Plus the
fat-tree facts: a full-bisection tree carries an all-to-all at line rate; 2:1
oversubscription slows a cross-leaf all-to-all by the uplink deficit; ECMP collisions.
"""

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
from supernode.netsim.channels import walecki_paths

TOL = 0.02
S = 64e6
ZERO = network(fat_tree_cluster(64))
SPREAD = np.arange(0, 64, 4)  # 16 ranks over 8 leaves: neighbours cross leaves


@pytest.mark.parametrize("op", ["all_reduce", "all_gather", "reduce_scatter", "broadcast"])
@pytest.mark.parametrize("mode", ["pipelined", "step"])
@pytest.mark.parametrize("coupled", [True, False])
def test_ring_matches_closed_form(op: str, mode: str, coupled: bool) -> None:
    t, _ = run_collective(ZERO, op, "ring", SPREAD, S, mode=mode, coupled=coupled)
    assert t == pytest.approx(cf.ring_time_s(op, SPREAD.size, S, NIC_BYTES_PER_S, 0.0),
                              rel=TOL)


@pytest.mark.parametrize("n", [2, 3, 8, 16])
def test_tree_matches_closed_form(n: int) -> None:
    from supernode.collectives.trees import TREE_EFFICIENCY

    t, _ = run_collective(ZERO, "all_reduce", "tree", SPREAD[:n], S)
    assert t == pytest.approx(cf.tree_time_s(n, S, NIC_BYTES_PER_S, 0.0) / TREE_EFFICIENCY,
                              rel=TOL)


@pytest.mark.parametrize("op", ["all_reduce", "reduce_scatter", "all_gather"])
@pytest.mark.parametrize("n", [8, 12])
def test_halving_doubling_matches_closed_form(op: str, n: int) -> None:
    t, _ = run_collective(ZERO, op, "halving_doubling", SPREAD[:n], S)
    assert t == pytest.approx(cf.halving_doubling_time_s(op, n, S, NIC_BYTES_PER_S, 0.0),
                              rel=TOL)


def test_hierarchical_matches_closed_form() -> None:
    net = network(domain_cluster(8, gpus=4))  # 4 x 100 GB/s NVLink per GPU, 50 GB/s NIC
    groups = np.arange(32)
    t, _ = run_collective(net, "all_reduce", "hierarchical", groups, S)
    expect = cf.hierarchical_time_s(32, 4, S, 400e9, 0.0, NIC_BYTES_PER_S, 0.0)
    assert t == pytest.approx(expect, rel=TOL)
    # a flat ring over 4 GPUs per domain runs 4 channels (one per NIC), S/4 each
    ring, _ = run_collective(net, "all_reduce", "ring", groups, S)
    assert ring == pytest.approx(cf.ring_time_s("all_reduce", 32, S / 4, NIC_BYTES_PER_S, 0.0),
                                 rel=TOL)


def test_in_switch_reduction_sends_s_n_plus_1_over_n() -> None:
    net = network(domain_cluster(1, gpus=4))
    t, _ = run_collective(net, "all_reduce", "nvls", np.arange(4), S)
    assert t == pytest.approx(cf.in_switch_time_s(4, S, 400e9, 0.0), rel=TOL)
    ring, _ = run_collective(net, "all_reduce", "ring", np.arange(4), S)
    assert ring == pytest.approx(cf.ring_time_s("all_reduce", 4, S, 400e9, 0.0), rel=TOL)
    plain = network(domain_cluster(1, gpus=4, in_switch=False))
    with pytest.raises(InputError, match="in-switch"):
        run_collective(plain, "all_reduce", "in_switch", np.arange(4), S)


def test_full_bisection_all_to_all_at_line_rate() -> None:
    n = 64  # all ranks of a non-blocking tree: 7/8 of the traffic crosses the spines
    t, _ = run_collective(ZERO, "all_to_all", "direct", np.arange(n), S)
    assert t == pytest.approx(cf.direct_all_to_all_time_s(n, S, NIC_BYTES_PER_S, 0.0),
                              rel=TOL)


def test_oversubscribed_all_to_all_slows_by_uplink_deficit() -> None:
    # 16-port leaves at 2:1 hold at most 10 hosts: 8 leaves of 10 hosts, each cabled with
    # the 5 uplinks 10 hosts need at 2:1 (d/u = 10/5)
    over = network(fat_tree_cluster(80, oversubscription=2.0))
    flat = network(fat_tree_cluster(80))
    slow, _ = run_collective(over, "all_to_all", "direct", np.arange(80), S)
    fast, _ = run_collective(flat, "all_to_all", "direct", np.arange(80), S)
    expect = cf.oversubscribed_all_to_all_time_s(80, 10, S, NIC_BYTES_PER_S, 10 / 5, 0.0)
    assert slow == pytest.approx(expect, rel=TOL)
    assert slow / fast == pytest.approx(10 / 5 * 70 / 79, rel=TOL)  # ~1.77x
    inside, _ = run_collective(over, "all_to_all", "direct", np.arange(10), S)
    assert inside == pytest.approx(cf.direct_all_to_all_time_s(10, S, NIC_BYTES_PER_S, 0.0),
                                   rel=TOL)


def test_ecmp_collisions_cost_bandwidth_and_spray_does_not() -> None:
    ranks = np.arange(0, 64, 8)  # one rank per leaf: every ring hop crosses the spines
    groups = np.stack([ranks + k for k in range(8)])  # 8 rings at once
    sprayed, _ = run_collective(ZERO, "all_reduce", "ring", groups, S, routing="spray")
    hashed = [run_collective(ZERO, "all_reduce", "ring", groups, S, routing="ecmp",
                             seed=s)[0] for s in range(4)]
    line = cf.ring_time_s("all_reduce", 8, S, NIC_BYTES_PER_S, 0.0)
    assert sprayed == pytest.approx(line, rel=TOL)
    assert min(hashed) >= line * (1 - 1e-9) and max(hashed) > 1.2 * line


def test_aggregated_matches_per_flow_on_symmetric_fabric() -> None:
    groups = np.stack([np.arange(0, 64, 8) + k for k in range(8)])
    for op, algo in [("all_reduce", "ring"), ("all_to_all", "direct"),
                     ("all_reduce", "halving_doubling")]:
        a, env_a = run_collective(ZERO, op, algo, groups, S, coupled=True)
        b, env_b = run_collective(ZERO, op, algo, groups, S, coupled=False, mode="step")
        assert a == pytest.approx(b, rel=1e-9)
        assert len(env_a.classes) < len(env_b.classes)
        assert np.allclose(env_a.link_bytes, env_b.link_bytes)


def test_unknown_or_mismatched_algorithm_is_bad_input() -> None:
    with pytest.raises(InputError, match="unknown collective algorithm"):
        run_collective(ZERO, "all_reduce", "magic", np.arange(4), S)
    with pytest.raises(InputError, match="does not perform"):
        run_collective(ZERO, "all_to_all", "ring", np.arange(4), S)
    with pytest.raises(InputError, match="hierarchical"):
        run_collective(ZERO, "all_reduce", "hierarchical", np.arange(4), S)


def test_full_mesh_rings_use_every_link() -> None:
    from supernode.cluster.load import load_cluster

    net = network(load_cluster("mi300x-8"))  # 7 xGMI links of 64 GB/s per GPU
    t, env = run_collective(net, "all_reduce", "ring", np.arange(8), S)
    link = float(net.capacity_bytes_per_s[net.tier == 1].max())
    latency = float(env.records[0].first.succ[0].duration_s)  # the schedule's latency
    assert t == pytest.approx(cf.ring_time_s("all_reduce", 8, S, 7 * link, 0.0) + latency,
                              rel=TOL)
    assert np.count_nonzero(env.link_bytes) == 8 * 7  # every directed link carries data


@pytest.mark.parametrize("g", [2, 4, 8, 16])
def test_walecki_paths_use_every_directed_link_once(g: int) -> None:
    paths = walecki_paths(g)
    arcs = {(int(a), int(b)) for row in paths for a, b in zip(row[:-1], row[1:], strict=True)}
    assert len(arcs) == g * (g - 1) == paths.shape[0] * (g - 1)
    assert sorted(int(row[-1]) for row in paths) == list(range(g))  # each rank ends one path
    assert walecki_paths(5) is None

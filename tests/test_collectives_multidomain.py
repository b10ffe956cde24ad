"""Collectives over 2-64 NVLink domains: the two engines agree, and the routing a fabric
runs is priced the same way by both.

* Differential: every algorithm that runs across NVL72 racks, at 1 MiB, 256 MiB and 16 GiB
  on 2, 8, 20 and 64 racks, analytic vs simulated within 5 % under the same (balanced)
  routing. The direct all-to-all is coarsened beyond two racks (2 ranks per rack: the
  same 2-64 domains, NVLink hop and spine crossings at a fraction of the n² flows; the
  full 1,440-rank one is 2 M flows, 8 minutes of CPU).
* Properties: busbw non-increasing in domains at a fixed size from the first
  cross-domain hop on, the ramp midpoint non-decreasing in ranks, and static ECMP never
  faster than adaptive routing, in the model and in the simulator.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from supernode.cluster.resolve import resolve_cluster
from supernode.collectives import (
    busbw_bytes_per_s,
    choose,
    consecutive_view,
    fabric_from_cluster,
    group_view,
    load_efficiency_tables,
)
from supernode.collectives.routing import collision_efficiency, expected_max_poisson
from supernode.netsim.build import network_from_cluster
from supernode.netsim.collectives import Ctx
from supernode.netsim.dag import add_collective
from supernode.netsim.engine import Environment
from supernode.netsim.routing import Router, RoutingConfig
from supernode.spec.cluster import ClusterSpec
from supernode.spec.loader import validate_document

TABLES = load_efficiency_tables()
SIZES = (2.0**20, 2.0**28, 2.0**34)
DOMAINS = (2, 8, 20, 64)
TOL = 0.05
TREE_PARITY = 0.002
ALGORITHMS = [("all_reduce", "ring"), ("all_gather", "ring"), ("broadcast", "ring"),
              ("all_reduce", "tree"), ("all_reduce", "nvls_tree"), ("all_reduce", "collnet"),
              ("all_reduce", "hierarchical"), ("all_reduce", "halving_doubling"),
              ("all_to_all", "direct"), ("p2p", "p2p")]


def nvl72(racks: int, routing: str | None = None):
    """``racks`` GB200 NVL72 racks, 400G NIC per GPU, rail-optimised Quantum-2 tree."""
    out = {"tiers": 3 if racks > 32 else 2, "switch": "quantum2-qm9700",
           "rail_optimized": True}
    if routing:
        out["routing"] = routing
    return resolve_cluster(validate_document({
        "name": f"nvl72x{racks}", "supernodes": racks,
        "host": {"accelerator": "gb200", "accelerators_per_host": 4,
                 "nics": {"count": 4, "speed_gbit_per_s": 400, "latency_ns": 1000}},
        "scale_up": {"kind": "nvswitch", "size": 72, "switch": "nvlink5-switch",
                     "switch_chips": 18},
        "scale_out": out}, ClusterSpec))


_NETS: dict[tuple[int, str | None], tuple] = {}


def _net(racks: int, routing: str | None = None):
    key = (racks, routing)
    if key not in _NETS:
        cluster = nvl72(racks, routing)
        _NETS[key] = (network_from_cluster(cluster), fabric_from_cluster(cluster)[0])
    return _NETS[key]


def simulate(net, fabric, op, algorithm, members, sizes, routing="spray", seed=0):
    """Seconds of each size, one after the other on an idle fabric."""
    env = Environment(net, Router(net, RoutingConfig(fabric=routing, seed=seed)))
    previous = None
    for k, size in enumerate(sizes):
        first, last = add_collective(env, f"c{k}", op, algorithm, np.atleast_2d(members),
                                     size, Ctx(net=net, fabric=fabric, tables=TABLES))
        if previous is not None:
            env.after(previous, first)
        previous = last
    env.run()
    return [record.duration_s for record in env.records]


def _group(racks: int, op: str) -> tuple[np.ndarray, tuple]:
    """Members and strided factors of the group: every rank of the racks, or 2 ranks per
    rack for an all-to-all beyond two racks."""
    if op == "all_to_all" and racks > 2:
        factors = ((1, 2), (72, racks))
        members = (np.arange(2)[None, :] + 72 * np.arange(racks)[:, None]).ravel()
        return members, factors
    return np.arange(72 * racks), ((1, 72 * racks),)


@pytest.mark.parametrize("racks", DOMAINS)
@pytest.mark.parametrize(("op", "algorithm"), ALGORITHMS)
def test_model_and_simulator_agree_over_racks(racks, op, algorithm):
    net, fabric = _net(racks)
    members, factors = _group(racks, op)
    view = group_view(fabric, factors)
    analytic = choose(op, np.array(SIZES), members.size, view, algorithm, tables=TABLES).time_s
    simulated = simulate(net, fabric, op, algorithm, members, SIZES)
    for size, a, s in zip(SIZES, analytic, simulated, strict=True):
        assert s == pytest.approx(a, rel=TOL), (racks, op, algorithm, size)


def _busbw(op: str, size: float, racks: int, routing: str | None = None) -> float:
    _, fabric = _net(64, routing)
    n = 72 * racks
    t = float(choose(op, size, n, consecutive_view(fabric, n), tables=TABLES).time_s)
    return float(busbw_bytes_per_s(op, size, n, t))


@pytest.mark.parametrize("routing", [None, "ecmp"])
@pytest.mark.parametrize("op", ["all_reduce", "all_gather", "reduce_scatter", "all_to_all",
                                "broadcast"])
def test_busbw_does_not_rise_with_domains(op, routing):
    """From two domains on. NCCL's double binary tree over an odd number of domains can
    make one node inner in both trees (one send more than for the next even count), so
    NVLS_TREE's busbw may come back by up to 0.2 % between neighbours: the tree's own
    shape, not a trend (``TREE_PARITY``)."""
    for size in SIZES:
        curve = [_busbw(op, size, racks, routing) for racks in range(2, 65, 3)]
        pairs = zip(curve, curve[1:], strict=False)
        assert all(b <= a * (1 + TREE_PARITY) for a, b in pairs), (size, curve)
        assert curve[-1] <= curve[0]


def _ramp_midpoint_bytes(op: str, racks: int) -> float:
    """Smallest size reaching half the busbw of 16 GiB (a fine grid, 64 KiB-16 GiB)."""
    sizes = 2.0 ** np.arange(16, 34.01, 0.25)
    _, fabric = _net(64)
    n = 72 * racks
    t = choose(op, sizes, n, consecutive_view(fabric, n), tables=TABLES).time_s
    busbw = busbw_bytes_per_s(op, sizes, n, t)
    return float(sizes[np.argmax(busbw >= 0.5 * busbw[-1])])


@pytest.mark.parametrize("op", ["all_reduce", "all_gather", "reduce_scatter"])
def test_ramp_midpoint_moves_to_larger_messages_with_ranks(op):
    mids = [_ramp_midpoint_bytes(op, racks) for racks in (1, 2, 4, 8, 20, 64)]
    assert all(b >= a for a, b in zip(mids, mids[1:], strict=False)), mids


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(["all_reduce", "all_gather", "reduce_scatter", "all_to_all",
                        "broadcast"]), st.integers(2, 64 * 72), st.floats(2.0**10, 2.0**35))
def test_static_hashing_is_never_faster_than_adaptive_in_the_model(op, n, size):
    times = {}
    for routing in ("adaptive", "ecmp"):
        _, fabric = _net(64, routing)
        times[routing] = float(choose(op, size, n, consecutive_view(fabric, n),
                                      tables=TABLES).time_s)
    assert times["ecmp"] >= times["adaptive"] * (1 - 1e-12)


@pytest.mark.parametrize(("op", "algorithm"), [("all_reduce", "ring"),
                                               ("all_reduce", "nvls_tree")])
def test_static_hashing_is_never_faster_than_adaptive_in_the_simulator(op, algorithm):
    net, fabric = _net(8)
    members = np.arange(72 * 8)
    adaptive = simulate(net, fabric, op, algorithm, members, (2.0**28,), routing="adaptive")
    for seed in range(3):
        ecmp = simulate(net, fabric, op, algorithm, members, (2.0**28,), routing="ecmp",
                        seed=seed)
        assert ecmp[0] >= adaptive[0] * (1 - 1e-9), seed


def test_the_model_prices_the_collisions_the_simulator_hashes():
    """Static ECMP on the 8-rack fabric, NVLS_TREE all-reduce at 256 MiB (its tree crosses
    the spines): the model's expected loss and the simulator's hashed runs (three seeds)
    are both slower than the balanced fabric; the model, which prices every uplink of the
    leaves the group spans as loaded, is the more pessimistic (docs/collectives.md,
    "Routing": a known gap, 1.6x against 1.2x)."""
    net, fabric = _net(8, "ecmp")
    n, size = 72 * 8, 2.0**28
    model = float(choose("all_reduce", size, n, consecutive_view(fabric, n), "nvls_tree",
                         tables=TABLES).time_s)
    balanced = float(choose("all_reduce", size, n, consecutive_view(_net(8)[1], n),
                            "nvls_tree", tables=TABLES).time_s)
    runs = [simulate(net, fabric, "all_reduce", "nvls_tree", np.arange(n), (size,), "ecmp",
                     s)[0] for s in range(3)]
    spray = simulate(net, fabric, "all_reduce", "nvls_tree", np.arange(n), (size,))[0]
    assert spray == pytest.approx(balanced, rel=TOL)
    assert min(runs) > spray * 1.05 and model > balanced * 1.05
    assert model >= np.mean(runs)


def test_expected_max_matches_a_direct_sum():
    """E[max] of Poisson counts against the distribution summed by hand, and the limits:
    one bin is the mean; many flows per port lose little; one flow per port a lot."""
    from math import exp, factorial

    mean, bins = 1.5, 3
    cdf = np.cumsum([exp(-mean) * mean**k / factorial(k) for k in range(60)])
    pmf_max = np.diff(np.concatenate([[0.0], cdf**bins]))
    assert expected_max_poisson(mean, bins) == pytest.approx(
        float(np.sum(np.arange(60) * pmf_max)), rel=1e-9)
    assert expected_max_poisson(4.0, 1) == 4.0
    assert collision_efficiency(2.0, 1) == 1.0
    assert collision_efficiency(1000.0, 64) > 0.85 > collision_efficiency(1.0, 64)
    assert collision_efficiency(2.0, 256) < collision_efficiency(2.0, 64) < 1.0

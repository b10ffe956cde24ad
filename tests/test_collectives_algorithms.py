"""Closed forms of the algorithms against textbook formulas and step-by-step simulations."""

from __future__ import annotations

import math

import numpy as np
import pytest

from supernode.collectives import (
    Fabric,
    FabricTier,
    busbw_bytes_per_s,
    collective_time_s,
    load_efficiency_tables,
    make_tier,
)
from supernode.collectives.efficiency import EfficiencyTable

ALPHA = 3e-6
B = 100e9


def flat(n_max: int = 64, in_network: bool = False) -> Fabric:
    return Fabric((FabricTier("flat", n_max, B, ALPHA, in_network, "ideal"),))


def two_tier(g0: int = 8, b1: float = 10e9, a1: float = 7e-6, size: int = 64) -> Fabric:
    return Fabric((FabricTier("up", g0, B, ALPHA, efficiency="ideal"),
                   FabricTier("out", size, b1, a1, efficiency="ideal")))


def t(op, s, n, fab, algorithm):
    return collective_time_s(op, s, n, fab, algorithm)[0]


# ---- step-by-step simulations, written independently of the library -------------------

def simulate_ring_single_tier(op: str, s: float, n: int, alpha: float, bw: float) -> float:
    """Ring of n ranks, data in n chunks; every step each rank forwards one chunk."""
    chunk = s / n
    holdings = [{r} for r in range(n)]  # chunks whose partial sum/copy rank r holds
    steps = 0
    passes = 2 if op == "all_reduce" else 1
    for _ in range(passes):
        for step in range(n - 1):
            sent = [(r, (r - step) % n) for r in range(n)]
            for r, c in sent:
                holdings[(r + 1) % n].add(c)
            steps += 1
    assert all(len(h) == n for h in holdings)
    return steps * (alpha + chunk / bw)


def simulate_ring_hop_latency(op: str, n: int, group: int, a0: float, a1: float) -> float:
    """A token passed rank 0 -> 1 -> ... around the ring; each hop costs its tier's α."""
    passes = 2 if op == "all_reduce" else 1
    per_pass = sum(a0 if r // group == (r + 1) // group else a1 for r in range(n - 1))
    return passes * per_pass


def simulate_multichannel_ring_bandwidth(s: float, n: int, g0: int, b0: float,
                                         b1: float) -> float:
    """All-reduce over g0 channel rings; channel c leaves each group through rank c's NIC.

    Returns the bandwidth time: every step each channel moves a chunk s/(g0·n) per hop;
    the step lasts as long as the busiest link (NVLink of a rank, or its NIC).
    """
    chunk = s / (g0 * n)
    load = {}
    for c in range(g0):
        order = [grp * g0 + (c + 1 + i) % g0 for grp in range(n // g0) for i in range(g0)]
        for i, r in enumerate(order):
            nxt = order[(i + 1) % n]
            link = ("nic", r) if r // g0 != nxt // g0 else ("nvl", r)
            load[link] = load.get(link, 0.0) + chunk
    step = max(v / (b1 if k[0] == "nic" else b0) for k, v in load.items())
    return 2 * (n - 1) * step


# ---- single tier: textbook α-β forms (Thakur et al. 2005) ------------------------------

@pytest.mark.parametrize("n", [2, 3, 8, 13, 32])
@pytest.mark.parametrize("op", ["all_reduce", "all_gather", "reduce_scatter"])
def test_ring_equals_step_simulation(op, n):
    s = 3.0e6
    assert t(op, s, n, flat(), "ring") == pytest.approx(
        simulate_ring_single_tier(op, s, n, ALPHA, B), rel=1e-12)


@pytest.mark.parametrize("n", [2, 4, 8, 64])
def test_halving_doubling_closed_form(n):
    s = 8.0e6
    expected = 2 * math.log2(n) * ALPHA + 2 * (n - 1) / n * s / B
    assert t("all_reduce", s, n, flat(), "halving_doubling") == pytest.approx(expected)
    assert t("reduce_scatter", s, n, flat(), "halving_doubling") == pytest.approx(expected / 2)


def test_halving_doubling_non_power_of_two_pays_two_extra_exchanges():
    s = 8.0e6
    base = 2 * 2 * ALPHA + 2 * (3 / 4) * s / B
    assert t("all_reduce", s, 6, flat(), "halving_doubling") == pytest.approx(
        base + 2 * (ALPHA + s / B))


@pytest.mark.parametrize("n", [3, 8, 16])
def test_tree_single_tier_is_a_chain(n):
    s = 5.0e6
    assert t("all_reduce", s, n, flat(), "tree") == pytest.approx(
        2 * (n - 1) * ALPHA + 2 * s / B)


@pytest.mark.parametrize("n", [2, 8, 16])
def test_in_switch_reduction_closed_form(n):
    s = 5.0e6
    fab = flat(in_network=True)
    assert t("all_reduce", s, n, fab, "nvls") == pytest.approx(2 * ALPHA + s * (n + 1) / n / B)
    assert t("all_reduce", s, n, fab, "in_switch") == t("all_reduce", s, n, fab, "nvls")
    assert math.isinf(t("all_reduce", s, n, flat(), "nvls"))


@pytest.mark.parametrize("n", [2, 8, 16])
def test_direct_all_to_all_is_pairwise_exchange(n):
    s = 5.0e6
    assert t("all_to_all", s, n, flat(), "direct") == pytest.approx(
        (n - 1) * ALPHA + (n - 1) / n * s / B)


def test_p2p_and_broadcast():
    s = 5.0e6
    assert t("p2p", s, 2, flat(), "p2p") == pytest.approx(ALPHA + s / B)
    assert t("broadcast", s, 8, flat(), "ring") == pytest.approx(7 * ALPHA + s / B)


def test_one_rank_costs_nothing():
    for op in ("all_reduce", "all_gather", "all_to_all", "broadcast"):
        assert collective_time_s(op, 1e6, 1, flat())[0] == 0.0


# ---- two tiers -------------------------------------------------------------------------

@pytest.mark.parametrize("n", [16, 24, 64])
@pytest.mark.parametrize("op", ["all_reduce", "all_gather"])
def test_ring_latency_counts_each_hop_at_its_tier(op, n):
    fab = Fabric((FabricTier("up", 8, 1e30, ALPHA, efficiency="ideal"),
                  FabricTier("out", 64, 1e30, 7e-6, efficiency="ideal")))
    assert t(op, 1.0, n, fab, "ring") == pytest.approx(
        simulate_ring_hop_latency(op, n, 8, ALPHA, 7e-6), rel=1e-9)


@pytest.mark.parametrize("n", [16, 32, 64])
def test_multichannel_ring_bandwidth_matches_simulation_when_nics_bind(n):
    fab = Fabric((FabricTier("up", 8, B, 0.0, efficiency="ideal"),
                  FabricTier("out", 64, 5e9, 0.0, efficiency="ideal")))
    s = 1.0e8
    assert t("all_reduce", s, n, fab, "ring") == pytest.approx(
        simulate_multichannel_ring_bandwidth(s, n, 8, B, 5e9), rel=1e-9)


def test_two_node_tree_sends_s_across():
    fab = two_tier(g0=8, b1=10e9, a1=0.0)
    fab = Fabric((FabricTier("up", 8, B, 0.0, efficiency="ideal"), fab.tiers[1]))
    s = 1.0e9
    # inner chain: 2S/B; two groups: each sends S over its 8 NICs
    assert t("all_reduce", s, 16, fab, "tree") == pytest.approx(max(2 * s / B, s / 80e9))
    assert t("all_reduce", s, 32, fab, "tree") == pytest.approx(max(2 * s / B, 2 * s / 80e9))


def test_hierarchical_closed_form():
    fab = two_tier(g0=8, b1=10e9, a1=7e-6)
    s, n, m = 6.4e7, 32, 4
    inner = 2 * (7 * ALPHA + 7 / 8 * s / B)
    across = min(2 * (m - 1) * 7e-6 + 2 * (m - 1) / m * (s / 8) / 10e9,  # ring of rails
                 2 * 2 * 7e-6 + 2 * (m - 1) / m * (s / 8) / 10e9)        # halving-doubling
    assert t("all_reduce", s, n, fab, "hierarchical") == pytest.approx(inner + across)


def test_hierarchical_all_to_all_closed_form():
    fab = two_tier(g0=8, b1=10e9, a1=7e-6)
    s, n, m = 6.4e7, 32, 4
    expected = (7 * ALPHA + 7 / 8 * s / B) + ((m - 1) * 7e-6 + (m - 1) / m * s / 10e9)
    assert t("all_to_all", s, n, fab, "hierarchical_a2a") == pytest.approx(expected)


def test_direct_all_to_all_crossing_bounded_by_slow_tier_and_oversubscription():
    base = two_tier(g0=8, b1=10e9, a1=0.0, size=64)
    over = Fabric((base.tiers[0], FabricTier("out", 64, 10e9, 0.0, efficiency="ideal",
                                             oversubscription=2.0)))
    s, n = 1e9, 64
    cross = s * (n - 8) / n
    t_base = t("all_to_all", s, n, base, "direct") - 7 * ALPHA
    assert t_base == pytest.approx(cross / 10e9)
    assert t("all_to_all", s, n, over, "direct") - 7 * ALPHA == pytest.approx(2 * cross / 10e9)


# ---- calibrated tables -------------------------------------------------------------------

def test_large_ring_all_reduce_busbw_tends_to_b_eta():
    tables = load_efficiency_tables()
    for name, bw in (("nvlink3", 300e9), ("nvlink4", 450e9)):
        fab = Fabric((make_tier("up", 8, bw, name),))
        time_s, algo = collective_time_s("all_reduce", 1e13, 8, fab)
        assert algo == "ring"
        peak = bw * tables[name].simple_efficiency
        assert busbw_bytes_per_s("all_reduce", 1e13, 8, time_s) == pytest.approx(peak, rel=1e-3)


def test_nvls_busbw_exceeds_link_rate_on_h200():
    fab = Fabric((make_tier("up", 8, 450e9, "nvlink4", in_network_reduction=True),))
    time_s, algo = collective_time_s("all_reduce", 8 * 2**30, 8, fab)
    assert algo == "nvls"
    assert 450e9 < busbw_bytes_per_s("all_reduce", 8 * 2**30, 8, time_s) < 500e9


def test_inter_node_rule_of_thumb_24_gbyte_per_s_per_hdr_nic():
    """Ring over 2 nodes of 8 A100 with one 200 Gb/s NIC each: ~8 x 24 GB/s busbw."""
    fab = Fabric((make_tier("up", 8, 300e9, "nvlink3"), make_tier("out", 16, 25e9,
                                                                   "infiniband_hdr")))
    time_s, _ = collective_time_s("all_reduce", 8 * 2**30, 16, fab, "ring")
    assert busbw_bytes_per_s("all_reduce", 8 * 2**30, 16, time_s) == pytest.approx(
        8 * 24e9, rel=0.02)


def test_small_messages_use_the_latency_protocol():
    table = EfficiencyTable("t", 1e-6, 0.8, 1e7, ll128_efficiency=0.4)
    fab = Fabric((FabricTier("up", 8, B, 1e-6, efficiency="t"),))
    small, _ = collective_time_s("all_reduce", 1e4, 8, fab, "ring", tables={"t": table})
    large, _ = collective_time_s("all_reduce", 1e10, 8, fab, "ring", tables={"t": table})
    w = 1.75
    assert small == pytest.approx(14e-6 + w * 1e4 / (0.4 * B))
    assert large == pytest.approx(14e-6 + (w * 1e10 + 1e7) / (0.8 * B))


def test_selection_returns_argmin_per_element():
    fab = Fabric((make_tier("up", 8, 450e9, "nvlink4", in_network_reduction=True),))
    sizes = np.array([2.0**20, 2.0**33])
    times, algos = collective_time_s("all_reduce", sizes, 8, fab)
    assert list(algos) == ["ring", "nvls"]
    for s, time_s, algo in zip(sizes, times, algos, strict=True):
        assert time_s == collective_time_s("all_reduce", s, 8, fab, algo)[0]

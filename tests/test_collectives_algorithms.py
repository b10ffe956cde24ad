"""Closed forms of the schedules against textbook formulas and step-by-step simulations.

With line-rate tables (efficiency 1, no protocol or base latency, no fill) every schedule
reduces to an α-β formula in the tier's one-way latency α and per-rank bandwidth B.
"""

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
from supernode.collectives.efficiency import EfficiencyTable, Tables, ideal_tables
from supernode.collectives.trees import TREE_EFFICIENCY, double_tree, tree_sends
from supernode.errors import InputError

ALPHA = 3e-6
B = 100e9
IDEAL = ideal_tables(load_efficiency_tables())


def flat(n_max: int = 64, in_network: bool = False, kind: str = "switch") -> Fabric:
    return Fabric((FabricTier("flat", n_max, B, ALPHA, in_network, "ideal", kind=kind),))


def two_tier(g0: int = 8, b1: float = 10e9, a1: float = 7e-6, size: int = 64,
             over: float = 1.0) -> Fabric:
    return Fabric((FabricTier("up", g0, B, ALPHA, efficiency="ideal"),
                   FabricTier("out", size, b1, a1, efficiency="ideal", oversubscription=over,
                              kind="nic")))


def t(op, s, n, fab, algorithm, tables=IDEAL):
    return collective_time_s(op, s, n, fab, algorithm, tables=tables)[0]


# ---- step-by-step simulations, written independently of the library -------------------

def simulate_ring_single_tier(op: str, s: float, n: int, alpha: float, bw: float) -> float:
    """Ring of n ranks, data in n chunks; every step each rank forwards one chunk."""
    chunk = s / n
    holdings = [{r} for r in range(n)]
    steps = 0
    for _ in range(2 if op == "all_reduce" else 1):
        for step in range(n - 1):
            for r, c in [(r, (r - step) % n) for r in range(n)]:
                holdings[(r + 1) % n].add(c)
            steps += 1
    assert all(len(h) == n for h in holdings)
    return steps * (alpha + chunk / bw)


def simulate_ring_hop_latency(op: str, n: int, group: int, a0: float, a1: float) -> float:
    """A token passed rank 0 -> 1 -> ... around the ring; each hop costs its tier's α."""
    per_pass = sum(a0 if r // group == (r + 1) // group else a1 for r in range(n - 1))
    return (2 if op == "all_reduce" else 1) * per_pass


def simulate_multichannel_ring_bandwidth(s: float, n: int, g0: int, b0: float,
                                         b1: float) -> float:
    """All-reduce over g0 channel rings; channel c leaves each group through rank c's NIC.

    Every step each channel moves a chunk s/(g0·n) per hop; the step lasts as long as the
    busiest port (NVLink of a rank, or its NIC).
    """
    chunk = s / (g0 * n)
    load: dict[tuple[str, int], float] = {}
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
def test_tree_inside_one_part_is_a_chain(n):
    """NCCL's tree on one node is a chain per channel, every rank heading two channels:
    ``2(n-1)α`` and ``2(1 - 1/n)·S`` per rank, at NCCL's tree factor 0.92."""
    s = 5.0e6
    assert t("all_reduce", s, n, flat(), "tree") == pytest.approx(
        2 * (n - 1) * ALPHA + 2 * (1 - 1 / n) * s / (TREE_EFFICIENCY * B))


@pytest.mark.parametrize("n", [2, 8, 16])
def test_in_switch_reduction_closed_form(n):
    s = 5.0e6
    fab = flat(in_network=True)
    assert t("all_reduce", s, n, fab, "nvls") == pytest.approx(ALPHA + s * (n + 1) / n / B)
    assert t("all_reduce", s, n, fab, "in_switch") == t("all_reduce", s, n, fab, "nvls")
    assert t("all_gather", s, n, fab, "nvls") == pytest.approx(ALPHA + (n - 1) / n * s / B)
    with pytest.raises(InputError, match="in-switch reduction"):
        t("all_reduce", s, n, flat(), "nvls")


@pytest.mark.parametrize("n", [2, 8, 16])
def test_direct_all_to_all_is_one_concurrent_exchange(n):
    """Every send and receive is posted at once (NCCL grouped p2p): one step of latency,
    not ``n - 1`` in series (64 ranks, 64 KiB used to cost 296.8 µs against 4.9 µs in the
    simulator)."""
    s = 5.0e6
    assert t("all_to_all", s, n, flat(), "direct") == pytest.approx(
        ALPHA + (n - 1) / n * s / B)


def test_p2p_and_broadcast():
    s = 5.0e6
    assert t("p2p", s, 2, flat(), "p2p") == pytest.approx(ALPHA + s / B)
    assert t("broadcast", s, 8, flat(), "ring") == pytest.approx(7 * ALPHA + s / B)


def test_one_rank_costs_nothing():
    for op in ("all_reduce", "all_gather", "all_to_all", "broadcast"):
        assert collective_time_s(op, 1e6, 1, flat())[0] == 0.0


# ---- layouts inside a domain -----------------------------------------------------------

def test_full_mesh_ring_uses_every_link_and_a_torus_ring_two_ports():
    s = 64e6
    mesh = Fabric((FabricTier("mesh", 8, 7 * 64e9, 0.0, efficiency="ideal", kind="full_mesh"),))
    assert t("all_reduce", s, 8, mesh, "ring") == pytest.approx(2 * 7 / 8 * s / (7 * 64e9))
    torus = Fabric((FabricTier("t", 16, 6 * 45e9, 0.0, efficiency="ideal", kind="torus",
                               dims=(16,), dim_bandwidth_bytes_per_s=(45e9,)),))
    # a ring along one wrapped dimension: one way on each of its 2 ports, not 6 ports
    ring = t("all_reduce", s, 16, torus, "ring")
    assert ring == pytest.approx(2 * 15 / 16 * s / (2 * 45e9))
    busbw = busbw_bytes_per_s("all_reduce", s, 16, ring)
    assert busbw == pytest.approx(90e9) and busbw < 6 * 45e9
    line = Fabric((FabricTier("m", 16, 2 * 45e9, 0.0, efficiency="ideal", kind="torus",
                              dims=(16,), wraparound=False, dim_bandwidth_bytes_per_s=(45e9,)),))
    assert t("all_reduce", s, 16, line, "ring") == pytest.approx(2 * ring)  # back on a line


def test_dimension_ordered_rings_work_every_dimension_at_once():
    s = 64e6
    torus = Fabric((FabricTier("t", 16, 4 * 45e9, 0.0, efficiency="ideal", kind="torus",
                               dims=(4, 4), dim_bandwidth_bytes_per_s=(45e9, 45e9)),))
    dor = t("all_reduce", s, 16, torus, "dimension_ordered")
    # two halves, each reduce-scattered along x then y (and back), both dims busy at once
    per_port = 2 * (3 / 4 * s / 2 + 3 / 4 * s / 8) / 2
    assert dor == pytest.approx(per_port / 45e9)
    assert busbw_bytes_per_s("all_reduce", s, 16, dor) == pytest.approx(4 * 45e9)


# ---- two tiers -------------------------------------------------------------------------

@pytest.mark.parametrize("n", [16, 24, 64])
@pytest.mark.parametrize("op", ["all_reduce", "all_gather"])
def test_ring_latency_counts_each_hop_at_its_tier(op, n):
    fab = Fabric((FabricTier("up", 8, 1e30, ALPHA, efficiency="ideal"),
                  FabricTier("out", 64, 1e30, 7e-6, efficiency="ideal", kind="nic")))
    assert t(op, 1.0, n, fab, "ring") == pytest.approx(
        simulate_ring_hop_latency(op, n, 8, ALPHA, 7e-6), rel=1e-9)


@pytest.mark.parametrize("n", [16, 32, 64])
def test_multichannel_ring_bandwidth_matches_simulation_when_nics_bind(n):
    fab = Fabric((FabricTier("up", 8, B, 0.0, efficiency="ideal"),
                  FabricTier("out", 64, 5e9, 0.0, efficiency="ideal", kind="nic")))
    s = 1.0e8
    assert t("all_reduce", s, n, fab, "ring") == pytest.approx(
        simulate_multichannel_ring_bandwidth(s, n, 8, B, 5e9), rel=1e-9)


def test_nccl_double_binary_tree_structure():
    """NCCL's trees (src/graph/trees.cc): 14 nodes as in its comment, then mirrored."""
    first, second = double_tree(14)
    assert first.tolist() == [-1, 2, 4, 2, 8, 6, 4, 6, 0, 10, 12, 10, 8, 12]
    assert second.tolist() == [13 - p if p >= 0 else -1 for p in first[::-1]]
    assert (first == -1).sum() == (second == -1).sum() == 1
    assert tree_sends(2).tolist() == [2.0, 2.0]
    assert tree_sends(16).max() == 4.0  # up and two children in one tree, up in the other


def test_two_node_tree_sends_s_across():
    fab = two_tier(g0=8, b1=10e9, a1=0.0)
    fab = Fabric((FabricTier("up", 8, B, 0.0, efficiency="ideal"), fab.tiers[1]))
    s = 1.0e9
    chain = 2 * (1 - 1 / 8) * s / B
    # two nodes: each sends S over its 8 NICs; more nodes: interior ones send 2S
    assert t("all_reduce", s, 16, fab, "tree") == pytest.approx(
        max(chain, s / 80e9) / TREE_EFFICIENCY)
    assert t("all_reduce", s, 64, fab, "tree") == pytest.approx(
        max(chain, 2 * s / 80e9) / TREE_EFFICIENCY)


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
    expected = (ALPHA + 7 / 8 * s / B) + (7e-6 + (m - 1) / m * s / 10e9)
    assert t("all_to_all", s, n, fab, "hierarchical_a2a") == pytest.approx(expected)


def test_direct_all_to_all_crossing_bounded_by_nics_and_oversubscription():
    base, over = two_tier(g0=8, b1=10e9, a1=0.0), two_tier(g0=8, b1=10e9, a1=0.0, over=2.0)
    s, n = 1e9, 64
    cross = s * (n - 8) / n
    assert t("all_to_all", s, n, base, "direct") == pytest.approx(cross / 10e9)
    assert t("all_to_all", s, n, over, "direct") == pytest.approx(2 * cross / 10e9)


def test_straddling_group_is_bound_by_its_smallest_part():
    """100 ranks on 72-rank domains: 72 + 28, the 28 ranks' NICs carry the ring's exit."""
    fab = Fabric((FabricTier("up", 72, 900e9, 0.0, efficiency="ideal"),
                  FabricTier("out", 144, 50e9, 0.0, efficiency="ideal", kind="nic")))
    s = 1e9
    w = 2 * 99 / 100 * s
    assert t("all_reduce", s, 100, fab, "ring") == pytest.approx(max(w / 900e9, w / 28 / 50e9))


# ---- protocols and calibrated tables ---------------------------------------------------

def test_large_ring_all_reduce_busbw_tends_to_b_eta():
    tables = load_efficiency_tables()
    for name, bw in (("nvlink3", 300e9), ("xgmi", 448e9)):
        fab = Fabric((make_tier("up", 8, bw, name, kind="full_mesh" if name == "xgmi"
                                else "switch"),))
        time_s, algo = collective_time_s("all_reduce", 1e13, 8, fab)
        assert algo == "ring"
        peak = bw * tables[name].simple_efficiency
        assert busbw_bytes_per_s("all_reduce", 1e13, 8, time_s) == pytest.approx(peak, rel=1e-3)


def test_nvls_busbw_exceeds_link_rate_on_h200_but_not_on_mi300x():
    fab = Fabric((make_tier("up", 8, 450e9, "nvlink4", in_network_reduction=True),))
    time_s, algo = collective_time_s("all_reduce", 8 * 2**30, 8, fab)
    assert algo == "nvls"
    assert 450e9 < busbw_bytes_per_s("all_reduce", 8 * 2**30, 8, time_s) < 500e9
    amd = Fabric((make_tier("up", 8, 448e9, "xgmi", kind="full_mesh"),))
    assert collective_time_s("all_reduce", 8 * 2**30, 8, amd)[1] == "ring"


def test_small_messages_use_the_latency_protocols():
    table = EfficiencyTable("t", 0.8, 1e7, 4e-6, ll128_ratio=0.9, ll_ratio=0.5,
                            ll_latency_s=1e-6, ll128_latency_s=2e-6)
    tables = Tables({"t": table})
    fab = Fabric((FabricTier("up", 8, B, 0.0, efficiency="t"),))
    w = 1.75
    t_ll = 14e-6 + w * 1e3 / (0.4 * B)
    assert t("all_reduce", 1e3, 8, fab, "ring", tables) == pytest.approx(t_ll)
    t_ll128 = 28e-6 + w * 1e7 / (0.72 * B)
    assert t("all_reduce", 1e7, 8, fab, "ring", tables) == pytest.approx(t_ll128)
    t_simple = 56e-6 + (w * 1e10 + 1e7) / (0.8 * B)
    assert t("all_reduce", 1e10, 8, fab, "ring", tables) == pytest.approx(t_simple)


def test_selection_returns_argmin_per_element():
    fab = Fabric((make_tier("up", 8, 450e9, "nvlink4", in_network_reduction=True),))
    sizes = np.array([2.0**20, 2.0**33])
    times, algos = collective_time_s("all_reduce", sizes, 8, fab)
    assert list(algos) == ["ring", "nvls"]
    for s, time_s, algo in zip(sizes, times, algos, strict=True):
        assert time_s == collective_time_s("all_reduce", s, 8, fab, algo)[0]


def test_forced_algorithm_that_cannot_run_says_why():
    fab = Fabric((make_tier("up", 8, 450e9, "nvlink4", in_network_reduction=True),))
    with pytest.raises(InputError, match="several parts"):
        collective_time_s("all_reduce", 2**20, 8, fab, "hierarchical")
    with pytest.raises(InputError, match="does not perform"):
        collective_time_s("all_to_all", 2**20, 8, fab, "ring")
    with pytest.raises(InputError, match="one rank per scale-up domain"):
        collective_time_s("all_gather", 2**20, 8, fab, "pat")


def test_phase_number_reads_numeric_parameters_and_refuses_others():
    """Phase.number: an int, a float, a numpy scalar or a bool as a float (the int and
    float fast path and the SupportsFloat check agree); text is a TypeError."""
    import numpy as np

    from supernode.collectives.schedule import Phase

    phase = Phase("ring", "group", (), (), 1.0, params=(
        ("i", 3), ("f", 0.5), ("n", np.float32(0.25)), ("b", True), ("s", "x")))
    assert [phase.number(k, 0.0) for k in "ifnb"] == [3.0, 0.5, 0.25, 1.0]
    assert type(phase.number("i", 0.0)) is float and phase.number("missing", 7) == 7.0
    with pytest.raises(TypeError, match="not a number"):
        phase.number("s", 0.0)

"""Invariants every algorithm must satisfy, over random fabrics (hypothesis).

Physical bounds, independent of any algorithm: whatever crosses a tier goes through the
ports of the smallest part behind it (its ``smallest`` ranks' NICs, or their share of the
leaf's uplinks), at no more than the line rate times the best efficiency the tier's table
allows (Simple, or the in-network engine where the switches reduce):

* all-reduce: every element leaves each part once (its partial sum, or the result),
  ``S`` out of the part; reduce-scatter, all-gather and all-to-all: ``(n - b)/n · S``
  per part of ``b`` ranks; broadcast/reduce: ``S`` into (out of) a part without the root.
"""

from __future__ import annotations

import numpy as np
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from supernode.collectives import (
    Fabric,
    FabricTier,
    algorithm_names,
    busbw_bytes_per_s,
    collective_time_s,
    get_algorithm,
    group_levels,
    load_efficiency_tables,
)
from supernode.errors import InputError

TABLES = load_efficiency_tables()
UP_TABLES = ("ideal", "nvlink3", "nvlink4", "nvlink5", "xgmi")
OUT_TABLES = ("ideal", "infiniband_ndr", "infiniband_xdr", "roce")
SETTINGS = settings(max_examples=40, deadline=None)
OPS = st.sampled_from(["all_reduce", "all_gather", "reduce_scatter", "all_to_all",
                       "broadcast", "reduce", "p2p"])


@st.composite
def fabrics(draw, max_tiers: int = 3) -> Fabric:
    size = draw(st.sampled_from([1, 2, 4, 8]))
    kind = draw(st.sampled_from(["switch", "full_mesh"]))
    tiers = [FabricTier("t0", size if size > 1 else 2, draw(st.floats(1e10, 1e12)),
                        draw(st.floats(0.0, 2e-6)), draw(st.booleans()) and kind == "switch",
                        draw(st.sampled_from(UP_TABLES)), kind=kind)]
    size = tiers[0].group_size
    for j in range(1, draw(st.integers(1, max_tiers))):
        size *= draw(st.sampled_from([2, 4, 8]))
        tiers.append(FabricTier(
            f"t{j}", size, draw(st.floats(1e9, 1e11)), draw(st.floats(0.0, 2e-5)),
            draw(st.booleans()), draw(st.sampled_from(OUT_TABLES)),
            draw(st.sampled_from([1.0, 1.0, 2.0, 4.0])), "nic"))
    return Fabric(tuple(tiers))


def _ranks(draw, fab: Fabric) -> int:
    return draw(st.integers(2, min(fab.capacity, 256)))


def _algorithms(op: str) -> list[str | None]:
    return [a for a in algorithm_names() if op in get_algorithm(a).ops] + [None]


def _time(op, s, n, fab, algorithm):
    """Seconds, or None where the (forced) algorithm cannot run on this group."""
    try:
        return collective_time_s(op, s, n, fab, algorithm)[0]
    except InputError:
        assert algorithm is not None  # the automatic choice always runs
        return None


def _eta_max(tier: FabricTier) -> float:
    table = TABLES[tier.efficiency]
    eta = table.simple_efficiency
    if tier.in_network_reduction and table.in_network_efficiency:
        eta = max(eta, table.in_network_efficiency)
    return eta


@SETTINGS
@given(data=st.data(), op=OPS)
def test_time_is_monotone_in_message_size(data, op):
    fab = data.draw(fabrics())
    n = _ranks(data.draw, fab)
    sizes = np.sort(np.array(data.draw(st.lists(st.floats(0.0, 1e10), min_size=2,
                                                 max_size=6))))
    for algorithm in _algorithms(op):
        try:
            times, _ = collective_time_s(op, sizes, n, fab, algorithm)
        except InputError:
            assert algorithm is not None
            continue
        assert np.all(times >= 0) and np.all(np.isfinite(times))
        assert np.all(np.diff(times) >= -1e-12 * times[1:]), algorithm


@SETTINGS
@given(data=st.data(), op=OPS)
def test_vectorised_equals_scalar(data, op):
    fab = data.draw(fabrics())
    k = data.draw(st.integers(1, 5))
    sizes = np.array(data.draw(st.lists(st.floats(0.0, 1e10), min_size=k, max_size=k)))
    ranks = np.array([_ranks(data.draw, fab) for _ in range(k)])
    times, names = collective_time_s(op, sizes, ranks, fab)
    for s, n, t_vec, name in zip(sizes, ranks, times, names, strict=True):
        t_one, name_one = collective_time_s(op, float(s), int(n), fab)
        assert t_one == t_vec and name_one == name


@SETTINGS
@given(data=st.data(), op=OPS)
def test_no_algorithm_beats_the_slowest_tier_it_crosses(data, op):
    """Time ≥ the bytes that must cross each tier over the smallest part's ports there, at
    the best efficiency the tier allows (in-switch reduction included)."""
    fab = data.draw(fabrics())
    n = _ranks(data.draw, fab)
    size = data.draw(st.floats(1e3, 1e11))
    levels = group_levels(fab, n, TABLES)
    for algorithm in _algorithms(op):
        t = _time(op, size, n, fab, algorithm)
        if t is None:
            continue
        for lv in levels[1:]:
            if not lv.used:
                continue
            b = lv.smallest
            must = {"all_reduce": size, "broadcast": size, "reduce": size, "p2p": size
                    }.get(op, (n - b) / n * size)
            ports = 1 if op == "p2p" else b
            cap = ports * lv.tier.bandwidth_bytes_per_s * _eta_max(lv.tier) \
                / lv.tier.oversubscription
            assert t >= must / cap * (1 - 1e-9), (algorithm, lv.tier.name, t, must / cap)
        if len([lv for lv in levels if lv.used]) == 1 and op in ("all_reduce", "all_gather",
                                                                   "reduce_scatter"):
            inner = levels[0].tier
            bus = busbw_bytes_per_s(op, size, n, t)
            limit = (2.0 if inner.in_network_reduction else 1.0) * inner.bandwidth_bytes_per_s \
                * _eta_max(inner)
            assert bus <= limit * (1 + 1e-9), (algorithm, bus, limit)


@SETTINGS
@given(g=st.sampled_from([4, 8, 16]), b0=st.floats(1e11, 1e12), slow=st.floats(2.0, 50.0),
       a0=st.floats(0.0, 5e-6), a1=st.floats(0.0, 2e-5), s=st.floats(1e3, 1e10),
       table=st.sampled_from(UP_TABLES))
def test_ring_time_grows_with_ranks_at_fixed_bytes_per_rank(g, b0, slow, a0, a1, s, table):
    """Inside a switched domain every added rank adds a step; across domains (whole ones)
    every added domain too, when a domain's NICs together carry at most half of one
    rank's scale-up rate (well inside the supernode cliff of the seeds: 9-18x per GPU).
    (Not inside a full mesh: part of one has fewer links, and a ring over more of it uses
    more of them.)"""
    b1 = b0 / (g * slow)
    fab = Fabric((FabricTier("up", g, b0, a0, efficiency=table),
                  FabricTier("out", 16 * g, b1, a1, efficiency="infiniband_ndr", kind="nic")))
    inside = [collective_time_s("all_reduce", s, n, fab, "ring")[0] for n in range(2, g + 1)]
    assert np.all(np.diff(inside) >= -1e-15)
    across = [collective_time_s("all_reduce", s, k * g, fab, "ring")[0] for k in range(1, 17)]
    assert np.all(np.diff(across) >= -1e-15)
    gather = [collective_time_s("all_gather", s * k * g, k * g, fab, "ring")[0]
              for k in range(1, 17)]  # S/n per rank fixed
    assert np.all(np.diff(gather) >= -1e-15)


@SETTINGS
@given(data=st.data())
def test_all_to_all_across_supernodes_is_never_faster_than_the_nics(data):
    fab = data.draw(fabrics())
    assume(len(fab.tiers) > 1)
    n = data.draw(st.integers(fab.tiers[0].group_size + 1, min(fab.capacity, 256)))
    size = data.draw(st.floats(1e3, 1e11))
    level = group_levels(fab, n, TABLES)[1]
    nic = level.tier.bandwidth_bytes_per_s * TABLES[level.tier.efficiency].simple_efficiency
    floor = (n - level.smallest) / n * size / nic
    for algorithm in ("direct", "hierarchical_a2a", None):
        t = _time("all_to_all", size, n, fab, algorithm)
        if t is not None:
            assert t >= floor * (1 - 1e-9), (algorithm, t, floor)


@SETTINGS
@given(g0=st.sampled_from([2, 4, 8]), m=st.integers(2, 16), b0=st.floats(1e10, 1e12),
       slow=st.floats(1.0, 100.0), a0=st.floats(0.0, 1e-5), a1=st.floats(0.0, 1e-5),
       s=st.floats(1e3, 1e11))
def test_hierarchical_beats_flat_ring_when_the_slow_tier_is_much_slower(g0, m, b0, slow, a0,
                                                                        a1, s):
    n = g0 * m
    b1 = b0 / (g0 * m * slow)
    fab = Fabric((FabricTier("up", g0, b0, a0, efficiency="ideal"),
                  FabricTier("out", 16 * g0, b1, a1, efficiency="ideal", kind="nic")))
    hier, _ = collective_time_s("all_reduce", s, n, fab, "hierarchical")
    ring, _ = collective_time_s("all_reduce", s, n, fab, "ring")
    assert hier <= ring * (1 + 1e-9)

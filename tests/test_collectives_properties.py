"""Invariants every algorithm must satisfy, over random fabrics (hypothesis)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from supernode.collectives import (
    Fabric,
    FabricTier,
    algorithm_names,
    busbw_bytes_per_s,
    collective_time_s,
    get_algorithm,
    load_efficiency_tables,
)

TABLES = ("ideal", "nvlink3", "nvlink4", "nvlink5", "infiniband_hdr", "infiniband_ndr")
IN_NETWORK = {"nvls", "nvls_tree"}
SETTINGS = settings(max_examples=60, deadline=None)


@st.composite
def fabrics(draw, max_tiers: int = 3) -> Fabric:
    tiers = []
    size = draw(st.sampled_from([1, 2, 4, 8]))
    for j in range(draw(st.integers(1, max_tiers))):
        if j:
            size *= draw(st.sampled_from([2, 4, 8]))
        tiers.append(FabricTier(
            name=f"t{j}",
            group_size=size,
            bandwidth_bytes_per_s=draw(st.floats(1e9, 1e12)),
            latency_s=draw(st.floats(0.0, 2e-5)),
            in_network_reduction=draw(st.booleans()),
            efficiency=draw(st.sampled_from(TABLES)),
            oversubscription=draw(st.sampled_from([1.0, 1.0, 2.0, 4.0])),
        ))
    if tiers[0].group_size == 1 and len(tiers) == 1:
        tiers[0] = FabricTier("t0", 2, 1e11, 1e-6, efficiency="ideal")
    return Fabric(tuple(tiers))


def _ranks(draw, fab: Fabric) -> int:
    return draw(st.integers(2, min(fab.capacity, 512)))


def _algorithms(op: str) -> list[str]:
    return [a for a in algorithm_names() if op in get_algorithm(a).ops] + [None]


OPS = st.sampled_from(["all_reduce", "all_gather", "reduce_scatter", "all_to_all",
                       "broadcast", "reduce", "p2p"])


@SETTINGS
@given(data=st.data(), op=OPS)
def test_time_is_monotone_in_message_size(data, op):
    fab = data.draw(fabrics())
    n = _ranks(data.draw, fab)
    sizes = np.sort(np.array(data.draw(st.lists(st.floats(0.0, 1e10), min_size=2,
                                                 max_size=6))))
    for algorithm in _algorithms(op):
        times, _ = collective_time_s(op, sizes, n, fab, algorithm)
        finite = np.isfinite(times)
        assert np.all(times >= 0)
        assert np.all(np.diff(times[finite]) >= -1e-12 * times[finite][1:]), algorithm
        if algorithm is None:
            assert np.all(finite)


@SETTINGS
@given(data=st.data(), op=OPS)
def test_vectorised_equals_scalar(data, op):
    fab = data.draw(fabrics())
    k = data.draw(st.integers(1, 5))
    sizes = np.array(data.draw(st.lists(st.floats(0.0, 1e10), min_size=k, max_size=k)))
    ranks = np.array([_ranks(data.draw, fab) for _ in range(k)])
    for algorithm in _algorithms(op):
        times, names = collective_time_s(op, sizes, ranks, fab, algorithm)
        for s, n, t_vec, name in zip(sizes, ranks, times, names, strict=True):
            t_one, name_one = collective_time_s(op, float(s), int(n), fab, algorithm)
            assert t_one == t_vec or (np.isinf(t_one) and np.isinf(t_vec))
            assert name_one == name


@SETTINGS
@given(data=st.data(), op=OPS)
def test_busbw_never_exceeds_injection_bandwidth_without_in_network_reduction(data, op):
    fab = data.draw(fabrics())
    n = _ranks(data.draw, fab)
    size = data.draw(st.floats(1.0, 1e11))
    tables = load_efficiency_tables()
    crossed = fab.tiers_crossed(n)
    injection = sum(t.bandwidth_bytes_per_s for t in crossed)
    for algorithm in _algorithms(op):
        if algorithm in IN_NETWORK:
            continue
        candidates = tuple(a for a in algorithm_names() if a not in IN_NETWORK)
        time_s, _ = collective_time_s(op, size, n, fab, algorithm,
                                      candidates=None if algorithm else candidates)
        if not np.isfinite(time_s):
            continue
        bus = busbw_bytes_per_s(op, size, n, time_s)
        assert bus <= injection * (1 + 1e-6), (algorithm, bus, injection)
        if len(crossed) == 1:
            eta = tables[crossed[0].efficiency].simple_efficiency
            assert bus <= crossed[0].bandwidth_bytes_per_s * eta * (1 + 1e-6)


@SETTINGS
@given(n=st.integers(2, 64), bw=st.floats(1e10, 1e12), s=st.floats(1e3, 1e10))
def test_nvls_busbw_may_exceed_link_rate_but_stays_below_twice_it(n, bw, s):
    fab = Fabric((FabricTier("up", 64, bw, 1e-6, True, "ideal"),))
    time_s, _ = collective_time_s("all_reduce", s, n, fab, "nvls")
    bus = busbw_bytes_per_s("all_reduce", s, n, time_s)
    assert bus <= 2 * (n - 1) / (n + 1) * bw * (1 + 1e-9)


@SETTINGS
@given(g0=st.sampled_from([2, 4, 8]), m=st.integers(2, 16), b0=st.floats(1e10, 1e12),
       slow=st.floats(1.0, 100.0), a0=st.floats(0.0, 1e-5), a1=st.floats(0.0, 1e-5),
       s=st.floats(1e3, 1e11))
def test_hierarchical_beats_flat_ring_when_the_slow_tier_is_much_slower(g0, m, b0, slow, a0,
                                                                        a1, s):
    n = g0 * m
    b1 = b0 / (g0 * m * slow)
    fab = Fabric((FabricTier("up", g0, b0, a0, efficiency="ideal"),
                  FabricTier("out", 16 * g0, b1, a1, efficiency="ideal")))
    hier, _ = collective_time_s("all_reduce", s, n, fab, "hierarchical")
    ring, _ = collective_time_s("all_reduce", s, n, fab, "ring")
    assert hier <= ring * (1 + 1e-9)

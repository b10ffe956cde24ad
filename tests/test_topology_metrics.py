"""Closed-form domain metrics against graph algorithms on small instances (differential).

Bisection: the closed forms give the min cut between *canonical halves* (see
``domain_metrics``); the tests check them against networkx max-flow between the same
halves, and, for graphs of accelerators only (full mesh, torus, mesh), against the exact
minimum balanced bisection found by enumerating every split.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from supernode.topology import (
    LinkType,
    SwitchType,
    full_mesh,
    nvswitch_domain,
    switched_two_tier,
    torus,
)
from supernode.topology.domain_metrics import (
    full_mesh_metrics,
    switched_metrics,
    two_tier_metrics,
)
from supernode.topology.grid_metrics import _group_half, cut_axis, hybrid_metrics, torus_metrics
from supernode.topology.hybrid import hybrid
from supernode.topology.verify import (
    accelerator_hops,
    accelerators,
    cut_capacity,
    graph_counts,
    min_bisection_bruteforce,
)

UNIT = LinkType(1.0)


def _index_halves(g, first_a: int):
    accs = sorted(accelerators(g))
    return [a for a in accs if a[1] < first_a], [a for a in accs if a[1] >= first_a]


@pytest.mark.parametrize("n", range(2, 11))
def test_full_mesh_metrics(n):
    g = full_mesh(n, UNIT)
    m = full_mesh_metrics(n, 1.0)
    assert m.links["scale_up"] == g.number_of_edges()
    assert (m.diameter_hops, m.mean_hops) == accelerator_hops(g)
    assert m.bisection_bytes_per_s == min_bisection_bruteforce(g) == (n // 2) * (n - n // 2)
    assert m.bisection_bytes_per_s == cut_capacity(g, *_index_halves(g, n // 2))


dims_strategy = st.lists(st.integers(1, 5), min_size=1, max_size=3)


@given(dims_strategy, st.booleans())
@settings(max_examples=60, deadline=None)
def test_torus_hops_closed_form(dims, wrap):
    assume(1 < math.prod(dims) <= 80)
    g = torus(dims, wrap, UNIT)
    m = torus_metrics(dims, wrap, [1.0] * len(dims))
    diameter, mean = accelerator_hops(g)
    assert m.diameter_hops == diameter
    assert m.mean_hops == pytest.approx(mean)
    assert m.links["scale_up"] == g.number_of_edges()


@given(dims_strategy, st.booleans())
@settings(max_examples=40, deadline=None)
def test_torus_bisection_is_min_balanced_cut_when_longest_dim_even(dims, wrap):
    n = math.prod(dims)
    assume(2 <= n <= 16 and max(dims) % 2 == 0)
    g = torus(dims, wrap, UNIT)
    m = torus_metrics(dims, wrap, [1.0] * len(dims))
    assert m.bisection_bytes_per_s == min_bisection_bruteforce(g)


@given(dims_strategy, st.booleans(), st.lists(st.sampled_from([1.0, 2.0, 3.0]), min_size=3))
@settings(max_examples=40, deadline=None)
def test_torus_bisection_is_max_flow_between_slabs(dims, wrap, bws):
    n = math.prod(dims)
    assume(2 <= n <= 120 and max(dims) >= 2)
    bws = bws[: len(dims)]
    g = torus(dims, wrap, UNIT, dim_bandwidth_bytes_per_s=bws)
    axis = cut_axis(dims, bws)
    half = dims[axis] // 2
    side_a = [v for v, c in g.nodes(data="coords") if c[axis] < half]
    side_b = [v for v, c in g.nodes(data="coords") if c[axis] >= half]
    m = torus_metrics(dims, wrap, bws)
    assert m.bisection_bytes_per_s == pytest.approx(cut_capacity(g, side_a, side_b))


def test_tpu_v4_pod_bisection():
    # 16^3 torus, 45 GB/s per link per direction: cut across one dimension crosses
    # 2 * 4096 / 16 = 512 links = 23.04 TB/s per direction (Google quotes ~24 TB/s).
    m = torus_metrics((16, 16, 16), True, [45e9] * 3)
    assert m.bisection_bytes_per_s == 512 * 45e9
    assert m.diameter_hops == 24
    assert m.links["scale_up"] == 3 * 4096


@given(st.integers(2, 12), st.integers(1, 6), st.integers(1, 6))
@settings(max_examples=40, deadline=None)
def test_switched_metrics_against_graph(n, links, chips):
    assume(links >= chips)
    g = nvswitch_domain(n, links, chips, UNIT)
    m = switched_metrics(n, links, chips, 1.0)
    assert (m.diameter_hops, m.mean_hops) == accelerator_hops(g)
    assert m.links["scale_up_l1"] == graph_counts(g)["links"]["scale_up_l1"]
    assert m.bisection_bytes_per_s == cut_capacity(g, *_index_halves(g, n // 2))
    if links % chips == 0:
        assert m.bisection_bytes_per_s == (n // 2) * links


@given(st.integers(1, 6), st.integers(1, 5), st.integers(1, 4), st.integers(1, 3),
       st.sampled_from([4, 6, 8, 12]))
@settings(max_examples=40, deadline=None)
def test_two_tier_metrics_against_graph(groups, group_size, links, chips, radix):
    n = groups * group_size
    assume(n >= 2)
    switch = SwitchType(radix, 1.0)
    try:
        g = switched_two_tier(n, group_size, links, chips, UNIT, switch)
    except Exception:  # noqa: BLE001 - radix too small for this draw
        assume(False)
    m = two_tier_metrics(n, group_size, links, chips, 1.0, radix)
    counts = graph_counts(g)
    assert m.switches == {t: counts["switches"][t] for t in m.switches}
    assert m.links == {t: counts["links"][t] for t in m.links}
    if links >= chips:
        assert (m.diameter_hops, m.mean_hops) == pytest.approx(accelerator_hops(g))
    first_b = (groups // 2) * group_size if groups >= 2 else n // 2
    assert m.bisection_bytes_per_s == pytest.approx(cut_capacity(g, *_index_halves(g, first_b)))


@given(st.integers(1, 5), st.sampled_from([("full_mesh", None), ("torus", (2, 3)),
                                           ("mesh", (2, 2)), ("torus", (4,))]),
       st.integers(1, 3), st.integers(1, 3))
@settings(max_examples=40, deadline=None)
def test_hybrid_metrics_against_graph(groups, layout, uplinks, chips):
    kind, dims = layout
    size = math.prod(dims) if dims else 3
    links = size - 1 if kind == "full_mesh" else 4
    n = groups * size
    g = hybrid(n, size, kind, links, uplinks, chips, UNIT, None, dims)
    m = hybrid_metrics(n, size, kind, dims, links, uplinks, chips, 1.0)
    counts = graph_counts(g)
    assert m.links == {t: counts["links"][t] for t in m.links}
    if uplinks >= chips:
        assert (m.diameter_hops, m.mean_hops) == pytest.approx(accelerator_hops(g))
    if groups >= 2:
        side_a = [("acc", i) for i in range(groups // 2 * size)]
    else:
        side_a = [("acc", i) for i in _group_half(kind, size, dims)]
    side_b = [a for a in accelerators(g) if a not in set(side_a)]
    assert m.bisection_bytes_per_s == pytest.approx(cut_capacity(g, side_a, side_b))

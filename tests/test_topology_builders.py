"""Scale-up builders against closed forms and networkx generators (builders are pure;
tests in four tiers: docs/architecture.md)."""

from __future__ import annotations

import math
from collections import Counter

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from supernode.errors import InputError
from supernode.topology import (
    SCALE_UP_KINDS,
    LinkType,
    RadixError,
    ScaleUpKind,
    SwitchType,
    full_mesh,
    mesh,
    nvswitch_domain,
    switched_two_tier,
    torus,
)
from supernode.topology.graph import balanced_loads, spread
from supernode.topology.hybrid import hybrid
from supernode.topology.registry import Registry
from supernode.topology.verify import accelerator_hops, graph_counts

NVLINK4 = LinkType(25e9)
NVLINK5 = LinkType(50e9)


def _accelerator_graph(g: nx.Graph) -> nx.Graph:
    """The graph restricted to accelerators (for isomorphism with generators)."""
    return g.subgraph(v for v, d in g.nodes(data=True) if d["kind"] == "accelerator")


def test_full_mesh_of_72_has_2556_links():
    # Seed 000 §2.1 says 1,276; physics says 72 * 71 / 2 = 2,556 (docs/references.md).
    g = full_mesh(72)
    assert g.number_of_edges() == 72 * 71 // 2 == 2556
    assert graph_counts(g)["links"]["scale_up"] == 2556
    assert accelerator_hops(g) == (1, 1.0)


@pytest.mark.parametrize("n", range(1, 9))
def test_full_mesh_is_complete_graph(n):
    assert nx.is_isomorphic(full_mesh(n), nx.complete_graph(n))


def test_full_mesh_bundles_spare_links():
    g = full_mesh(4, links_per_accelerator=6)  # 6 links over 3 peers: 2 per pair
    assert {d["count"] for _, _, d in g.edges(data=True)} == {2}


def test_h100_nvswitch_spreads_18_links_over_4_chips():
    g = nvswitch_domain(8, 18, 4, NVLINK4, SwitchType(64, 25e9, name="nvswitch-gen3"))
    chips = [v for v, k in g.nodes(data="kind") if k == "switch"]
    for a in range(8):  # every GPU wired alike, as on the HGX H100 baseboard: 5+5+4+4
        counts = [g.edges[("acc", a), c]["count"] for c in chips]
        assert counts == [5, 5, 4, 4]
    ports = [sum(d["count"] for _, _, d in g.edges(v, data=True)) for v in chips]
    assert ports == [40, 40, 32, 32]
    assert graph_counts(g)["links"]["scale_up_l1"] == 144
    assert nx.is_isomorphic(g, nx.complete_bipartite_graph(8, 4))


def test_nvl72_one_link_from_every_gpu_to_every_chip():
    g = nvswitch_domain(72, 18, 18, NVLINK5, SwitchType(72, 50e9))
    chips = [v for v, k in g.nodes(data="kind") if k == "switch"]
    assert len(chips) == 18
    assert all(g.degree(c) == 72 for c in chips)  # 72 ports used on every chip
    assert all(d["count"] == 1 for _, _, d in g.edges(data=True))
    assert all(g.degree(("acc", a)) == 18 for a in range(72))
    assert graph_counts(g)["links"]["scale_up_l1"] == 72 * 18
    assert accelerator_hops(g) == (2, 2.0)


def test_nvswitch_radix_error_says_how_many_ports():
    with pytest.raises(RadixError) as err:
        nvswitch_domain(72, 18, 17, NVLINK5, SwitchType(72, 50e9, name="nvlink5"))
    # every GPU wires its 18 links alike: 2 to the first chip, 1 to each other one
    assert err.value.needed_ports == 72 * math.ceil(18 / 17) == 144
    assert "144 ports" in str(err.value)


def test_two_tier_cloudmatrix_counts():
    # 48 groups of 8 NPUs, 7 L1 chips per group (one link from each NPU), 24-port chips:
    # each L1 has 8 ports down and 8 up; a plane takes 48 * 8 = 384 uplinks over 24-port
    # L2 chips = 16 per plane, 112 in all (Zuo et al. 2025; SemiAnalysis).
    g = switched_two_tier(384, 8, 7, 7, LinkType(56e9), SwitchType(24, 56e9))
    counts = graph_counts(g)
    assert counts["switches"] == Counter({"scale_up_l1": 336, "scale_up_l2": 112})
    assert counts["links"]["scale_up_l1"] == 384 * 7
    ports = Counter()
    for u, v, d in g.edges(data=True):
        for node in (u, v):
            if g.nodes[node].get("tier") == "scale_up_l2":
                ports[node] += d["count"] * d["bandwidth_bytes_per_s"] / 56e9
    assert set(round(p, 9) for p in ports.values()) == {24.0}  # port-equivalents per L2


def test_two_tier_small_diameter_is_four():
    g = switched_two_tier(16, 4, 2, 2, LinkType(1.0), SwitchType(8, 1.0))
    assert accelerator_hops(g)[0] == 4


@given(st.lists(st.integers(1, 5), min_size=1, max_size=3), st.booleans())
@settings(max_examples=60, deadline=None)
def test_torus_is_networkx_grid(dims, wrap):
    g = torus(dims, wraparound=wrap)
    reference = nx.grid_graph(dim=list(dims), periodic=wrap)
    reference.remove_edges_from(list(nx.selfloop_edges(reference)))
    assert nx.is_isomorphic(g, reference)


@given(st.lists(st.integers(1, 6), min_size=1, max_size=4), st.booleans())
@settings(max_examples=80, deadline=None)
def test_torus_link_count_closed_form(dims, wrap):
    n = math.prod(dims)
    expected = 0
    for d in dims:
        if d == 2:
            expected += n // 2  # the wrap link would duplicate the direct one
        elif d > 2:
            expected += n if wrap else n // d * (d - 1)
    assert torus(dims, wraparound=wrap).number_of_edges() == expected


def test_torus_with_every_dimension_above_two_has_n_times_dims_links():
    dims = (4, 3, 5)
    assert torus(dims).number_of_edges() == len(dims) * math.prod(dims)


def test_mesh_is_grid_without_wrap():
    assert nx.is_isomorphic(mesh((3, 4)), nx.grid_2d_graph(3, 4))


def test_torus_dimension_bandwidths():
    g = torus((4, 4, 4), link=LinkType(1.0), dim_bandwidth_bytes_per_s=(128e9, 128e9, 64e9))
    bw = Counter(d["bandwidth_bytes_per_s"] for _, _, d in g.edges(data=True))
    assert bw == Counter({128e9: 128, 64e9: 64})


def test_hybrid_small():
    g = hybrid(16, 4, "full_mesh", 3, 2, 2, LinkType(1.0), SwitchType(16, 1.0))
    counts = graph_counts(g)
    assert counts["links"] == Counter({"scale_up": 4 * 6, "scale_up_l1": 32})
    assert counts["switches"] == Counter({"scale_up_l1": 2})
    assert nx.is_isomorphic(
        _accelerator_graph(g), nx.disjoint_union_all([nx.complete_graph(4)] * 4))
    assert accelerator_hops(g)[0] == 2


def test_hybrid_torus_groups():
    g = hybrid(32, 16, "torus", 4, 1, 1, LinkType(1.0), SwitchType(32, 1.0), group_dims=(4, 4))
    reference = nx.disjoint_union_all([nx.grid_graph(dim=[4, 4], periodic=True)] * 2)
    assert nx.is_isomorphic(_accelerator_graph(g), reference)


@given(st.integers(1, 12), st.integers(1, 30), st.integers(1, 9))
def test_spread_rotation_matches_balanced_loads(sources, links, targets):
    extra = links % targets
    loads = [0] * targets
    for i in range(sources):
        spread_i = spread(links, targets, (i * extra) % targets)
        assert sum(c for _, c in spread_i) == links
        for t, c in spread_i:
            loads[t] += c
    assert loads == balanced_loads(sources, links, targets)
    assert max(loads) - min(loads) <= 1


def test_registry_refuses_duplicates_and_suggests():
    registry: Registry[int] = Registry("thing")
    registry.register("torus", 1)
    with pytest.raises(ValueError, match="already registered"):
        registry.register("torus", 2)
    with pytest.raises(InputError, match="did you mean torus"):
        registry.get("toruss", "scale_up.kind")


def test_scale_up_kinds_cover_the_schema():
    assert set(SCALE_UP_KINDS) == {"nvswitch", "full_mesh", "torus", "mesh", "hybrid", "none"}
    kind = SCALE_UP_KINDS.get("torus")
    with pytest.raises(ValueError):
        SCALE_UP_KINDS.register("torus", ScaleUpKind("torus", kind.add, kind.metrics))


@given(st.integers(1, 40), st.integers(0, 40), st.integers(1, 20), st.integers(1, 9))
def test_prefix_cut_matches_chip_cut(sources, prefix, links, chips):
    from supernode.topology.domain_metrics import chip_cut, prefix_cut

    prefix = min(prefix, sources)
    extra = links % chips
    assert prefix_cut(sources, prefix, links, chips) == chip_cut(
        range(prefix), range(prefix, sources), links, chips, lambda i: (i * extra) % chips)

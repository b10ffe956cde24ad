"""Fabric tiers, levels, group views (alignment), link generations and the fabric builders."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from supernode.cluster.load import load_cluster
from supernode.collectives import (
    Fabric,
    FabricTier,
    fabric_from_cluster,
    fabric_from_validation_system,
    group_levels,
    group_view,
    load_efficiency_tables,
    make_tier,
)
from supernode.collectives.generations import (
    scale_out_efficiency_name,
    scale_up_efficiency_name,
    scale_up_link,
)
from supernode.collectives.groups import view_from_members
from supernode.collectives.systems import job_domain_size
from supernode.errors import InputError

TABLES = load_efficiency_tables()


def _three_tier() -> Fabric:
    return Fabric((
        FabricTier("scale_up", 8, 450e9, 2e-6, efficiency="ideal"),
        FabricTier("leaf", 256, 50e9, 5e-6, efficiency="ideal", kind="nic"),
        FabricTier("spine", 4096, 50e9, 7e-6, efficiency="ideal", oversubscription=2.0,
                   kind="nic"),
    ))


def test_tier_for_group_is_the_innermost_tier_holding_the_span():
    fab = _three_tier()
    assert fab.tier_for_group(1).name == "scale_up"
    assert fab.tier_for_group(8).name == "scale_up"
    assert fab.tier_for_group(9).name == "leaf"
    assert fab.tier_for_group(257).name == "spine"
    assert [t.name for t in fab.tiers_crossed(300)] == ["scale_up", "leaf", "spine"]
    assert list(fab.tier_index_for_group(np.array([2, 16, 4096]))) == [0, 1, 2]
    with pytest.raises(InputError):
        fab.tier_for_group(4097)


def test_group_sizes_must_nest_unless_a_view_says_its_parts():
    with pytest.raises(InputError):  # a middle tier must hold whole inner groups
        Fabric((FabricTier("a", 8, 1e9, 0.0), FabricTier("b", 12, 1e9, 0.0),
                FabricTier("c", 48, 1e9, 0.0)))
    with pytest.raises(InputError):
        Fabric((FabricTier("a", 8, 1e9, 0.0), FabricTier("b", 8, 1e9, 0.0)))
    # the outermost may be partly filled (a last leaf group), and views state their parts
    Fabric((FabricTier("a", 8, 1e9, 0.0), FabricTier("b", 12, 1e9, 0.0)))
    Fabric((FabricTier("a", 8, 1e9, 0.0), FabricTier("b", 12, 1e9, 0.0, parts=2, smallest=4),
            FabricTier("c", 48, 1e9, 0.0)))
    with pytest.raises(InputError):
        Fabric(())
    with pytest.raises(InputError):
        FabricTier("a", 8, -1.0, 0.0)
    with pytest.raises(InputError):
        FabricTier("a", 8, 1e9, 0.0, oversubscription=0.5)
    with pytest.raises(InputError):
        FabricTier("a", 8, 1e9, 0.0, kind="torus")  # a torus needs its dimensions


def test_chain_hops_sum_to_n_minus_one():
    fab = _three_tier()
    for n in (1, 2, 8, 9, 64, 256, 300, 4096):
        levels = group_levels(fab, n, TABLES)
        assert sum(lv.chain_hops for lv in levels) == n - 1
    levels = group_levels(fab, 300, TABLES)
    assert [lv.chain_hops for lv in levels] == [300 - 38, 36, 1]
    assert (levels[2].parts, levels[2].smallest) == (2, 44)  # 256 + 44 ranks under leaves


def test_outer_fabric_is_one_rail():
    outer = _three_tier().outer()
    assert [t.group_size for t in outer.tiers] == [32, 512]
    with pytest.raises(InputError):
        outer.outer().outer()


# ---- group views: alignment decides the tiers, the slowest group binds ----------------

NVL = Fabric((FabricTier("scale_up", 72, 900e9, 0.0, True, "nvlink5"),
              FabricTier("scale_out", 576, 50e9, 0.0, efficiency="infiniband_ndr", kind="nic")))


def _tiers(view: Fabric) -> list[tuple]:
    return [(t.name, t.group_size, t.parts, t.smallest) for t in view.tiers]


def test_groups_that_straddle_a_rack_cross_the_scale_out_tier():
    """32 ranks on 72-GPU racks: the group of ranks 64-95 splits 8 + 24 across two racks,
    so CP 8 x TP 4 or EP 32 is not "on scale_up": its 8 ranks' NICs bind."""
    assert _tiers(group_view(NVL, ((1, 32),))) == [("scale_up", 24, 0, 0),
                                                   ("scale_out", 32, 2, 8)]
    assert _tiers(group_view(NVL, ((1, 64),))) == [("scale_up", 56, 0, 0),
                                                   ("scale_out", 64, 2, 8)]
    assert _tiers(group_view(NVL, ((1, 72),))) == [("scale_up", 72, 0, 0)]
    assert _tiers(group_view(NVL, ((1, 8),))) == [("scale_up", 8, 0, 0)]
    assert _tiers(group_view(NVL, ((72, 8),))) == [("scale_up", 1, 0, 0),
                                                   ("scale_out", 8, 0, 0)]


@settings(max_examples=40, deadline=None)
@given(stride=st.sampled_from([1, 2, 4, 8, 9, 16, 72, 100, 144, 250]), size=st.integers(2, 16))
def test_aligned_fast_path_equals_enumeration(stride, size):
    """The closed form for evenly split groups agrees with enumerating every group."""
    from supernode.collectives.groups import _aligned_view, _bases, _offsets, _period

    if stride * (size - 1) >= NVL.capacity:
        return
    factors = ((stride, size),)
    fast = _aligned_view(NVL, stride, size)
    offsets = _offsets(factors)
    bases = _bases(factors, _period(NVL, factors))
    bases = bases[bases + offsets[-1] < NVL.capacity]
    slow = view_from_members(NVL, bases[:, None] + offsets[None, :])
    if fast is not None:
        assert _tiers(fast) == _tiers(slow)


def test_worst_group_binds_in_the_levels():
    view = group_view(NVL, ((1, 32),))
    levels = group_levels(view, 32, TABLES)
    assert [(lv.members, lv.parts, lv.smallest) for lv in levels] == [(24, 24, 1), (32, 2, 8)]


def test_torus_views_know_their_box():
    torus = Fabric((FabricTier("t", 64, 6 * 45e9, 0.0, efficiency="ici", kind="torus",
                               dims=(4, 4, 4), dim_bandwidth_bytes_per_s=(45e9,) * 3),))
    assert group_view(torus, ((4, 4),)).tiers[0].shape == ((1, False), (4, True), (1, False))
    assert group_view(torus, ((1, 16),)).tiers[0].shape == ((4, True), (4, True), (1, False))


# ---- link generations -----------------------------------------------------------------

def test_generation_names():
    assert scale_up_efficiency_name("a100-sxm-80gb", 300e9) == "nvlink3"
    assert scale_up_efficiency_name("gb200", 900e9) == "nvlink5"
    assert scale_up_efficiency_name("mystery", 450e9) == "nvlink4"
    assert scale_up_link("mystery", 450e9)[2]  # borrowed
    assert scale_up_link("mi300x", 448e9) == ("xgmi", "full_mesh", False)
    assert scale_up_link("tpu-v4", 270e9) == ("ici", "torus", True)  # values borrowed
    assert scale_out_efficiency_name(25e9) == "infiniband_hdr"
    assert scale_out_efficiency_name(100e9) == "infiniband_xdr"
    assert scale_out_efficiency_name(50e9, ethernet=True) == "roce"


def test_in_network_reduction_only_where_the_part_has_it():
    tables = TABLES
    assert tables["nvlink4"].in_network_efficiency and tables["nvlink5"].in_network_efficiency
    for name in ("nvlink3", "xgmi", "ici", "roce"):
        assert tables[name].in_network_efficiency is None, name
    assert tables["nvlink5"].in_network_efficiency != tables["nvlink4"].in_network_efficiency
    assert tables["nvlink5"].simple_efficiency != tables["nvlink4"].simple_efficiency


# ---- validation systems ----------------------------------------------------------------

H200 = {"accelerator": "h200-sxm-141gb", "peak_dense_bf16_tflops": 989.0, "scale_up_gpus": 8,
        "scale_up_gigabytes_per_s": 450.0, "scale_out_gigabits_per_s": 400.0, "gpus": 8,
        "in_network_reduction": True}


def test_fabric_from_single_node_system():
    fab = fabric_from_validation_system(H200, 8)
    assert len(fab.tiers) == 1
    tier = fab.tiers[0]
    assert (tier.group_size, tier.bandwidth_bytes_per_s, tier.efficiency) == (8, 450e9, "nvlink4")
    assert tier.in_network_reduction and tier.kind == "switch"


def test_fabric_from_two_node_system_adds_scale_out():
    fab = fabric_from_validation_system(dict(H200, gpus=16, in_network_reduction=False), 16)
    assert [t.name for t in fab.tiers] == ["scale_up", "scale_out"]
    assert fab.tiers[1].bandwidth_bytes_per_s == pytest.approx(50e9)
    assert fab.tiers[1].efficiency == "infiniband_ndr" and fab.tiers[1].kind == "nic"
    assert not fab.tiers[0].in_network_reduction


def test_amd_parts_get_xgmi_full_mesh_roce_and_no_nvls():
    mi = {"accelerator": "mi300x", "scale_up_gpus": 8, "scale_up_gigabytes_per_s": 448.0,
          "scale_out_gigabits_per_s": 400.0, "gpus": 16, "in_network_reduction": None}
    fab = fabric_from_validation_system(mi, 16)
    assert (fab.tiers[0].efficiency, fab.tiers[0].kind) == ("xgmi", "full_mesh")
    assert not fab.tiers[0].in_network_reduction
    assert fab.tiers[1].efficiency == "roce"
    assert not fabric_from_validation_system(dict(mi, in_network_reduction=True)).tiers[0] \
        .in_network_reduction  # xGMI has no switch to reduce in


def test_unknown_in_network_follows_the_generation():
    assert fabric_from_validation_system(dict(H200, in_network_reduction=None)).tiers[0] \
        .in_network_reduction
    a100 = dict(H200, accelerator="a100-sxm-80gb", scale_up_gigabytes_per_s=300.0,
                in_network_reduction=None)
    assert not fabric_from_validation_system(a100).tiers[0].in_network_reduction


def test_a_job_spreads_evenly_over_the_fewest_domains():
    assert job_domain_size(72, 256) == 64      # 4 racks x 64, no half-used rack
    assert job_domain_size(72, 144) == 72
    assert job_domain_size(72, 64) == 72
    assert job_domain_size(8, 12) == 6


def test_missing_fields_are_input_errors():
    with pytest.raises(InputError, match="scale_up_gpus"):
        fabric_from_validation_system(dict(H200, scale_up_gpus=None))
    with pytest.raises(InputError, match="scale_out_gigabits_per_s"):
        fabric_from_validation_system(dict(H200, gpus=16, scale_out_gigabits_per_s=None))


# ---- clusters: tiers from the topology -------------------------------------------------

def test_cluster_fabric_comes_from_the_topology():
    fab, borrowed = fabric_from_cluster(load_cluster("dgx-h100-superpod-su"))
    assert not borrowed
    up, out = fab.tiers[0], fab.tiers[-1]
    assert (up.group_size, up.bandwidth_bytes_per_s, up.efficiency) == (8, 450e9, "nvlink4")
    assert up.in_network_reduction and up.latency_s > 0
    assert (out.group_size, out.bandwidth_bytes_per_s, out.kind) == (256, 50e9, "nic")
    assert out.latency_s > up.latency_s
    tpu, borrowed = fabric_from_cluster(load_cluster("tpu-v4-pod"))
    assert borrowed and tpu.tiers[0].kind == "torus"
    assert tpu.tiers[0].dims == (16, 16, 16)
    assert tpu.tiers[0].dim_bandwidth_bytes_per_s == (45e9, 45e9, 45e9)


def test_per_leaf_oversubscription_and_nics_faster_than_ports(tmp_path):
    from supernode.cluster.resolve import resolve_cluster
    from supernode.spec.cluster import ClusterSpec
    from supernode.spec.loader import validate_document

    def cluster(**out):
        doc = {"name": "c", "supernodes": 64,
               "host": {"accelerator": "h100-sxm-80gb", "accelerators_per_host": 8,
                        "nics": {"count": 8, "speed_gbit_per_s": out.pop("nic", 400)}},
               "scale_up": {"kind": "nvswitch", "size": 8, "switch": "nvswitch-gen3",
                            "switch_chips": 4},
               "scale_out": {"tiers": 2, "switch": "quantum2-qm9700", **out}}
        return resolve_cluster(validate_document(doc, ClusterSpec))

    fab, _ = fabric_from_cluster(cluster(oversubscription=[2.0]))
    names = [t.name for t in fab.tiers]
    assert names == ["scale_up", "scale_out_leaf", "scale_out"]
    leaf, top = fab.tiers[1], fab.tiers[2]
    assert leaf.oversubscription == 1.0       # staying under a leaf crosses no uplink
    # 64 hosts per rail on 64-port 2:1 leaves: 2 leaves of 32 on 16 uplinks each
    assert top.oversubscription == pytest.approx(32 / 16)  # the fullest leaf's ratio
    fast, _ = fabric_from_cluster(cluster(nic=800))
    assert fast.tiers[-1].bandwidth_bytes_per_s == pytest.approx(50e9)  # the port's rate


def test_make_tier_checks_the_table():
    tier = make_tier("x", 8, 300e9, "nvlink3", latency_s=1e-6)
    assert tier.latency_s == 1e-6
    with pytest.raises(InputError):
        make_tier("x", 8, 300e9, "no_such_table")

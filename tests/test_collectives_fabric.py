"""Fabric tiers, group arithmetic and the validation-system builder."""

from __future__ import annotations

import numpy as np
import pytest

from supernode.collectives import Fabric, FabricTier, fabric_from_validation_system, make_tier
from supernode.collectives.fabric import scale_out_efficiency_name, scale_up_efficiency_name
from supernode.collectives.levels import job_levels
from supernode.errors import InputError


def _three_tier() -> Fabric:
    return Fabric((
        FabricTier("scale_up", 8, 450e9, 2e-6, efficiency="ideal"),
        FabricTier("leaf", 256, 50e9, 5e-6, efficiency="ideal"),
        FabricTier("spine", 4096, 50e9, 7e-6, efficiency="ideal", oversubscription=2.0),
    ))


def test_tier_for_group_is_the_innermost_tier_holding_the_span():
    fab = _three_tier()
    assert fab.tier_for_group(1).name == "scale_up"
    assert fab.tier_for_group(8).name == "scale_up"
    assert fab.tier_for_group(9).name == "leaf"
    assert fab.tier_for_group(256).name == "leaf"
    assert fab.tier_for_group(257).name == "spine"
    assert [t.name for t in fab.tiers_crossed(300)] == ["scale_up", "leaf", "spine"]
    assert list(fab.tier_index_for_group(np.array([2, 16, 4096]))) == [0, 1, 2]
    with pytest.raises(InputError):
        fab.tier_for_group(4097)


def test_group_sizes_must_nest():
    with pytest.raises(InputError):
        Fabric((FabricTier("a", 8, 1e9, 0.0), FabricTier("b", 12, 1e9, 0.0)))
    with pytest.raises(InputError):
        Fabric(())
    with pytest.raises(InputError):
        FabricTier("a", 8, -1.0, 0.0)
    with pytest.raises(InputError):
        FabricTier("a", 8, 1e9, 0.0, oversubscription=0.5)


def test_outer_fabric_is_one_rail():
    outer = _three_tier().outer()
    assert [t.group_size for t in outer.tiers] == [32, 512]
    assert outer.tiers[0].bandwidth_bytes_per_s == 50e9
    with pytest.raises(InputError):
        outer.outer().outer()


def test_chain_hops_sum_to_n_minus_one():
    fab = _three_tier()
    n = np.array([1, 2, 8, 9, 64, 256, 300, 4096])
    levels = job_levels(fab, n, {"ideal": _ideal()})
    assert np.array_equal(sum(lv.chain_hops for lv in levels), n - 1)
    assert np.array_equal(levels[1].chain_hops, [0, 0, 0, 1, 7, 31, 36, 496])
    assert np.array_equal(levels[2].inner, np.minimum(n, 256))


def _ideal():
    from supernode.collectives import load_efficiency_tables

    return load_efficiency_tables()["ideal"]


H200 = {"accelerator": "h200-sxm-141gb", "peak_dense_bf16_tflops": 989.0, "scale_up_gpus": 8,
        "scale_up_gigabytes_per_s": 450.0, "scale_out_gigabits_per_s": 400.0, "gpus": 8,
        "in_network_reduction": True}


def test_fabric_from_single_node_system():
    fab = fabric_from_validation_system(H200, 8)
    assert len(fab.tiers) == 1
    tier = fab.tiers[0]
    assert (tier.group_size, tier.bandwidth_bytes_per_s, tier.efficiency) == (8, 450e9, "nvlink4")
    assert tier.in_network_reduction
    assert tier.latency_s > 0


def test_fabric_from_two_node_system_adds_scale_out():
    fab = fabric_from_validation_system(dict(H200, gpus=16, in_network_reduction=False), 16)
    assert [t.name for t in fab.tiers] == ["scale_up", "scale_out"]
    assert fab.tiers[1].bandwidth_bytes_per_s == pytest.approx(50e9)
    assert fab.tiers[1].efficiency == "infiniband_ndr"
    assert fab.tiers[1].group_size == 16
    assert not fab.tiers[0].in_network_reduction


def test_unknown_in_network_follows_the_generation():
    assert fabric_from_validation_system(dict(H200, in_network_reduction=None)).tiers[0] \
        .in_network_reduction
    a100 = dict(H200, accelerator="a100-sxm-80gb", scale_up_gigabytes_per_s=300.0,
                in_network_reduction=None)
    assert not fabric_from_validation_system(a100).tiers[0].in_network_reduction


def test_missing_fields_are_input_errors():
    with pytest.raises(InputError, match="scale_up_gpus"):
        fabric_from_validation_system(dict(H200, scale_up_gpus=None))
    with pytest.raises(InputError, match="scale_out_gigabits_per_s"):
        fabric_from_validation_system(dict(H200, gpus=16, scale_out_gigabits_per_s=None))


def test_generation_names():
    assert scale_up_efficiency_name("a100-sxm-80gb", 300e9) == "nvlink3"
    assert scale_up_efficiency_name("gb200", 900e9) == "nvlink5"
    assert scale_up_efficiency_name("mystery", 450e9) == "nvlink4"
    assert scale_up_efficiency_name(None, 900e9) == "nvlink5"
    assert scale_out_efficiency_name(25e9) == "infiniband_hdr"
    assert scale_out_efficiency_name(100e9) == "infiniband_xdr"


def test_make_tier_takes_latency_from_table():
    tier = make_tier("x", 8, 300e9, "nvlink3")
    from supernode.collectives import load_efficiency_tables

    assert tier.latency_s == load_efficiency_tables()["nvlink3"].step_latency_s
    with pytest.raises(InputError):
        make_tier("x", 8, 300e9, "no_such_table")

"""Bundled cluster presets: each loads, passes the consistency checks, and its derived
counts equal values computed by hand from the reference catalog."""

from __future__ import annotations

import pytest

from supernode import catalog
from supernode.cluster.load import load_cluster
from supernode.topology.sizing import size_fat_tree

REQUIRED = {
    "hgx-h100", "dgx-h100-superpod-su", "dgx-a100-selene-like", "gb200-nvl72",
    "gb200-nvl72-superpod", "cloudmatrix384", "tpu-v4-pod", "mi300x-8", "trn2-ultraserver",
}

# name: (accelerators, hosts, scale-up B/s per accelerator per direction,
#        scale-out B/s per accelerator per direction, supernodes)
EXPECTED = {
    "hgx-h100": (8, 1, 18 * 25e9, 400e9 / 8, 1),
    "dgx-h100-superpod-su": (256, 32, 18 * 25e9, 400e9 / 8, 32),
    "dgx-a100-selene-like": (800, 100, 12 * 25e9, 200e9 / 8, 100),
    "gb200-nvl72": (72, 18, 900e9, 400e9 / 8, 1),
    "gb200-nvl72-superpod": (576, 144, 900e9, 400e9 / 8, 8),
    "gb300-nvl72": (72, 18, 900e9, 800e9 / 8, 1),
    "dgx-b200-superpod-4su": (1024, 128, 900e9, 400e9 / 8, 128),
    "cloudmatrix384": (384, 48, 392e9, 400e9 / 8, 1),
    "tpu-v4-pod": (4096, 1024, 6 * 45e9, 0.0, 1),
    "mi300x-8": (8, 1, 7 * 64e9, 0.0, 1),
    # 4 intra-instance torus links x 128 GB/s + 2 ring links x 64 GB/s
    "trn2-ultraserver": (64, 4, 4 * 128e9 + 2 * 64e9, 12.8e12 / 8 / 64, 1),
}


def test_required_presets_exist():
    assert set(catalog.cluster_presets()) >= REQUIRED


def test_every_preset_has_an_expectation():
    assert set(catalog.cluster_presets()) == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_preset_derived_counts(name):
    cluster = load_cluster(name)  # resolves and runs every consistency check
    accelerators, hosts, up, out, supernodes = EXPECTED[name]
    assert cluster.name == name
    assert cluster.spec.source and cluster.spec.description
    assert cluster.accelerators == accelerators
    assert cluster.hosts == hosts
    assert cluster.supernodes == supernodes
    assert cluster.scale_up.bandwidth_per_accelerator_bytes_per_s == pytest.approx(up, rel=1e-4)
    assert cluster.scale_out_bandwidth_per_accelerator_bytes_per_s == pytest.approx(out)


@pytest.mark.parametrize(
    ("name", "tiers", "switches"),
    [
        ("dgx-h100-superpod-su", 2, (8, 4)),      # RA-11333-001 Table 4, 1 SU
        ("dgx-b200-superpod-4su", 2, (32, 16)),   # B200 RA, 4 SU row
        ("dgx-a100-selene-like", 2, (40, 20)),    # 8 rails x 5 leaves; full 40x20 tree
        ("gb200-nvl72-superpod", 2, (20, 16)),    # 4 rails x 5 leaves; 16 divides 32 uplinks
    ],
)
def test_fat_tree_sizing(name, tiers, switches):
    cluster = load_cluster(name)
    out = cluster.scale_out
    sizing = size_fat_tree(cluster.hosts, cluster.host.nic_count, out.switch.radix,
                           out.tiers, out.oversubscription, out.rail_optimized)
    assert sizing.tiers == tiers
    assert sizing.switches == switches
    assert sizing.endpoints == cluster.accelerators  # one NIC per accelerator


def test_dgx_su_sizing_directly():
    sizing = size_fat_tree(hosts=32, nics_per_host=8, radix=64, tiers=2)
    assert sizing.switches == (8, 4)
    assert sizing.uplinks == (256,)  # RA: 256 leaf-spine cables


def test_selene_like_fills_a_two_tier_hdr_tree():
    cluster = load_cluster("dgx-a100-selene-like")
    sizing = size_fat_tree(cluster.hosts, 8, 40, 2)
    assert sizing.endpoints == sizing.max_endpoints == 800


def test_nvl72_switch_ports_exactly_used():
    up = load_cluster("gb200-nvl72").scale_up
    assert up.switch.radix == 72 and up.switch_chips == 18
    assert up.size * up.links_per_accelerator == up.switch_chips * up.switch.radix  # 1296 ports
    assert up.switch.port_bandwidth_bytes_per_s == 50e9


def test_nvl72_racks():
    racks = load_cluster("gb200-nvl72").spec.racks
    assert (racks.hosts_per_rack, racks.switch_trays_per_rack) == (18, 9)
    assert (racks.power_kw, racks.weight_kg, racks.cooling) == (120, 1360, "hybrid")


def test_cloudmatrix_two_tier_ub():
    up = load_cluster("cloudmatrix384").scale_up
    assert (up.switch_tiers, up.group_size, up.switch_chips) == (2, 8, 7)
    assert up.size // up.group_size * up.switch_chips == 336  # L1 UB switches
    assert up.switch.port_bandwidth_bytes_per_s == 56e9


def test_tpu_v4_pod_torus():
    up = load_cluster("tpu-v4-pod").scale_up
    assert up.kind == "torus" and up.dims == (16, 16, 16) and up.wraparound


def test_trn2_slow_dimension():
    up = load_cluster("trn2-ultraserver").scale_up
    assert up.dims == (4, 4, 4)
    assert up.dim_link_bandwidth_bytes_per_s == (128e9, 128e9, 64e9)
    # every dimension of 4 with wrap-around uses 2 ports per chip
    per_chip = sum(2 * bw for bw in up.dim_link_bandwidth_bytes_per_s)
    assert per_chip == pytest.approx(640e9)  # 1.28 TB/s bidirectional


def test_mi300x_full_mesh():
    up = load_cluster("mi300x-8").scale_up
    assert up.kind == "full_mesh" and up.links_per_accelerator == up.size - 1


def test_dgx_h100_host_figures():
    cluster = load_cluster("dgx-h100-superpod-su")
    assert cluster.host.power_w == 10.2e3
    assert cluster.spec.racks.power_kw == pytest.approx(4 * 10.2)

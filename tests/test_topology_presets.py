"""Each bundled preset's topology metrics against values computed by hand (golden: tests in four
tiers, docs/architecture.md).

Conventions: bandwidths per direction; ``cables`` excludes PCB traces (links inside one
host); two optical transceivers per optical cable; scale-out bisection = max flow from the
first half of the hosts to the second.
"""

from __future__ import annotations

import pytest

from supernode.catalog import cluster_presets
from supernode.cluster.load import load_cluster
from supernode.topology import topology_report

GB = 1e9

EXPECTED = {
    # 32 DGX H100 = 256 GPUs. NVSwitch: 4 chips per host -> 128; 256 x 18 NVLinks = 4,608,
    # on the baseboard (PCB). Fabric (RA Table 4): 8 rails x ceil(32/32) = 8 leaves;
    # spines: smallest divisor of 32 >= ceil(8 x 32 / 64) = 4. Links: 256 NIC-leaf +
    # 8 x 32 leaf-spine = 256; all optical: 512 cables, 1,024 transceivers.
    # Scale-up bisection 4 GPUs x 18 x 25 GB/s = 1.8 TB/s; scale-out: every host shares
    # its 8 rail leaves, so 128 x 50 GB/s = 6.4 TB/s and 2 hops between servers.
    # Ratio 2 x 450 / 3,350 = 0.2687.
    "dgx-h100-superpod-su": dict(
        accelerators=256, switches={"scale_up_l1": 128, "leaf": 8, "spine": 4},
        links={"host": 512, "scale_up_l1": 4608, "leaf": 256, "spine": 256},
        transceivers=1024, bis_up=1800 * GB, bis_out=6400 * GB, hops=(2, 2), ratio=0.2687),
    # One HGX H100: 4 chips, 8 x 18 = 144 PCB links, 450 GB/s per GPU; bisection 1.8 TB/s.
    "hgx-h100": dict(
        accelerators=8, switches={"scale_up_l1": 4}, links={"host": 16, "scale_up_l1": 144},
        transceivers=0, bis_up=1800 * GB, bis_out=None, hops=(2, None), ratio=0.2687),
    # NVL72: 18 chips, 72 x 18 = 1,296 copper NVLinks (trays != one host), 900 GB/s per GPU;
    # bisection 36 x 18 x 50 GB/s = 32.4 TB/s; ratio 2 x 900 / 8,000 = 0.225.
    "gb200-nvl72": dict(
        accelerators=72, switches={"scale_up_l1": 18}, links={"host": 144, "scale_up_l1": 1296},
        transceivers=0, bis_up=32400 * GB, bis_out=None, hops=(2, None), ratio=0.225),
    "gb300-nvl72": dict(
        accelerators=72, switches={"scale_up_l1": 18}, links={"host": 144, "scale_up_l1": 1296},
        transceivers=0, bis_up=32400 * GB, bis_out=None, hops=(2, None), ratio=0.225),
    # 8 NVL72 = 576 GPUs in 144 trays x 4 NICs. Leaves 4 rails x ceil(144/32) = 20; spines:
    # smallest divisor of 32 >= ceil(20 x 32 / 64) = 10 -> 16; leaf-spine 20 x 32 = 640.
    # Transceivers 2 x (576 + 640) = 2,432. Scale-out bisection: the first 72 trays fill
    # groups 0-1 and 8 trays of group 2 -> per rail 8 turn at the leaf + 64 over spines =
    # 72; x 4 rails x 50 GB/s = 14.4 TB/s (= 288 GPUs x 50 GB/s).
    "gb200-nvl72-superpod": dict(
        accelerators=576, switches={"scale_up_l1": 144, "leaf": 20, "spine": 16},
        links={"host": 1152, "scale_up_l1": 10368, "leaf": 576, "spine": 640},
        transceivers=2432, bis_up=32400 * GB, bis_out=14400 * GB, hops=(2, 4), ratio=0.225),
    # CloudMatrix384: 48 x 7 = 336 L1; each L1 has 8 NPU ports down and 8 up; plane of
    # 48 x 8 = 384 uplinks over 24-port L2 -> 16 per plane, 112 L2. L1 links 384 x 7 =
    # 2,688 on board; L1-L2: 336 x 8 = 2,688 uplink cables (each split over 16 L2 chips),
    # 5,376 transceivers. RDMA plane: 384 NIC + 384 leaf-spine cables, 1,536 transceivers:
    # 6,912 in all, SemiAnalysis's count. Bisection 192 x 392 GB/s. Ratio 0.245.
    "cloudmatrix384": dict(
        accelerators=384, switches={"scale_up_l1": 336, "scale_up_l2": 112, "leaf": 6,
                                    "spine": 4},
        links={"host": 768, "scale_up_l1": 2688, "scale_up_l2": 2688, "leaf": 384,
               "spine": 384},
        transceivers=6912, bis_up=192 * 392 * GB, bis_out=192 * 50 * GB, hops=(4, 4),
        ratio=0.245),
    # TPU v4 16^3 torus: 3 x 4,096 = 12,288 links; hosts of 4 chips along x hold 3 links
    # each (1,024 x 3 = 3,072 PCB). Bisection 2 x 4,096 / 16 = 512 links x 45 GB/s =
    # 23.04 TB/s (Google: "24 TB/s"). Diameter 3 x 8 = 24. Ratio 2 x 270 / 1,200 = 0.45.
    "tpu-v4-pod": dict(
        accelerators=4096, switches={}, links={"host": 4096, "scale_up": 12288},
        transceivers=0, bis_up=23040 * GB, bis_out=None, hops=(24, None), ratio=0.45),
    # Trn2 UltraServer 4x4x4 torus: 192 links; each 16-chip instance is an x-y plane
    # (32 PCB links); the 64 ring links are cables. Cut across the slow ring dimension:
    # 2 x 64 / 4 = 32 links x 64 GB/s = 2.048 TB/s. Injection 4 x 128 + 2 x 64 = 640 GB/s.
    "trn2-ultraserver": dict(
        accelerators=64, switches={}, links={"host": 128, "scale_up": 192},
        transceivers=0, bis_up=2048 * GB, bis_out=None, hops=(6, None), ratio=0.4414),
    # MI300X: full mesh of 8, 28 xGMI links on the board; bisection 4 x 4 x 64 GB/s.
    "mi300x-8": dict(
        accelerators=8, switches={}, links={"host": 8, "scale_up": 28},
        transceivers=0, bis_up=1024 * GB, bis_out=None, hops=(1, None), ratio=0.1691),
    # 100 DGX A100, 8 x HDR 200G, 40-port QM8700: d1 = u1 = 20; leaves 8 x ceil(100/20) =
    # 40; spines: smallest divisor of 20 >= ceil(40 x 20 / 40) = 20 -> 20; 800 + 800 links.
    # 6 NVSwitch gen2 per host -> 600; 800 x 12 = 9,600 PCB links. Bisection 400 x 25 GB/s.
    "dgx-a100-selene-like": dict(
        accelerators=800, switches={"scale_up_l1": 600, "leaf": 40, "spine": 20},
        links={"host": 1600, "scale_up_l1": 9600, "leaf": 800, "spine": 800},
        transceivers=3200, bis_up=4 * 12 * 25 * GB, bis_out=10000 * GB, hops=(2, 4),
        ratio=0.2943),
    # 128 DGX B200: leaves 8 x ceil(128/32) = 32, spines 16 (RA); 2 NVLink 5 chips per
    # host -> 256, 1,024 x 18 = 18,432 PCB links. Bisection 512 x 50 GB/s = 25.6 TB/s.
    "dgx-b200-superpod-4su": dict(
        accelerators=1024, switches={"scale_up_l1": 256, "leaf": 32, "spine": 16},
        links={"host": 2048, "scale_up_l1": 18432, "leaf": 1024, "spine": 1024},
        transceivers=4096, bis_up=3600 * GB, bis_out=25600 * GB, hops=(2, 4), ratio=0.225),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_preset_metrics(name):
    assert name in cluster_presets(), f"preset {name} is not bundled"
    want = EXPECTED[name]
    report = topology_report(load_cluster(name))
    assert report.accelerators == want["accelerators"]
    assert report.switches == want["switches"]
    assert report.links == want["links"]
    assert sum(report.optical_transceivers.values()) == want["transceivers"]
    bis = report.bisection_bandwidth_bytes_per_s
    assert bis["scale_up_domain"] == pytest.approx(want["bis_up"])
    assert bis["scale_out"] == (None if want["bis_out"] is None else
                                pytest.approx(want["bis_out"]))
    assert (report.diameter_hops["scale_up"], report.diameter_hops["scale_out"]) == want["hops"]
    assert report.scale_up_to_hbm_bandwidth_ratio == pytest.approx(want["ratio"], abs=1e-4)


def test_every_preset_has_a_hand_computation():
    assert set(cluster_presets()) <= set(EXPECTED), "add the new preset to EXPECTED"

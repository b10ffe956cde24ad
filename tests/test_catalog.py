"""The hardware catalog: every entry sourced, names unique, figures equal to the reference.

The differential test reads docs/reference_hardware_catalog.yaml (the shared, sourced
reference) and checks each catalog figure against it, so a typo in either file fails here.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from supernode import catalog
from supernode.errors import InputError

REFERENCE = Path(__file__).resolve().parents[1] / "docs" / "reference_hardware_catalog.yaml"
GIB_PER_GB = 2**30 / 1e9

#: catalog accelerator name -> reference id
ACCELERATOR_IDS = {
    "a100-sxm-80gb": "nvidia_a100_sxm_80gb",
    "h100-sxm-80gb": "nvidia_h100_sxm",
    "h200-sxm-141gb": "nvidia_h200_sxm",
    "b200-sxm-180gb": "nvidia_b200_hgx",
    "gb200": "nvidia_gb200_per_gpu",
    "gb300": "nvidia_gb300_per_gpu",
    "mi300x": "amd_mi300x",
    "mi325x": "amd_mi325x",
    "mi355x": "amd_mi355x",
    "gaudi3": "intel_gaudi3",
    "tpu-v4": "google_tpu_v4",
    "tpu-v5p": "google_tpu_v5p",
    "tpu-v6e": "google_tpu_v6e",
    "tpu7x-ironwood": "google_tpu7x_ironwood",
    "ascend-910c": "huawei_ascend_910c",
    "trainium2": "aws_trainium2",
}
#: published in GiB: the catalog holds GB (1e9 B)
GIB_MEMORY = {"tpu-v4", "tpu-v5p", "tpu7x-ironwood", "trainium2"}
#: AWS gives 1.28 TB/s without a direction; the catalog reads it as bidirectional
SCALE_UP_TOTAL_KEY = {"trainium2": "bw_GBps"}

#: catalog switch name -> (reference id, radix, Gb/s); None = not in the reference
SWITCH_IDS = {
    "quantum2-qm9700": ("nvidia_quantum2_qm9700", 64, 400),
    "quantum-x800-q3400": ("nvidia_quantum_x800_q3400", 144, 800),
    "spectrum4-sn5600": ("nvidia_spectrum4_sn5600", 64, 800),
    "spectrum4-sn5600-400g": ("nvidia_spectrum4_sn5600", 128, 400),
    "tomahawk5": ("broadcom_tomahawk5", 64, 800),
    "tomahawk5-400g": ("broadcom_tomahawk5", 128, 400),
    "nvlink5-switch": ("nvidia_nvlink_switch_tray_nvl72", 72, 400),
    "nvswitch-gen3": ("nvidia_nvswitch_gen3", 64, 200),
}
OUTSIDE_REFERENCE = {"quantum-qm8700", "nvswitch-gen2", "ub-switch"}

REQUIRED_ACCELERATORS = set(ACCELERATOR_IDS)


@pytest.fixture(scope="module")
def reference() -> dict:
    data = yaml.safe_load(REFERENCE.read_text(encoding="utf-8"))
    return {e["id"]: e for kind in ("accelerators", "switches") for e in data[kind]}


def test_required_accelerators_present():
    assert set(catalog.accelerators()) >= REQUIRED_ACCELERATORS


@pytest.mark.parametrize("spec", catalog.accelerators().values(), ids=lambda s: s.name)
def test_every_accelerator_sourced(spec):
    assert spec.source, f"{spec.name} has no source"
    assert spec.confidence in ("high", "medium", "low")
    assert spec.notes, f"{spec.name}: notes must say what is default or derived"
    assert "bf16" in spec.peak_dense_tflops or "fp16" in spec.peak_dense_tflops


@pytest.mark.parametrize("spec", catalog.switches().values(), ids=lambda s: s.name)
def test_every_switch_sourced(spec):
    assert spec.source and spec.confidence in ("high", "medium", "low")
    assert spec.notes and "latency" in spec.notes, "the latency default must be marked"


def test_names_unique_across_kinds():
    # the loaders refuse duplicates within a file; show NAME needs them unique across kinds
    names = [*catalog.accelerators(), *catalog.switches(), *catalog.cluster_presets()]
    assert len(names) == len(set(names))


def test_catalog_files_have_no_duplicate_names():
    data = Path(catalog.__file__).resolve().parents[1] / "data" / "catalog"
    for file, key in (("accelerators.yaml", "accelerators"), ("switches.yaml", "switches")):
        entries = yaml.safe_load((data / file).read_text(encoding="utf-8"))[key]
        names = [e["name"] for e in entries]
        assert len(names) == len(set(names)), file


@pytest.mark.parametrize("name", sorted(ACCELERATOR_IDS))
def test_accelerator_matches_reference(name, reference):
    spec, ref = catalog.find_accelerator(name), reference[ACCELERATOR_IDS[name]]
    assert spec.source == ref["source"], "source strings must be carried over verbatim"
    assert spec.peak_dense_tflops.get("bf16") == ref["bf16_tflops_dense"]
    if ref.get("fp8_tflops_dense"):
        assert spec.peak_dense_tflops["fp8"] == ref["fp8_tflops_dense"]
    else:
        assert "fp8" not in spec.peak_dense_tflops
    assert spec.memory_bandwidth_tbyte_per_s == ref["hbm_bw_TBps"]
    expected_memory = ref["hbm_gb"] * (GIB_PER_GB if name in GIB_MEMORY else 1)
    assert spec.memory_gbyte == pytest.approx(expected_memory, abs=0.06)
    assert spec.tdp_w == ref.get("tdp_w")
    assert spec.confidence == ref["confidence"]
    total_key = SCALE_UP_TOTAL_KEY.get(name, "bw_bidir_GBps")
    bidir = 2 * spec.scale_up_ports * spec.scale_up_port_bandwidth_gbyte_per_s
    assert bidir == pytest.approx(ref["scale_up"][total_key], rel=1e-4)
    links = ref["scale_up"].get("links", ref["scale_up"].get("scale_up_ports"))
    if links and name != "trainium2":
        assert spec.scale_up_ports == links


@pytest.mark.parametrize(
    ("name", "bf16", "fp8", "hbm_tbyte_per_s", "port_gbyte_per_s", "ports"),
    [
        ("h100-sxm-80gb", 989, 1979, 3.35, 25, 18),
        ("b200-sxm-180gb", 2250, 4500, 8.0, 50, 18),
        ("mi300x", 1307.4, 2614.9, 5.3, 64, 7),
        ("tpu-v4", 275, None, 1.2, 45, 6),
        ("gaudi3", 1835, 1835, 3.67, 25, 21),
        ("ascend-910c", 752, None, 3.2, 56, 7),
    ],
)
def test_spot_figures(name, bf16, fp8, hbm_tbyte_per_s, port_gbyte_per_s, ports):
    spec = catalog.find_accelerator(name)
    assert spec.peak_dense_tflops["bf16"] == bf16
    assert spec.peak_dense_tflops.get("fp8") == fp8
    assert spec.memory_bandwidth_tbyte_per_s == hbm_tbyte_per_s
    assert spec.scale_up_port_bandwidth_gbyte_per_s == port_gbyte_per_s
    assert spec.scale_up_ports == ports


def test_trainium2_total_is_published_figure():
    spec = catalog.find_accelerator("trainium2")
    per_direction = spec.scale_up_ports * spec.scale_up_port_bandwidth_gbyte_per_s
    assert per_direction == pytest.approx(640, rel=1e-4)  # 1.28 TB/s read as bidirectional


@pytest.mark.parametrize("name", sorted(SWITCH_IDS))
def test_switch_matches_reference(name, reference):
    ref_id, radix, speed = SWITCH_IDS[name]
    spec = catalog.find_switch(name)
    assert (spec.radix_ports, spec.port_speed_gbit_per_s) == (radix, speed)
    assert spec.source == reference[ref_id]["source"]
    assert spec.confidence == reference[ref_id]["confidence"]


def test_switch_capacities_match_reference():
    # the same box at two breakouts has the same capacity: 51.2 Tb/s
    for name in ("spectrum4-sn5600", "spectrum4-sn5600-400g", "tomahawk5", "tomahawk5-400g"):
        spec = catalog.find_switch(name)
        assert spec.radix_ports * spec.port_speed_gbit_per_s == 51_200
    # NVL72 tray: 2 chips x 72 ports x 100 GB/s bidir = 14.4 TB/s
    chip = catalog.find_switch("nvlink5-switch")
    assert 2 * chip.radix_ports * 2 * chip.port_speed_gbit_per_s / 8 == 14_400
    assert catalog.find_switch("quantum-x800-q3400").radix_ports ** 2 // 2 == 10_368


def test_outside_reference_entries_are_flagged():
    for name in OUTSIDE_REFERENCE:
        spec = catalog.find_switch(name)
        assert spec.confidence == "low"
    assert any("not in the shared reference" in s
               for s in catalog.find_switch("quantum-qm8700").source)
    assert catalog.find_switch("quantum-qm8700").radix_ports == 40


def test_in_network_reduction_flags():
    assert catalog.find_switch("quantum2-qm9700").in_network_reduction
    assert catalog.find_switch("nvswitch-gen3").in_network_reduction
    assert not catalog.find_switch("nvswitch-gen2").in_network_reduction
    assert not catalog.find_switch("ub-switch").in_network_reduction


def test_ub_switch_radix_reproduces_cloudmatrix_switch_counts():
    # 7 planes; per plane 48 L1 x 8 uplink port-equivalents over the L2 tier = 16 L2 per plane
    radix = catalog.find_switch("ub-switch").radix_ports
    assert 7 * (48 * 8 // radix) == 112
    assert 48 * 7 == 336


def test_lookup_is_case_insensitive_and_suggests():
    assert catalog.find_accelerator("H100-SXM-80GB").name == "h100-sxm-80gb"
    with pytest.raises(InputError, match="did you mean.*h100-sxm-80gb"):
        catalog.find_accelerator("h100-sxm-81gb")


@pytest.mark.parametrize("spec", catalog.accelerators().values(), ids=lambda s: s.name)
def test_nvidia_gpus_give_their_sourced_compute_capability(spec):
    nvidia = (spec.vendor or "").lower() == "nvidia" and spec.kind == "gpu"
    assert (spec.cuda_compute_capability is not None) == nvidia
    assert (spec.cuda_compute_capability_source is not None) == nvidia


def test_scale_up_hints_are_sourced_and_name_efficiency_tables():
    from supernode.collectives import load_efficiency_tables

    hints = catalog.scale_up_hints()
    tables = load_efficiency_tables()
    assert all(h.source and h.table in tables for h in hints)
    fragments = [h.fragment for h in hints]
    for i, fragment in enumerate(fragments):  # a fragment never hides a later, longer one
        assert not any(fragment in later for later in fragments[i + 1:]), fragment

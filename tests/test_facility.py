"""Facility model: closed forms (coolant flow, feeds, CDUs, far-end rise, floor), a
validation against NVIDIA's published NVL72 rack power, and the planner's energy model."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from supernode.catalog.power import power_assumptions
from supernode.cluster.load import load_cluster
from supernode.facility import WorkloadUse, facility_report
from supernode.facility.cooling import coolant_flow_m3_per_s
from supernode.facility.data import coolant_properties, facility_data
from supernode.facility.power import utilisation_factor
from supernode.planner.economics import default_economics, energy_per_step_j
from supernode.topology.metrics import topology_report

LPM = 60e3  # m^3/s -> L/min


def _report(name: str, use: WorkloadUse | None = None):
    cluster = load_cluster(name)
    return cluster, facility_report(cluster, topology_report(cluster), use).to_dict()


def test_water_flow_matches_the_rule_of_thumb():
    # Rule of thumb (docs/facility.md, Cooling): 1.2-1.5 L/min per kW at ~10 K rise, water.
    per_kw = coolant_flow_m3_per_s(1e3, "water", 25.0, 10.0) * LPM
    assert 1.2 <= per_kw <= 1.5
    props = coolant_properties("water", 30.0)
    assert per_kw == pytest.approx(1e3 / (props.specific_heat_j_per_kg_k
                                          * props.density_kg_per_m3 * 10) * LPM)


def test_pg25_needs_more_flow_than_water():
    ratio = coolant_flow_m3_per_s(1e5, "pg25", 25, 6) / coolant_flow_m3_per_s(1e5, "water",
                                                                              25, 6)
    assert 1.02 < ratio < 1.08  # cp ~6 % lower, density ~2 % higher


def test_properties_at_table_points():
    table = facility_data()["coolants"]["pg25"]
    for t, cp in table["specific_heat_kj_per_kg_k"].items():
        assert coolant_properties("pg25", float(t)).specific_heat_j_per_kg_k == \
            pytest.approx(1e3 * cp)


@given(st.floats(1e3, 5e6), st.floats(1.0, 15.0), st.sampled_from(["water", "pg25"]))
def test_flow_is_linear_in_heat_and_inverse_in_rise(heat, rise, coolant):
    flow = coolant_flow_m3_per_s(heat, coolant, 25.0, rise)
    assert coolant_flow_m3_per_s(2 * heat, coolant, 25.0, rise) == pytest.approx(2 * flow)
    props = coolant_properties(coolant, 25.0 + rise / 2)
    assert flow * props.specific_heat_j_per_kg_k * props.density_kg_per_m3 * rise == \
        pytest.approx(heat)


def test_nvl72_rack_power_from_parts_is_near_nvidia_figure():
    # NVIDIA DGX GB200 user guide: "approximately 120 kW" per NVL72 rack (OEMs 120-135).
    _, fac = _report("gb200-nvl72")
    rack_kw = fac["power"]["rack"]["total_w"] / 1e3
    assert fac["power"]["host"]["source"] == "parts"
    assert abs(rack_kw - 120) / 120 < 0.10, rack_kw
    assert fac["power"]["rack"]["rack_class"] == "supernode"


def test_feeds_cdus_far_end_and_floor_closed_forms():
    cluster, fac = _report("gb200-nvl72-superpod")
    peak = fac["power"]["cluster_at_tdp_w"]
    feeds = fac["feeds"]
    assert feeds["design_load_w"] == pytest.approx(peak * 1.10)
    assert feeds["per_feed_capacity_w"] == pytest.approx(feeds["design_load_w"] / (2 - 1))
    cool = fac["cooling"]
    assert cool["liquid_heat_per_rack_w"] + cool["air_heat_per_rack_w"] == \
        pytest.approx(fac["power"]["rack"]["total_w"])
    cdu = cool["cdu"]
    assert cdu["needed"] == math.ceil(cdu["liquid_heat_total_w"] / cdu["capacity_w"])
    assert cdu["installed"] == cdu["needed"] + 1
    assert cool["far_end_delta_t_c"] == pytest.approx(cool["delta_t_c"] / 0.9)
    floor = fac["floor"]
    assert floor["load_kg_per_m2"] == pytest.approx(1360 / (0.6 * 1.2))
    assert floor["racks"] == floor["compute_racks"] + floor["network_racks"] == \
        len(floor["positions"])
    assert fac["distribution"]["recommended"] == "busbar"  # 7 PDUs per feed > 2


def test_weight_from_parts_when_not_stated():
    _, fac = _report("hgx-h100")
    w = facility_data()["weight"]
    assert fac["floor"]["weight_source"] == "parts"
    hosts = fac["racks"]["hosts_per_rack"]
    assert fac["floor"]["rack_weight_kg"] == pytest.approx(w["empty_rack_kg"] + min(hosts, 1)
                                                           * 130.45)


def test_workload_power_uses_the_planners_energy_model():
    assert utilisation_factor(1.0) == 1.0
    assert utilisation_factor(0.0) == pytest.approx(power_assumptions().waiting_fraction_of_tdp)
    cluster, tdp = _report("gb200-nvl72-superpod")
    _, fac = _report("gb200-nvl72-superpod", WorkloadUse(0.7, 8.0, 4.7e6))
    chip = cluster.accelerator.tdp_w
    saved = tdp["power"]["cluster_at_tdp_w"] - fac["power"]["cluster_at_workload_w"]
    econ = default_economics(cluster.accelerator.name, chip)
    gpu_j = energy_per_step_j(0.7 * 8.0, 8.0, cluster.accelerators, econ)
    full_j = cluster.accelerators * chip * 8.0
    assert saved * 8.0 == pytest.approx((full_j - gpu_j) * fac["power"]["wall_factor"])
    e = fac["energy"]
    assert e["per_million_tokens_kwh"] == pytest.approx(
        e["per_step_facility_j"] / 4.7e6 * 1e6 / 3.6e6)
    assert e["per_step_facility_j"] == pytest.approx(fac["power"]["cluster_at_workload_w"]
                                                      * 1.2 * 8.0)


@pytest.mark.parametrize("racks, path", [
    ({"hosts_per_rack": 8}, "racks.hosts_per_rack"),
    ({"hosts_per_rack": 1, "switch_trays_per_rack": 2}, "racks.switch_trays_per_rack"),
])
def test_racks_that_cannot_be_built_are_refused(tmp_path, racks, path):
    import yaml

    from supernode.errors import InputError

    doc = {"name": "x", "host": {"accelerator": "h100-sxm-80gb", "accelerators_per_host": 8,
                                 "rack_units": 8},
           "scale_up": {"kind": "full_mesh", "size": 8} if "switch_trays_per_rack" in racks
           else {"kind": "nvswitch", "size": 8, "switch": "nvswitch-gen3", "switch_chips": 4},
           "racks": racks}
    file = tmp_path / "c.yaml"
    file.write_text(yaml.safe_dump(doc))
    with pytest.raises(InputError) as err:
        load_cluster(file)
    assert err.value.path == path


def test_catalogued_host_height_packs_the_rack():
    """DGX B200 is 10U (NVIDIA DGX B200 user guide, Mechanical Specifications): four to a
    48U rack at 57.2 kW, not twelve 4U hosts at 171.6 kW (the old default without
    host.rack_units)."""
    _, fac = _report("dgx-b200-superpod-4su")
    assert fac["racks"]["hosts_per_rack"] == 4
    assert fac["power"]["rack"]["total_w"] == pytest.approx(4 * 14.3e3)
    assert any("10U (catalog (dgx-b200))" in n for n in fac["notes"])


def test_a_catalogued_host_that_cannot_fit_is_refused(tmp_path):
    """Twelve DGX B200 (10U each, from the host catalog: none stated) need 120U."""
    import yaml

    from supernode.errors import InputError

    doc = yaml.safe_load((Path(__file__).parents[1] / "src/supernode/data/clusters/"
                          "dgx-b200-superpod-4su.yaml").read_text())
    doc["racks"] = {"hosts_per_rack": 12, "cooling": "air"}
    file = tmp_path / "c.yaml"
    file.write_text(yaml.safe_dump(doc))
    with pytest.raises(InputError) as err:
        load_cluster(file)
    assert err.value.path == "racks.hosts_per_rack" and "120U" in str(err.value)


def test_rack_scale_weight_counts_shelves_spine_and_busbar():
    """A GB300 NVL72 rack summed from parts: ~1.36 t like the GB200 NVL72 the presets
    state (The Register), not 810 kg (trays at 20 kg, no power shelves, spine or busbar)."""
    _, fac = _report("gb300-nvl72")
    assert fac["floor"]["weight_source"] == "parts"
    assert fac["floor"]["rack_weight_kg"] == pytest.approx(1360, rel=0.05)


def test_an_unnamed_8_gpu_server_weighs_like_a_dgx(tmp_path):
    """Four 8-GPU H200 hosts with no weight stated: the generic 8-GPU entry of the host
    catalog (8U, a DGX H100/H200's 130.45 kg): a rack of four weighs 150 + 4 x 130.45 kg,
    not 230 kg (20 kg per host); here one host per rack."""
    import yaml

    doc = {"name": "h200-racks",
           "host": {"name": "h200-server", "accelerator": "h200-sxm-141gb",
                    "accelerators_per_host": 8},
           "scale_up": {"kind": "nvswitch", "size": 8, "switch": "nvswitch-gen3",
                        "switch_chips": 4},
           "supernodes": 1, "racks": {"hosts_per_rack": 1, "cooling": "air"}}
    file = tmp_path / "c.yaml"
    file.write_text(yaml.safe_dump(doc))
    cluster = load_cluster(file)
    fac = facility_report(cluster, topology_report(cluster), None).to_dict()
    assert fac["floor"]["rack_weight_kg"] == pytest.approx(150 + 130.45)


def test_gb200_presets_send_87_percent_of_the_heat_to_liquid():
    """HPE GB200 NVL72 QuickSpecs: 115 of 132 kW liquid-cooled (87 %), as the presets'
    comment says; they used the 80 % cold-plate default."""
    for name in ("gb200-nvl72", "gb200-nvl72-superpod"):
        assert load_cluster(name).spec.racks.liquid_heat_fraction == pytest.approx(0.87)

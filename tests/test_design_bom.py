"""The bill of materials (issue 24 item 4): the counts of NVIDIA's DGX SuperPOD GB200
reference architecture reproduced from the preset of one scalable unit; every count the
same number the topology, cluster and facility models report (one truth); cables by type
and length class summing to the topology's links, no link longer than its type's reach;
checkpoint storage sized from the reliability checkpoint and turned into appliances;
prices user-supplied or "no price"; bom.csv the rows of results.json with units in its
column names and no cell a spreadsheet would run as a formula."""

from __future__ import annotations

import csv
import functools
import io
from dataclasses import replace
from pathlib import Path

import pytest
from designs import example_design
from hypothesis import given
from hypothesis import strategies as st

from supernode.cluster.load import load_cluster_spec
from supernode.cluster.resolve import resolve_cluster
from supernode.design.bom import bill_of_materials, check_unit_prices, component_ids
from supernode.design.bom_cables import (
    LENGTH_CLASSES,
    LENGTH_CLASSES_M,
    NO_TYPE,
    cable_data,
    cable_groups,
    cable_type,
    rack_positions,
    stocked_length,
    type_reach_m,
)
from supernode.design.bom_storage import RETAINED_CHECKPOINTS, appliance, appliances_needed
from supernode.design.examples import examples
from supernode.design.prices import NO_PRICE
from supernode.design.summary import cluster_summary
from supernode.errors import InputError
from supernode.facility import facility_report
from supernode.facility.data import facility_data
from supernode.report.bom_csv import CSV_COLUMNS, bom_csv
from supernode.spec.economics import EconomicsSpec
from supernode.textsafe import comment_safe, csv_cell_safe
from supernode.topology.metrics import topology_report

#: Per DGX SuperPOD GB200 scalable unit (the citation: the test below).
SU_RACKS, GPUS_PER_RACK, TRAYS, SWITCH_TRAYS, CHIPS_PER_TRAY = 8, 9216 // 128, 18, 9, 2
NVL5_LINKS_PER_GPU, NICS_PER_TRAY = 18, 4


def _csv_counts(bom: dict) -> dict[str, int]:
    """Count per component id, and per tier of all cable rows (``cables_<tier>``)."""
    rows = list(csv.DictReader(io.StringIO(bom_csv(bom))))
    counts = {r["component"]: int(r["count"]) for r in rows}
    for r in rows:
        if r["category"] == "cabling":
            key = f"cables_{r['tier']}"
            counts[key] = counts.get(key, 0) + int(r["count"])
    return counts


def _assert_scalable_units(counts: dict[str, int], units: int) -> None:
    racks = units * SU_RACKS
    assert counts["rack_compute"] == racks
    assert counts["accelerator"] == racks * GPUS_PER_RACK
    assert counts["host"] == racks * TRAYS
    assert counts["scale_up_switch_tray"] == racks * SWITCH_TRAYS
    assert counts["switch_scale_up_l1"] == racks * SWITCH_TRAYS * CHIPS_PER_TRAY
    assert counts["cables_scale_up_l1"] == racks * GPUS_PER_RACK * NVL5_LINKS_PER_GPU
    # the NVLink copper spine inside each NVL72 rack: in-rack passive copper
    assert counts["cable_scale_up_l1_in_rack_dac"] == counts["cables_scale_up_l1"]
    assert counts["nic"] == racks * TRAYS * NICS_PER_TRAY


def _stage_results(preset: str) -> tuple:
    """The cluster and the parts of results.json the BOM reads (cluster, topology,
    facility), from the review's own entry points, without the plan search."""
    cluster = resolve_cluster(load_cluster_spec(preset))
    topo = topology_report(cluster)
    return cluster, {"cluster": cluster_summary(cluster, topo), "topology": topo.to_dict(),
                     "facility": facility_report(cluster, topo).to_dict(),
                     "reliability": None}


def test_superpod_scalable_unit_matches_nvidia_reference_architecture():
    """The ``gb200-nvl72-superpod`` preset's BOM is one DGX SuperPOD GB200 scalable unit,
    as NVIDIA publishes it (576 GPUs, 144 compute trays, 72 NVLink switch trays...).

    Source: "NVIDIA DGX SuperPOD: Next Generation Scalable Infrastructure for AI Factories
    Reference Architecture Featuring NVIDIA DGX GB200", Architecture and Network Fabrics
    pages, https://docs.nvidia.com/dgx-superpod/reference-architecture-scalable-infrastructure-gb200/latest/dgx-superpod-architecture.html
    and .../latest/network-fabrics.html: "a single SU (8 DGX GB200 rack systems)"; "up to
    and beyond 128 racks with 9216 GPUs" (72 GPUs a rack); "Each DGX GB200 rack is built
    with 18 compute trays and 9 NVLink switch trays. Each NVLink switch tray is equipped
    with 2 NVLink switch chips"; "Each B200 GPU features 18 NVL5 links and has one
    dedicated NVL5 link connectivity to each one of the 18 switch chips". NICs: NVIDIA DGX
    GB200 user guide, Hardware: 4 ConnectX-7 400G per compute tray. The RA's compute-fabric
    leaf/spine switch counts are not in the pages above: not tested here.
    """
    cluster, data = _stage_results("gb200-nvl72-superpod")
    counts = _csv_counts(bill_of_materials(cluster, data))
    _assert_scalable_units(counts, 1)
    assert (counts["accelerator"], counts["host"], counts["scale_up_switch_tray"]) == \
        (576, 144, 72)


def test_flagship_review_is_two_scalable_units():
    """The flagship's 16 GB200 NVL72 racks, through the whole review: two scalable units
    of the reference architecture above."""
    counts = _csv_counts(example_design("flagship", simulate=False).to_dict()["bom"])
    _assert_scalable_units(counts, 2)


@pytest.mark.parametrize("name", ["flagship", "flawed"])
def test_every_count_is_the_models_own(name):
    """Switches, cables, modules from the topology report; racks, PDUs or busbar feeds
    and CDUs from the facility report; accelerators and hosts from the cluster."""
    data = example_design(name, simulate=False).to_dict()
    rows = {r["component"]: r for r in data["bom"]["rows"]}
    topo, fac = data["topology"], data["facility"]
    for tier, n in topo["switches"].items():
        assert rows.get(f"switch_{tier}", {"count": 0})["count"] == n
    for tier, n in topo["cables"].items():  # every link in exactly one typed row
        assert sum(r["count"] for r in rows.values()
                   if r["category"] == "cabling" and r["tier"] == tier) == n
    for tier, n in topo["optical_modules"].items():
        ends = [rows[k]["count"] for k in (f"transceiver_{tier}_host",
                                           f"transceiver_{tier}_switch") if k in rows]
        assert sum(ends) == (n if tier not in ("host", "scale_up", "scale_up_l1",
                                               "scale_up_l2") else 0)
    assert rows["accelerator"]["count"] == data["cluster"]["accelerators"]
    assert rows["host"]["count"] == data["cluster"]["hosts"]
    assert rows["rack_compute"]["count"] == fac["racks"]["compute_racks"]
    assert rows.get("rack_network", {"count": 0})["count"] == fac["racks"]["network_racks"]
    assert rows.get("cdu", {"count": 0})["count"] == fac["cooling"]["cdu"]["installed"]
    dist, feeds = fac["distribution"], fac["feeds"]["feeds"]
    if (dist["stated"] or dist["recommended"]) == "pdu":
        assert rows["pdu"]["count"] == dist["pdus_per_feed"] * feeds * \
            fac["racks"]["compute_racks"]
        assert "busbar_feed" not in rows
    else:
        assert "pdu" not in rows and rows["busbar_feed"]["count"] == \
            feeds * fac["racks"]["compute_racks"]
    up = fac["cabling"]["scale_up"]
    for r in rows.values():
        if r["category"] == "cabling" and r["tier"].startswith("scale_up"):
            assert r["run_m"] == up["run_m"]


def test_checkpoint_storage_from_the_reliability_checkpoint():
    data = example_design("flagship", simulate=False).to_dict()
    ck, storage = data["reliability"]["checkpoint"], data["bom"]["storage"]
    assert storage["checkpoint_bytes"] == ck["size_bytes"]
    assert storage["retained_checkpoints"] == RETAINED_CHECKPOINTS
    assert storage["capacity_bytes"] == pytest.approx(RETAINED_CHECKPOINTS * ck["size_bytes"])
    # the needed bandwidth writes one checkpoint in exactly its interval
    assert storage["write_bandwidth_needed_bytes_per_s"] * ck["chosen_interval_s"] == \
        pytest.approx(ck["size_bytes"])
    row = next(r for r in data["bom"]["rows"] if r["component"] == "storage_appliance")
    assert row["capacity_bytes"] == storage["capacity_bytes"]
    assert row["count"] == storage["appliances"]


def test_unpriced_rows_say_so_and_user_prices_extend():
    data = example_design("flagship", simulate=False).to_dict()
    bom = data["bom"]
    assert bom["priced_total_usd"] is None and bom["priced_rows"] == 0
    assert all(r["price_source"] == NO_PRICE and r["extended_price_usd"] is None
               for r in bom["rows"])
    cluster = resolve_cluster(load_cluster_spec(data["inputs"]["cluster"]))
    priced = EconomicsSpec(unit_prices_usd={"accelerator": 30_000.0, "cdu": 250_000.0},
                           source="a quote")
    cluster = replace(cluster, spec=cluster.spec.model_copy(update={"economics": priced}))
    check_unit_prices(cluster)
    again = bill_of_materials(cluster, data)
    rows = {r["component"]: r for r in again["rows"]}
    gpus, cdus = rows["accelerator"]["count"], rows["cdu"]["count"]
    assert rows["accelerator"]["extended_price_usd"] == 30_000.0 * gpus
    assert rows["accelerator"]["price_source"] == "user-supplied (a quote)"
    assert again["priced_total_usd"] == 30_000.0 * gpus + 250_000.0 * cdus
    assert again["priced_rows"] == 2 and again["unpriced_rows"] == len(rows) - 2
    assert [r["count"] for r in again["rows"]] == [r["count"] for r in bom["rows"]]


def test_unknown_price_key_is_refused_with_its_path():
    cluster = resolve_cluster(load_cluster_spec("hgx-h100"))
    wrong = EconomicsSpec(unit_prices_usd={"gpu": 1.0})
    cluster = replace(cluster, spec=cluster.spec.model_copy(update={"economics": wrong}))
    with pytest.raises(InputError) as caught:
        check_unit_prices(cluster)
    assert caught.value.path == "economics.unit_prices_usd.gpu"
    assert "accelerator" in caught.value.message


def test_bom_csv_is_the_rows_with_units_in_the_names():
    data = example_design("flagship", simulate=False).to_dict()
    text = bom_csv(data["bom"])
    rows = list(csv.DictReader(io.StringIO(text)))
    assert tuple(rows[0]) == CSV_COLUMNS
    assert [r["component"] for r in rows] == [r["component"] for r in data["bom"]["rows"]]
    assert set(r["price_key"] for r in rows) <= set(component_ids())
    for name in CSV_COLUMNS:
        assert name in ("component", "category", "tier", "part", "count", "length_class",
                        "cable_type", "stocked_length", "price_key", "price_source",
                        "derived_from") or name.endswith(
                            ("_m", "_bytes", "_bytes_per_s", "_usd")), name
    for r, row in zip(rows, data["bom"]["rows"], strict=True):
        assert int(r["count"]) == row["count"]
        if row["capacity_bytes"] is not None:
            assert float(r["capacity_bytes"]) == row["capacity_bytes"]


@given(st.text(max_size=20))
def test_csv_cells_never_start_a_formula(text):
    cell = csv_cell_safe(text)
    assert not cell.startswith(("=", "+", "-", "@", "\t", "\r"))
    assert cell.isprintable()
    assert cell in (comment_safe(text), "'" + comment_safe(text))  # the text is kept


@given(st.floats(0, 500), st.floats(0, 500))
def test_stocked_length_covers_the_run_and_is_monotone(a, b):
    top = {f"<= {t:g} m": t for t in LENGTH_CLASSES_M}
    cls = stocked_length(a)
    assert cls is not None
    if a <= LENGTH_CLASSES_M[-1]:
        assert top[cls] >= a and all(t < a for t in LENGTH_CLASSES_M if t < top[cls])
    else:
        assert cls.startswith(">")
    if a <= b <= LENGTH_CLASSES_M[-1]:
        assert top[cls] <= top[stocked_length(b)]
    assert stocked_length(None) is None


def test_flagship_bom_csv_is_the_golden_file():
    """Golden file: the flagship's bom.csv byte for byte (tests/data/bom/flagship-bom.csv;
    a model change that moves a count shows here, row by row)."""
    golden = Path(__file__).parent / "data" / "bom" / "flagship-bom.csv"
    text = bom_csv(example_design("flagship", simulate=False).to_dict()["bom"])
    assert text == golden.read_text(encoding="utf-8")


CABLE_TYPES = tuple(cable_data()["types"])


def _cable_rows(bom: dict) -> list[dict]:
    return [r for r in bom["rows"] if r["category"] == "cabling"]


@pytest.mark.parametrize("preset", ["gb200-nvl72-superpod", "flawed", "h100-servers",
                                    "deepseek-v3-nvl72"])
def test_cables_per_type_sum_to_the_link_count(preset):
    """Every link of topology.cables is in exactly one (tier, length class, type) row, and
    no row's longest run is beyond its type's reach at the link's lane rate."""
    cluster, data = _stage_results(_preset_or_example(preset))
    rows = _cable_rows(bill_of_materials(cluster, data))
    assert sum(r["count"] for r in rows) == sum(data["topology"]["cables"].values())
    for tier, n in data["topology"]["cables"].items():
        assert sum(r["count"] for r in rows if r["tier"] == tier) == n
    for r in rows:
        assert r["length_class"] in LENGTH_CLASSES and r["cable_type"] in CABLE_TYPES
        assert r["run_m"] <= r["reach_m"]
        assert r["price_key"] == f"cable_{r['cable_type']}"
        assert r["price_key"] in component_ids()
    assert len({r["component"] for r in rows}) == len(rows)


def _preset_or_example(name: str) -> str:
    e = examples().get(name)
    return str(e.cluster) if e is not None else name


@given(st.sampled_from(["copper", "optical"]), st.sampled_from([100.0, 200.0]),
       st.floats(0, 800, allow_nan=False))
def test_a_link_never_gets_a_type_it_is_longer_than(medium, lane, run):
    """The type chosen reaches the run; every cheaper candidate of the medium does not
    (so a link longer than a type's reach never gets that type)."""
    kind = cable_type(medium, lane, run)
    order = cable_data()["candidates_by_medium"][medium]
    if kind != NO_TYPE:
        assert run <= type_reach_m(kind, lane) + 1e-9
        assert cable_data()["types"][kind]["transceivers"] == (medium == "optical")
    for earlier in order[:order.index(kind)] if kind != NO_TYPE else order:
        reach = type_reach_m(earlier, lane)
        assert reach is None or reach < run
    for name in CABLE_TYPES:
        reach = type_reach_m(name, lane)
        if reach is not None and run > reach + 1e-9:
            assert kind != name


def test_dac_reach_is_the_facility_copper_reach():
    """One truth: the BOM's passive copper reach per lane rate is the facility's
    (facility.yaml cabling.copper_reach_m, what its copper-reach check uses)."""
    table = facility_data()["cabling"]["copper_reach_m"]
    for lane in cable_data()["types"]["dac"]["reach_m"]:
        assert type_reach_m("dac", float(lane)) == float(table[lane])


def test_rack_positions_follow_the_floor_plan():
    data = example_design("flagship", simulate=False).to_dict()
    floor = data["facility"]["floor"]
    assert rack_positions(floor) == [(p["kind"], p["row"], p["position"])
                                     for p in floor["positions"]]


def test_copper_scale_out_takes_dac_acc_or_aoc_and_no_transceivers(tmp_path):
    """A mixed fabric: NIC-to-leaf links copper (DAC within 2 m, active copper to 5 m,
    AOC beyond; no modules counted for them), leaf-to-spine optical (fibre + modules)."""
    text = (Path(str(examples()["h100-servers"].cluster))).read_text(encoding="utf-8")
    assert text.count("medium: optical") == 1
    path = tmp_path / "mixed.yaml"
    path.write_text(text.replace("medium: optical", "medium: mixed"), encoding="utf-8")
    cluster, data = _stage_results(str(path))
    bom = bill_of_materials(cluster, data)
    leaf = [r for r in _cable_rows(bom) if r["tier"] == "leaf"]
    assert leaf and all(r["cable_type"] in ("dac", "acc", "aoc") for r in leaf)
    assert all(r["run_m"] > 5.0 for r in leaf if r["cable_type"] == "aoc")
    components = {r["component"] for r in bom["rows"]}
    assert "transceiver_leaf_host" not in components
    assert data["topology"]["optical_modules"].get("leaf", 0) == 0
    spine = [r for r in _cable_rows(bom) if r["tier"] == "spine"]
    assert spine and all(r["cable_type"] in ("fiber_mm", "fiber_sm") for r in spine)


@given(st.floats(0, 1e13), st.floats(0, 1e17))
def test_appliances_meet_both_needs_and_no_fewer_would(write, capacity):
    """appliances = max(ceil(write / per-appliance write), ceil(capacity / usable)), at
    least one: enough for both, and one fewer falls short of one of them."""
    entry = appliance()
    per_write, per_cap = entry["write_gbyte_per_s"] * 1e9, entry["usable_capacity_tbyte"] * 1e12
    n, by_bw, by_cap = appliances_needed(write, capacity, entry)
    assert n == max(by_bw, by_cap, 1)
    assert n * per_write >= write * (1 - 1e-12) and n * per_cap >= capacity * (1 - 1e-12)
    if n > 1:
        assert (n - 1) * per_write < write or (n - 1) * per_cap < capacity


def test_flagship_storage_rows_are_the_sizing():
    data = example_design("flagship", simulate=False).to_dict()
    storage = data["bom"]["storage"]
    rows = {r["component"]: r for r in data["bom"]["rows"]}
    n, _, _ = appliances_needed(storage["write_bandwidth_needed_bytes_per_s"],
                                storage["capacity_bytes"], appliance())
    assert rows["storage_appliance"]["count"] == storage["appliances"] == n
    assert rows["storage_network_port"]["count"] == n * appliance()["network_ports"]
    assert storage["appliance_write_bytes_per_s"] == appliance()["write_gbyte_per_s"] * 1e9


@given(st.integers(1, 60), st.integers(1, 12), st.integers(1, 20), st.integers(1, 300),
       st.integers(1, 200), st.integers(0, 5000), st.integers(0, 5000))
def test_placed_cables_always_sum_to_the_topology_count(compute, network, per_row, leaves,
                                                        spines, leaf_links, spine_links):
    """On any floor (racks, rows, switch counts), every tier's typed rows sum to its link
    count and each row's longest run is within its type's reach (or typed ``none``)."""
    cluster, data = _superpod()
    floor = dict(data["facility"]["floor"], compute_racks=compute, network_racks=network,
                 racks=compute + network, racks_per_row=per_row)
    hosts = compute * data["facility"]["racks"]["hosts_per_rack"]
    fake = dict(data, cluster=dict(data["cluster"], hosts=hosts),
                facility=dict(data["facility"], floor=floor),
                topology=dict(data["topology"], switches={"leaf": leaves, "spine": spines},
                              cables={"leaf": leaf_links, "spine": spine_links}))
    groups = cable_groups(cluster, fake)
    for tier, n in (("leaf", leaf_links), ("spine", spine_links)):
        assert sum(g["count"] for g in groups if g["tier"] == tier) == n
    for g in groups:
        assert g["count"] > 0 and g["length_class"] in LENGTH_CLASSES
        assert g["cable_type"] == NO_TYPE or g["run_m"] <= g["reach_m"]


@functools.cache
def _superpod() -> tuple:
    """The one-SU preset's stage results, computed once (treat as read-only)."""
    return _stage_results("gb200-nvl72-superpod")

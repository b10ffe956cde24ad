"""The bill of materials (issue 24 item 4): the counts of NVIDIA's DGX SuperPOD GB200
reference architecture reproduced from the preset of one scalable unit; every count the
same number the topology, cluster and facility models report (one truth); checkpoint
storage sized from the reliability checkpoint; prices user-supplied or "no price"; bom.csv
the rows of results.json with units in its column names and no cell a spreadsheet would
run as a formula."""

from __future__ import annotations

import csv
import io
from dataclasses import replace
from pathlib import Path

import pytest
from designs import example_design
from hypothesis import given
from hypothesis import strategies as st

from supernode.cluster.load import load_cluster_spec
from supernode.cluster.resolve import resolve_cluster
from supernode.design.bom import (
    LENGTH_CLASSES_M,
    RETAINED_CHECKPOINTS,
    bill_of_materials,
    check_unit_prices,
    component_ids,
    length_class,
)
from supernode.design.prices import NO_PRICE
from supernode.design.summary import cluster_summary
from supernode.errors import InputError
from supernode.facility import facility_report
from supernode.report.bom_csv import CSV_COLUMNS, bom_csv
from supernode.spec.economics import EconomicsSpec
from supernode.textsafe import comment_safe, csv_cell_safe
from supernode.topology.metrics import topology_report

#: Per DGX SuperPOD GB200 scalable unit (the citation: the test below).
SU_RACKS, GPUS_PER_RACK, TRAYS, SWITCH_TRAYS, CHIPS_PER_TRAY = 8, 9216 // 128, 18, 9, 2
NVL5_LINKS_PER_GPU, NICS_PER_TRAY = 18, 4


def _csv_counts(bom: dict) -> dict[str, int]:
    rows = list(csv.DictReader(io.StringIO(bom_csv(bom))))
    return {r["component"]: int(r["count"]) for r in rows}


def _assert_scalable_units(counts: dict[str, int], units: int) -> None:
    racks = units * SU_RACKS
    assert counts["rack_compute"] == racks
    assert counts["accelerator"] == racks * GPUS_PER_RACK
    assert counts["host"] == racks * TRAYS
    assert counts["scale_up_switch_tray"] == racks * SWITCH_TRAYS
    assert counts["switch_scale_up_l1"] == racks * SWITCH_TRAYS * CHIPS_PER_TRAY
    assert counts["cable_scale_up_l1"] == racks * GPUS_PER_RACK * NVL5_LINKS_PER_GPU
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
    for tier, n in topo["cables"].items():
        assert rows.get(f"cable_{tier}", {"count": 0})["count"] == n
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
    cabling = fac["cabling"]
    for tier in topo["cables"]:
        if f"cable_{tier}" in rows:
            run = cabling["scale_up" if tier.startswith("scale_up") else "scale_out"]["run_m"]
            assert rows[f"cable_{tier}"]["run_m"] == run


def test_checkpoint_storage_from_the_reliability_checkpoint():
    data = example_design("flagship", simulate=False).to_dict()
    ck, storage = data["reliability"]["checkpoint"], data["bom"]["storage"]
    assert storage["checkpoint_bytes"] == ck["size_bytes"]
    assert storage["retained_checkpoints"] == RETAINED_CHECKPOINTS
    assert storage["capacity_bytes"] == pytest.approx(RETAINED_CHECKPOINTS * ck["size_bytes"])
    # the needed bandwidth writes one checkpoint in exactly its interval
    assert storage["write_bandwidth_needed_bytes_per_s"] * ck["chosen_interval_s"] == \
        pytest.approx(ck["size_bytes"])
    row = next(r for r in data["bom"]["rows"] if r["component"] == "checkpoint_storage")
    assert row["capacity_bytes"] == storage["capacity_bytes"]


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
    assert set(r["component"] for r in rows) <= set(component_ids())
    for name in CSV_COLUMNS:
        assert name in ("component", "category", "tier", "part", "count", "length_class",
                        "price_source", "derived_from") or name.endswith(
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
def test_length_class_covers_the_run_and_is_monotone(a, b):
    top = {f"<= {t:g} m": t for t in LENGTH_CLASSES_M}
    cls = length_class(a)
    assert cls is not None
    if a <= LENGTH_CLASSES_M[-1]:
        assert top[cls] >= a and all(t < a for t in LENGTH_CLASSES_M if t < top[cls])
    else:
        assert cls.startswith(">")
    if a <= b <= LENGTH_CLASSES_M[-1]:
        assert top[cls] <= top[length_class(b)]
    assert length_class(None) is None


def test_flagship_bom_csv_is_the_golden_file():
    """Golden file: the flagship's bom.csv byte for byte (tests/data/bom/flagship-bom.csv;
    a model change that moves a count shows here, row by row)."""
    golden = Path(__file__).parent / "data" / "bom" / "flagship-bom.csv"
    text = bom_csv(example_design("flagship", simulate=False).to_dict()["bom"])
    assert text == golden.read_text(encoding="utf-8")

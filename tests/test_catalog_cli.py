"""``supernode catalog list|show``: tables, JSON with stable keys, exit 2 on unknown names."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from supernode import catalog
from supernode.commands import app, register_all

register_all()
runner = CliRunner()

ACCELERATOR_KEYS = [
    "name", "vendor", "kind", "bf16_dense_tflops", "memory_gbyte",
    "memory_bandwidth_tbyte_per_s", "scale_up_ports", "scale_up_gbyte_per_s", "tdp_w",
    "confidence",
]
SWITCH_KEYS = [
    "name", "vendor", "radix_ports", "port_speed_gbit_per_s", "in_network_reduction",
    "confidence",
]
CLUSTER_KEYS = [
    "name", "accelerator", "accelerators", "hosts", "supernodes", "scale_up_kind",
    "scale_up_size", "scale_up_gbyte_per_s", "scale_out_gbyte_per_s", "scale_out_tiers",
    "description",
]


def invoke(*args: str):
    return runner.invoke(app, ["catalog", *args])


def test_list_json_has_stable_keys():
    result = invoke("list", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert list(data) == ["accelerators", "switches", "clusters"]
    assert [list(r) for r in data["accelerators"]] == [ACCELERATOR_KEYS] * len(
        catalog.accelerators())
    assert all(list(r) == SWITCH_KEYS for r in data["switches"])
    assert all(list(r) == CLUSTER_KEYS for r in data["clusters"])
    rows = {r["name"]: r for r in data["accelerators"]}
    assert rows["h100-sxm-80gb"]["bf16_dense_tflops"] == 989
    assert rows["h100-sxm-80gb"]["scale_up_gbyte_per_s"] == 450
    clusters = {r["name"]: r for r in data["clusters"]}
    assert clusters["gb200-nvl72"]["accelerators"] == 72
    assert clusters["tpu-v4-pod"]["scale_up_kind"] == "torus"


def _table_rows(text: str, title: str) -> dict[str, list[str]]:
    """The rows of the table under ``title`` (first cell: the entry's name), split into
    cells, header and rule left out."""
    body = text.split(f"{title}\n", 1)[1]
    rows = {}
    for line in body.splitlines()[3:]:
        cells = line.split()
        if not cells:
            break
        rows[cells[0]] = cells
    return rows


def test_list_tables():
    """Three tables, one row per catalog entry (what ``list --json`` lists), each row
    showing the entry's own figures."""
    result = invoke("list")
    assert result.exit_code == 0, result.output
    data = json.loads(invoke("list", "--json").stdout)
    tables = {key: _table_rows(result.stdout, key.capitalize()) for key in data}
    for key, entries in data.items():
        assert list(tables[key]) == [e["name"] for e in entries], key
    for entry in data["accelerators"]:
        assert tables["accelerators"][entry["name"]][1] == entry["vendor"]
    for entry in data["switches"]:
        row = tables["switches"][entry["name"]]
        assert row[1:4] == [entry["vendor"], str(entry["radix_ports"]),
                            f"{entry['port_speed_gbit_per_s']:g}"]
    for entry in data["clusters"]:
        row = tables["clusters"][entry["name"]]
        assert row[1:4] == [entry["accelerator"], f"{entry['accelerators']:,}",
                            f"{entry['hosts']:,}"]


@pytest.mark.parametrize(
    ("name", "kind"),
    [("h100-sxm-80gb", "accelerator"), ("GB200", "accelerator"),
     ("ub-switch", "switch"), ("gb200-nvl72", "cluster")],
)
def test_show_json(name, kind):
    result = invoke("show", name, "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert list(data) == ["kind", "name", "entry", "derived"]
    assert data["kind"] == kind
    assert data["name"] == name.lower()
    assert data["entry"]["source"], "the whole entry, sources included"


def test_show_accelerator_derived_bandwidth():
    data = json.loads(invoke("show", "mi300x", "--json").stdout)
    assert data["entry"]["peak_dense_tflops"]["bf16"] == 1307.4
    assert data["derived"] == {"scale_up_gbyte_per_s": 448.0,
                               "scale_up_bidirectional_gbyte_per_s": 896.0}


def test_show_cluster_derived_counts():
    data = json.loads(invoke("show", "dgx-h100-superpod-su", "--json").stdout)
    assert data["derived"]["accelerators"] == 256
    assert data["derived"]["hosts"] == 32
    assert data["entry"]["scale_out"]["switch"] == "quantum2-qm9700"


def test_show_table_lists_sources():
    result = invoke("show", "quantum-qm8700")
    assert result.exit_code == 0, result.output
    text = " ".join(result.stdout.split())  # the value column folds long lines
    assert "not in the shared reference catalog" in text
    assert "radix_ports 40" in text


def test_show_unknown_name_exits_2_with_suggestions():
    result = invoke("show", "h100-sxm-81gb")
    assert result.exit_code == 2
    assert "Traceback" not in result.output
    assert "did you mean" in result.stderr and "h100-sxm-80gb" in result.stderr
    assert result.stdout == ""


def test_show_unknown_json_prints_no_json():
    result = invoke("show", "nonsense-part-xyz", "--json")
    assert result.exit_code == 2
    assert result.stdout == ""
    assert "unknown catalog entry" in result.stderr


def test_main_entry_point(capsys):
    from supernode.cli import main

    with pytest.raises(SystemExit) as exc:
        main(["catalog", "show", "tpu-v4", "--json"])
    assert exc.value.code == 0
    assert json.loads(capsys.readouterr().out)["entry"]["scale_up_ports"] == 6


def _doc_rows() -> dict[str, list[str]]:
    from pathlib import Path

    doc = Path(__file__).resolve().parents[1] / "docs" / "catalog.md"
    rows = {}
    for line in doc.read_text(encoding="utf-8").splitlines():
        if line.startswith("| `"):
            cells = [c.strip().strip("`") for c in line.strip("|").split("|")]
            rows[cells[0]] = cells
    return rows


def test_docs_tables_match_the_catalog():
    data = json.loads(invoke("list", "--json").stdout)
    rows = _doc_rows()
    for r in data["accelerators"]:
        cells = rows[r["name"]]
        assert float(cells[3]) == r["bf16_dense_tflops"]
        assert float(cells[4]) == r["memory_gbyte"]
        assert float(cells[7]) == pytest.approx(r["scale_up_gbyte_per_s"], rel=1e-4)
    for r in data["switches"]:
        cells = rows[r["name"]]
        assert (int(cells[2]), float(cells[3])) == (r["radix_ports"], r["port_speed_gbit_per_s"])
    for r in data["clusters"]:
        cells = rows[r["name"]]
        assert int(cells[2].replace(",", "")) == r["accelerators"]
        assert int(cells[3].replace(",", "")) == r["hosts"]
        assert float(cells[7]) == pytest.approx(r["scale_up_gbyte_per_s"], rel=1e-4)

"""``supernode topology``: tables by default, stable JSON with --json, exit 2 on bad input."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from supernode.catalog import cluster_presets
from supernode.commands import app, register_all

register_all()
runner = CliRunner()


def test_topology_table():
    result = runner.invoke(app, ["topology", "dgx-h100-superpod-su"], terminal_width=200)
    assert result.exit_code == 0, result.output
    assert "counts per tier" in result.output
    assert "4,608" in result.output  # NVLinks
    assert "seed 001" in result.output


def test_topology_json_keys():
    result = runner.invoke(app, ["topology", "gb200-nvl72", "--json"])
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert data["scale_up_domain_size"] == 72
    assert data["switches"] == {"scale_up_l1": 18}
    assert data["bisection_bandwidth_bytes_per_s"]["scale_up_domain"] == 32.4e12
    assert list(data)[:3] == ["name", "accelerators", "hosts"]


def test_topology_unknown_preset_exits_2():
    """Exit 2 with one error line naming the cluster that was not found and every preset."""
    result = runner.invoke(app, ["topology", "no-such-cluster"])
    assert result.exit_code == 2 and result.stdout == ""
    (line,) = result.stderr.strip().splitlines()
    assert line == ("error: no-such-cluster: no such file or preset (presets: "
                    + ", ".join(sorted(cluster_presets())) + ")")


def test_topology_radix_error_exits_2(tmp_path):
    path = tmp_path / "big.yaml"
    path.write_text(
        "name: big\n"
        "host: {accelerator: h100-sxm-80gb, accelerators_per_host: 8,"
        " nics: {count: 8, speed_gbit_per_s: 400}}\n"
        "scale_up: {kind: nvswitch, size: 8, switch: nvswitch-gen3, switch_chips: 4}\n"
        "scale_out: {tiers: 3, switch: quantum2-qm9700}\n"
        "supernodes: 12500\n")
    result = runner.invoke(app, ["topology", str(path)])
    assert result.exit_code == 2
    assert "74" in result.output


def test_docs_example_matches_cli():
    """The example in docs/topology.md is the command's real output (examples are tests,
    docs/architecture.md)."""
    from pathlib import Path

    doc = (Path(__file__).parent.parent / "docs" / "topology.md").read_text(encoding="utf-8")
    block = doc.split("$ supernode topology dgx-h100-superpod-su\n", 1)[1].split("```", 1)[0]
    result = runner.invoke(app, ["topology", "dgx-h100-superpod-su"], terminal_width=200)
    produced = {" ".join(line.split()) for line in result.output.splitlines()}
    rows = [line for line in block.splitlines()
            if line.split()[:1] and line.split()[0] in
            ("host", "scale_up_l1", "leaf", "spine", "total", "scale_up", "scale_out", "cluster")]
    assert len(rows) == 8
    for row in rows:
        assert " ".join(row.split()) in produced, row

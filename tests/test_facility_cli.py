"""``supernode facility``: the facility of a cluster at TDP and for a job; its tables are
the report's facility tables, its ``--json`` keys the review's ``facility`` keys; the
energy priced at the job's step (estimated, or simulated with ``--simulate``); bad input
exits 2 with one line."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from supernode.commands import app, register_all
from supernode.design.reproduce import FACILITY_FIGURES

JOB = ("--workload", "llama3-8b", "--tp", "8", "--global-batch", "72")


def _run(*args: str):
    register_all()
    return CliRunner().invoke(app, ["facility", *args])


def _json(*args: str) -> dict:
    result = _run(*args, "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_at_tdp_without_a_workload_every_review_key_and_no_job():
    data = _json("--cluster", "gb200-nvl72")
    assert set(FACILITY_FIGURES) | {"cluster", "job"} == set(data)
    assert data["cluster"] == "gb200-nvl72" and data["job"] is None
    assert data["power_cap"] is None  # no plan to price at a cap
    power = data["power"]
    # one NVL72 rack is the supernode and (no scale-out fabric) the whole cluster
    assert power["rack"]["total_w"] == power["supernode_w"] == power["cluster_at_tdp_w"]
    assert power["cluster_at_workload_w"] == power["cluster_at_tdp_w"]  # at TDP: no job
    assert data["energy"]["per_step_it_j"] is None
    assert data["racks"]["racks"] == data["floor"]["racks"] == 1


def test_text_prints_the_reports_facility_tables():
    result = _run("--cluster", "gb200-nvl72", *JOB)
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert out.startswith("gb200-nvl72: facility for llama3-8b at tp=8, pp=1, dp=9")
    for title in ("Power", "Energy and cost", "Power cap against fewer racks", "Cooling",
                  "Floor and cabling"):
        assert title in out
    data = _json("--cluster", "gb200-nvl72", *JOB)
    rack_kw = f"{data['power']['rack']['total_w'] / 1e3:,.1f} kW"  # the report's "w" kind
    assert rack_kw in out
    at_tdp = _run("--cluster", "gb200-nvl72").stdout
    assert "at TDP" in at_tdp.splitlines()[0] and "Power cap" not in at_tdp


def test_job_energy_is_the_power_at_its_use_times_its_step():
    data = _json("--cluster", "gb200-nvl72", *JOB)
    job, power, energy = data["job"], data["power"], data["energy"]
    assert job["step_source"] == "estimate" and job["plan"]["dp"] == 9
    assert job["tokens_per_step"] == 72 * 8192  # llama3-8b: 8,192-token sequences
    assert 0 < job["busy_share"] <= 1
    assert power["accelerator_busy_share"] == job["busy_share"]
    assert power["cluster_at_workload_w"] < power["cluster_at_tdp_w"]  # waiting draws less
    assert energy["per_step_it_j"] == pytest.approx(power["cluster_at_workload_w"]
                                                    * job["step_time_s"], rel=1e-12)
    kwh = energy["per_step_facility_j"] / job["tokens_per_step"] * 1e6 / 3.6e6
    assert energy["per_million_tokens_kwh"] == pytest.approx(kwh, rel=1e-12)
    caps = data["power_cap"]["caps"]
    assert [c["power_limit_w"] for c in caps] == sorted((c["power_limit_w"] for c in caps),
                                                        reverse=True)
    assert caps[0]["step_time_s"] == pytest.approx(job["step_time_s"], rel=1e-12)  # at TDP
    assert caps[-1]["step_time_s"] > caps[0]["step_time_s"]  # a lower clock is slower


def test_simulate_prices_the_energy_at_the_simulated_step():
    data = _json("--cluster", "hgx-h100", *JOB, "--simulate", "--seed", "3")
    job = data["job"]
    assert job["step_source"] == "simulation"
    assert data["energy"]["per_step_it_j"] == pytest.approx(
        data["power"]["cluster_at_workload_w"] * job["step_time_s"], rel=1e-12)


@pytest.mark.parametrize("args, field", [
    (("--cluster", "gb200-nvl72", "--tp", "8"), "--workload"),
    (("--cluster", "gb200-nvl72", "--simulate"), "--workload"),
    (("--cluster", "no-such-cluster"), "cluster"),
    (("--cluster", "gb200-nvl72", "--workload", "llama3-8b", "--tp", "7"), "tp"),
])
def test_bad_input_is_one_error_line_and_exit_2(args, field):
    result = _run(*args)
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:") and field in lines[0], lines


def test_docs_example_is_the_real_output():
    """The example of docs/facility.md is the command's output: its first line and every
    table row it shows (whitespace aside)."""
    from pathlib import Path

    doc = (Path(__file__).parent.parent / "docs" / "facility.md").read_text(encoding="utf-8")
    command = ("supernode facility --cluster examples/design/flagship/cluster.yaml "
               "--workload llama3-405b")
    block = doc.split(f"$ {command}\n", 1)[1].split("```", 1)[0]
    root = Path(__file__).parent.parent
    register_all()
    result = CliRunner().invoke(app, ["facility", "--cluster",
                                      str(root / "examples/design/flagship/cluster.yaml"),
                                      "--workload", "llama3-405b"], terminal_width=120)
    assert result.exit_code == 0, result.output
    produced = {" ".join(line.split()) for line in result.output.splitlines()}
    shown = [line for line in block.splitlines() if line.startswith("│")]
    assert len(shown) >= 50
    for line in [block.splitlines()[0], *shown]:
        assert " ".join(line.split()) in produced, line

"""supernode reliability: output, plots, bad input (exit 2), seeds, pool vs Ray."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from supernode.cli import app
from supernode.commands import register_all
from supernode.reliability.montecarlo import RESTART, FailureClass, MonteCarloSpec
from supernode.reliability.parallel import run_monte_carlo
from supernode.reliability.rates import DAY_S

register_all()
BASE = ["reliability", "--cluster", "dgx-h100-superpod-su", "--workload", "llama3-70b",
        "--tp", "8", "--pp", "4", "--global-batch", "256", "--runs", "40", "--days", "20"]


def _run(*extra: str):
    return CliRunner().invoke(app, [*BASE, *extra])


def test_json_has_every_section_and_the_rules():
    out = _run("--json")
    assert out.exit_code == 0, out.output
    d = json.loads(out.stdout)
    for key in ("interruptions", "blast_radius", "degraded_modes", "checkpoint", "recovery",
                "goodput", "hot_standby", "what_if", "rules"):
        assert key in d
    assert d["job"]["gpus"] == 256
    assert [r["id"] for r in d["rules"]] == ["recovery_time_objective", "hot_standby_bandwidth"]
    assert d["recovery"]["rto_s"] == pytest.approx(sum(
        d["recovery"]["times"][k] for k in ("detection_s", "diagnosis_s", "reschedule_s",
                                            "warmup_s")) + d["checkpoint"]["read_s"])
    c = d["checkpoint"]
    assert c["young_interval_s"] == pytest.approx((2 * c["blocking_s"] * c["mtbf_s"]) ** 0.5)
    g = d["goodput"]["monte_carlo"]["goodput"]
    assert 0 < g["p5"] <= g["p50"] <= g["p95"] <= 1
    spine = next(m for m in d["degraded_modes"] if m["component"] == "spine_switch")
    # On one rail-optimised SU every rail's traffic stays under its rail leaf (PXN), so a
    # lost spine cannot slow this job; it never speeds it up.
    assert spine["step_time_s"] >= d["job"]["step_time_s"]


def test_same_seed_same_output_other_seed_differs():
    a, b, c = _run("--json"), _run("--json"), _run("--json", "--seed", "5")
    assert a.stdout == b.stdout
    assert json.loads(a.stdout)["goodput"] != json.loads(c.stdout)["goodput"]


def test_nvlink_and_nvswitch_faults_interrupt_on_nvl72():
    """A live NVLink fault is Xid 74 and NVIDIA's health check ``nvlink_active`` drains a
    GPU with any inactive link (docs.nvidia.com/health-validation/reference/checks/nvlink):
    both scale-up faults stop the job (they were 'degrade, keep running'). A lost switch
    plane restarts the job 1/18 slower unless a 10 % hot standby covers it. Interruptions
    on gb200-nvl72-superpod go from 0.299 to ~0.46 a day."""
    args = ["reliability", "--cluster", "gb200-nvl72-superpod", "--workload", "llama3-70b",
            "--tp", "8", "--pp", "4", "--global-batch", "288", "--runs", "20", "--json"]
    plain = json.loads(CliRunner().invoke(app, args).stdout)
    spare = json.loads(CliRunner().invoke(app, [*args, "--hot-standby", "0.1"]).stdout)
    rows = {m["component"]: m for m in plain["blast_radius"]}
    assert rows["nvlink"]["effect"] == rows["nvswitch"]["effect"] == "interrupt"
    assert rows["nvlink"]["hosts_out"] == 1  # the drained GPU's tray
    assert rows["nvswitch"]["bandwidth_loss"] == pytest.approx(1 / 18)
    assert rows["nvswitch"]["speed"] < 1  # the restart runs with one plane fewer
    by = plain["interruptions"]["interruptions_per_day_by_component"]
    assert {"nvlink", "nvswitch"} <= set(by)
    assert plain["interruptions"]["interruptions_per_day"] == pytest.approx(0.462, abs=0.01)
    covered = next(m for m in spare["blast_radius"] if m["component"] == "nvswitch")
    assert covered["effect"] == "interrupt" and covered["speed"] == 1
    assert spare["rules"][1]["passes"] and not plain["rules"][1]["passes"]


def test_plots_are_written(tmp_path):
    out = _run("--plot", str(tmp_path / "plots"), "--quiet")
    assert out.exit_code == 0, out.output
    files = sorted(p.name for p in (tmp_path / "plots").iterdir())
    assert files == ["checkpoint_interval.png", "goodput_distribution.png",
                     "interruptions_by_component.png"]
    assert all((tmp_path / "plots" / f).read_bytes()[:4] == b"\x89PNG" for f in files)


@pytest.mark.parametrize("extra,where", [
    (["--rate", "gpu=-1"], "reliability.failures_per_unit_year.gpu"),
    (["--rate", "cdu=0.1"], "has no cdu"),
    (["--rate", "flux_capacitor=1"], "unknown component"),
    (["--spares", "33"], "larger than the cluster"),
    (["--days", "0"], "days"),
    (["--hot-standby", "1.5"], "hot_standby_share"),
    (["--checkpoint-mode", "maybe"], "checkpoint_mode"),
])
def test_bad_input_exits_2_with_the_reason(extra, where):
    out = _run(*extra)
    assert out.exit_code == 2, out.output
    assert "error:" in out.output and where in out.output
    assert "Traceback" not in out.output


def test_negative_rate_in_the_cluster_file_is_refused(tmp_path):
    import yaml

    from supernode.catalog import cluster_presets

    doc = yaml.safe_load(cluster_presets()["dgx-h100-superpod-su"].read_text())
    doc["reliability"] = {"failures_per_unit_year": {"gpu": -0.5}}
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(doc))
    out = CliRunner().invoke(app, ["reliability", "--cluster", str(path), "--workload",
                                   "llama3-70b", "--tp", "8", "--pp", "4"])
    assert out.exit_code == 2 and "reliability.failures_per_unit_year.gpu" in out.output


def test_local_pool_and_ray_give_identical_runs():
    pytest.importorskip("ray")
    spec = MonteCarloSpec(10 * DAY_S, (FailureClass("x", 5e-5, RESTART, restart_s=300,
                                                    hosts_out=1, repair_s=DAY_S),),
                          (1800.0, 3600.0), 5.0, spare_hosts=1, seed=11)
    inline = run_monte_carlo(spec, 30, workers=1)
    pool = run_monte_carlo(spec, 30, workers=2)
    ray = run_monte_carlo(spec, 30, workers=2, use_ray=True)
    assert np.array_equal(inline, pool) and np.array_equal(inline, ray)


def test_shrink_policy_isolates_a_host_and_keeps_the_job_running():
    d = json.loads(_run("--json", "--recovery", "shrink").stdout)
    gpu = next(m for m in d["blast_radius"] if m["component"] == "gpu")
    assert gpu["effect"] == "shrink"
    assert gpu["speed"] == pytest.approx(7 / 8, rel=0.05)  # one of 8 DP replicas dropped
    assert next(m for m in d["blast_radius"] if m["component"] == "software")["effect"] == \
        "interrupt"


def test_netsim_prices_the_fabric_degradations():
    d = json.loads(_run("--json", "--netsim", "--runs", "10").stdout)
    rows = [m for m in d["blast_radius"] if m["effect"] == "degrade"]
    assert rows and all("speed from the flow simulator" in m["notes"] for m in rows)
    assert all(0 < m["speed"] <= 1.0 + 1e-9 for m in rows)


def test_default_plan_comes_from_the_planner():
    """Without a plan the job runs the plan ``supernode plan`` ranks first, at its step
    time, and the first note says so."""
    target = ["--cluster", "dgx-h100-superpod-su", "--workload", "llama3-8b"]
    out = CliRunner().invoke(app, ["reliability", *target, "--runs", "10", "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    planned = CliRunner().invoke(app, ["plan", *target, "--top", "1", "--json"])
    assert planned.exit_code == 0, planned.output
    ranked = json.loads(planned.stdout)
    best, job = ranked["plans"][0], data["job"]
    for knob in ("tp", "pp", "dp", "cp", "ep", "vpp", "micro_batch", "recompute",
                 "zero_stage", "sequence_parallel"):
        assert job["plan"][knob] == best[knob], knob
    assert job["plan"]["global_batch_sequences"] == ranked["global_batch_sequences"]
    assert job["step_time_s"] == pytest.approx(best["step_time_s"], rel=1e-12)
    assert data["notes"][0].startswith("no plan given: the planner's best (tp="
                                       f"{best['tp']}, pp={best['pp']}, dp={best['dp']}")


def test_what_if_table_reads_in_human_units() -> None:
    """Knob values with thousands separators, not "1.8e+03"; a goodput change that rounds
    to zero says so instead of "+0.0000" or "-0.0000" (issue 24's cosmetics)."""
    from rich.console import Console

    from supernode.commands.reliability import _what_if_table

    rows = [{"knob": "checkpoint write GB/s", "current": 1800.0, "value": 3600.0,
             "analytic_goodput": 0.99, "monte_carlo_goodput": 0.994, "delta_vs_base": -2e-6},
            {"knob": "spare hosts", "current": 3, "value": 0, "analytic_goodput": 0.65,
             "monte_carlo_goodput": 0.63, "delta_vs_base": -0.3657}]
    console = Console(width=120, record=True)
    console.print(_what_if_table({"what_if": rows}))
    text = console.export_text()
    assert "1,800" in text and "3,600" in text and "e+03" not in text
    assert "no change" in text and "0.0000" not in text
    assert "-0.3657" in text

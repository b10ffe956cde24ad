"""``supernode simulate``: JSON keys, tables, plots, default plan, and bad input (exit 2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from supernode.commands import app, register_all

BASE = ["simulate", "--cluster", "dgx-h100-superpod-su", "--workload", "llama3-8b"]
PLAN = ["--tp", "8", "--pp", "2", "--global-batch", "64"]


def run(*args: str):
    register_all()
    return CliRunner().invoke(app, list(args))


def assert_bad_input(result, fragment: str) -> None:
    assert result.exit_code == 2, (result.exit_code, result.stdout, result.stderr)
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:"), result.stderr
    assert fragment in lines[0], lines[0]


def test_json_has_the_promised_keys(tmp_path: Path) -> None:
    result = run(*BASE, *PLAN, "--json", "--plot", str(tmp_path))
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    for key in ("step_time_s", "estimate_step_time_s", "hot_links", "link_utilization",
                "events", "wall_time_s", "collectives", "jobs", "plots"):
        assert key in data
    for tier, row in data["link_utilization"].items():
        assert {"mean", "p50", "p99", "max", "peak"} <= set(row), tier
    hot = data["hot_links"][0]
    assert {"link", "tier", "utilization", "flows"} <= set(hot) and hot["flows"]
    assert data["events"] > 0 and data["step_time_s"] > 0
    names = {Path(p).name for p in data["plots"]}
    assert names == {"timeline.png", "utilization.png"}
    for p in data["plots"]:
        assert Path(p).read_bytes()[:4] == b"\x89PNG"


def test_table_output_and_progress_only_as_lines_on_stderr() -> None:
    """Not a terminal: the tables on stdout, and on stderr nothing but progress lines
    (``simulate: done/total tasks``, commands/_progress.py), never a redrawn bar."""
    result = run(*BASE, *PLAN)
    assert result.exit_code == 0, result.stderr
    assert "simulated vs analytic estimate" in result.stdout
    assert "link utilisation per tier" in result.stdout
    assert all(line.startswith("simulate: ") and " tasks" in line
               for line in result.stderr.splitlines()), result.stderr
    assert "\r" not in result.stderr and "tasks" not in result.stdout


#: The knobs that make two plans the same plan.
KNOBS = ("tp", "pp", "dp", "cp", "ep", "vpp", "micro_batch", "recompute", "zero_stage",
         "sequence_parallel")


def test_without_a_plan_a_default_is_simulated_and_said() -> None:
    """The planner's best plan (what ``supernode plan`` ranks first) is simulated, and the
    notes say so, naming it."""
    result = run(*BASE, "--json")
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    (job,) = data["jobs"]
    planned = run("plan", *BASE[1:], "--top", "1", "--json")
    assert planned.exit_code == 0, planned.stderr
    ranked = json.loads(planned.stdout)
    best = ranked["plans"][0]
    assert job["plan"]["global_batch_sequences"] == ranked["global_batch_sequences"]
    assert {k: job["plan"][k] for k in KNOBS} == {k: best[k] for k in KNOBS}
    assert job["estimate_step_time_s"] == pytest.approx(best["step_time_s"], rel=1e-12)
    (note,) = [n for n in data["notes"] if "no plan given" in n]
    assert f"tp={best['tp']}, pp={best['pp']}, dp={best['dp']}" in note


def test_plan_file_and_traffic_file(tmp_path: Path) -> None:
    plan = tmp_path / "plan.yaml"
    plan.write_text("tp: 8\npp: 2\nglobal_batch_sequences: 64\n")
    assert run(*BASE, "--plan", str(plan), "--json").exit_code == 0
    traffic = tmp_path / "t.yaml"
    traffic.write_text("collectives:\n  - {name: a, op: all_reduce, message_bytes: 1.0e8, "
                       "accelerators: 0-15}\n  - {name: b, op: all_to_all, message_bytes: "
                       "1.0e8, accelerators: 0-255, group_size: 8, after: [a]}\n")
    result = run("simulate", "--cluster", "dgx-h100-superpod-su", "--traffic", str(traffic),
                 "--json")
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert set(data["collectives"]) == {"a", "b"} and data["estimate_step_time_s"] is None


@pytest.mark.parametrize(("extra", "fragment"), [
    (["--fail", "link:leaf/0-leaf/1"], "no such link"),
    (["--fail", "switch:spine/99"], "no node 'spine/99'"),
    (["--fail", "slow:link:leaf/0-spine/0:2"], "factor"),
    (["--routing", "telepathy"], "unknown routing policy"),
    (["--mode", "magic"], "mode"),
])
def test_bad_options_exit_2(extra: list[str], fragment: str) -> None:
    assert_bad_input(run(*BASE, *PLAN, *extra), fragment)


def test_plan_that_does_not_fit_exits_2() -> None:
    assert_bad_input(run(*BASE, "--tp", "8", "--pp", "2", "--dp", "4", "--global-batch", "64"),
                     "plan.dp")
    assert_bad_input(run(*BASE, "--tp", "16", "--global-batch", "64"), "plan.tp")
    # no --global-batch: the default of every command (4 Mi tokens), not an error
    assert run(*BASE, "--tp", "8", "--pp", "2").exit_code == 0


def test_placement_errors_exit_2(tmp_path: Path) -> None:
    off = tmp_path / "off.yaml"
    off.write_text("jobs:\n  - accelerators: 250-259\n    plan: {tp: 2, "
                   "global_batch_sequences: 8}\n")
    assert_bad_input(run(*BASE, "--placement", str(off)), "off the cluster")
    twice = tmp_path / "twice.yaml"
    twice.write_text("jobs:\n  - accelerators: 0-7\n  - accelerators: 4-11\n")
    assert_bad_input(run(*BASE, *PLAN, "--placement", str(twice)), "already used")
    bad = tmp_path / "bad.yaml"
    bad.write_text("jobs:\n  - accelerators: 0-7\n    gpus: 8\n")
    assert_bad_input(run(*BASE, "--placement", str(bad)), "unknown field")
    plan_mismatch = tmp_path / "mismatch.yaml"
    plan_mismatch.write_text("jobs:\n  - accelerators: 0-15\n    plan: {tp: 8, dp: 4, "
                             "global_batch_sequences: 8}\n")
    assert_bad_input(run(*BASE, "--placement", str(plan_mismatch)), "plan.dp")


def test_placement_with_two_jobs(tmp_path: Path) -> None:
    placement = tmp_path / "p.yaml"
    placement.write_text("jobs:\n  - {name: a, accelerators: 0-127, plan: {tp: 8, pp: 2, "
                         "global_batch_sequences: 32}}\n  - {name: b, accelerators: "
                         "128-255, workload: llama3-8b, plan: {tp: 8, "
                         "global_batch_sequences: 32}}\n")
    result = run(*BASE, "--placement", str(placement), "--json")
    assert result.exit_code == 0, result.stderr
    jobs = json.loads(result.stdout)["jobs"]
    assert [j["name"] for j in jobs] == ["a", "b"] and all(j["gpus"] == 128 for j in jobs)


def test_traffic_errors_exit_2(tmp_path: Path) -> None:
    traffic = tmp_path / "t.yaml"
    traffic.write_text("collectives:\n  - {name: a, op: all_reduce, message_bytes: 1.0e8, "
                       "accelerators: 0-300}\n")
    assert_bad_input(run("simulate", "--cluster", "dgx-h100-superpod-su", "--traffic",
                         str(traffic)), "off the cluster")
    traffic.write_text("collectives:\n  - {name: a, op: all_reduce, message_bytes: 1.0e8, "
                       "accelerators: 0-15, after: [z]}\n")
    assert_bad_input(run("simulate", "--cluster", "dgx-h100-superpod-su", "--traffic",
                         str(traffic)), "not an earlier collective")


@pytest.mark.parametrize(("extra", "option"), [
    (["--seed", "-1"], "--seed"),
    (["--seed", str(2**64)], "--seed"),
    (["--seed", str(2**63)], "--seed"),
    (["--top", "0"], "--top"),
    (["--top", "-1"], "--top"),
])
def test_out_of_range_options_exit_2(extra: list[str], option: str) -> None:
    result = run(*BASE, *PLAN, *extra)
    assert result.exit_code == 2, (result.exit_code, result.stdout, result.stderr)
    assert option in result.stderr and "Traceback" not in result.output + result.stderr
    assert result.stdout == ""


def test_largest_seed_runs() -> None:
    """2**63 - 1, the largest seed accepted (2**63 is refused above), reaches the simulation
    as given, and the run it seeds is repeatable."""
    seed = 2**63 - 1
    first = run(*BASE, *PLAN, "--seed", str(seed), "--json")
    assert first.exit_code == 0, first.stderr
    again = run(*BASE, *PLAN, "--seed", str(seed), "--json")
    a, b = json.loads(first.stdout), json.loads(again.stdout)
    assert a["options"]["seed"] == seed
    assert a["events"] > 0
    for data in (a, b):
        data.pop("wall_time_s")
    assert a == b


def test_sim_options_refuse_bad_seed_and_top() -> None:
    from supernode.errors import InputError
    from supernode.netsim.scenario import SimOptions

    for bad in ({"seed": -1}, {"seed": 2**64}, {"top": 0}):
        with pytest.raises(InputError):
            SimOptions(**bad)


@pytest.mark.parametrize("name", ["a-file", "a-file/below"])
def test_plot_path_that_is_not_a_folder_exits_2_before_the_run(tmp_path: Path,
                                                                name: str) -> None:
    (tmp_path / "a-file").write_text("keep me\n", encoding="utf-8")
    assert_bad_input(run(*BASE, *PLAN, "--plot", str(tmp_path / name)), "--plot")
    assert (tmp_path / "a-file").read_text(encoding="utf-8") == "keep me\n"


def test_plot_write_failure_is_an_input_error(tmp_path: Path, monkeypatch) -> None:
    from supernode import outputs
    from supernode.errors import InputError
    from supernode.netsim import plot_files

    class Tables:
        extra = {"heatmap": {"leaf": {"utilization": [[0.5, 0.9]], "edges_s": [0, 1, 2]}}}
        timeline = []

    def broken(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(outputs.os, "rename", broken)
    with pytest.raises(InputError, match="--plot.*No space left"):
        plot_files.write_plots(Tables(), tmp_path / "p")
    assert list(tmp_path.iterdir()) == []  # all or nothing: no folder, no staging left

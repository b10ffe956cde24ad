"""``supernode sweep``: spec validation, local pool vs Ray (identical tables), examples."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from supernode.commands import app, register_all
from supernode.planner.sweep_run import make_tasks, run_tasks
from supernode.planner.sweep_spec import load_sweep_spec

EXAMPLES = sorted((Path(__file__).parent.parent / "examples" / "sweeps").glob("*.yaml"))

SMALL = {
    "name": "small",
    "base": {"cluster": "dgx-h100-superpod-su", "workload": "llama3-8b", "gpus": 64,
             "global_batch": 64},
    "mode": "product",
    "axes": {"cluster.host.nics.speed_gbit_per_s": [200, 400],
             "scale_up.size": [8, 16]},  # a bare path is a cluster path
}


def run(*args: str):
    register_all()
    return CliRunner().invoke(app, list(args))


def write(tmp_path: Path, data: dict) -> Path:
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


@pytest.mark.parametrize("mutate, path", [
    (lambda d: d.update(extra=1), "extra"),
    (lambda d: d["base"].update(objectve="time"), "base.objectve"),
    (lambda d: d["base"].update(gpus=0), "base.gpus"),
    (lambda d: d["axes"].update({"scale_upp.size": [8]}), "did you mean 'scale_up'"),
    (lambda d: d["axes"].update({"plan.speed": [1]}), "axes['plan.speed']"),
    (lambda d: d["axes"].update({"workload.layers": []}), "axes['workload.layers']"),
    (lambda d: d.update(mode="list"), "mode 'list' needs variants"),
    (lambda d: d.update(name="bad name"), "name"),
])
def test_bad_spec_exits_2_with_field_path(tmp_path, mutate, path):
    data = json.loads(json.dumps(SMALL))
    mutate(data)
    out = run("sweep", str(write(tmp_path, data)), "--out", str(tmp_path / "o"), "--quiet")
    assert out.exit_code == 2, out.output
    assert path in out.stderr and "Traceback" not in out.stderr


@pytest.mark.parametrize("axes, fragment", [
    ({"cluster.nonexistent.field": [1, 2]}, "axes['cluster.nonexistent.field']"),
    ({"cluster.host.nics.speed_gbit_per_sec": [200, 400]}, "did you mean 'speed_gbit_per_s'"),
    ({"scale_up.sizee": [8]}, "axes['scale_up.sizee']"),
    ({"host.accelerator.memory_gbyte": [80]}, "nothing to set inside it"),  # a catalog name
    ({"workload.layerz": [32]}, "did you mean 'layers'"),
])
def test_axis_path_that_names_no_field_is_refused_at_load(tmp_path, axes, fragment):
    """A typo in an axis path would make every variant an error row: refused at load."""
    data = json.loads(json.dumps(SMALL))
    data["axes"] = axes
    out = run("sweep", str(write(tmp_path, data)), "--out", str(tmp_path / "o"), "--quiet")
    assert out.exit_code == 2, out.output
    assert fragment in out.stderr and "Traceback" not in out.output + out.stderr
    assert not (tmp_path / "o").exists()


def test_variant_path_that_names_no_field_is_refused_at_load(tmp_path):
    data = json.loads(json.dumps(SMALL))
    del data["axes"]
    data.update(mode="list", variants=[{"workload.layers": 16}, {"host.nicz.count": 4}])
    out = run("sweep", str(write(tmp_path, data)), "--out", str(tmp_path / "o"), "--quiet")
    assert out.exit_code == 2, out.output
    assert "variants[1]['cluster.host.nicz.count']" not in out.stderr
    assert "variants[1]['host.nicz.count']" in out.stderr and "nicz" in out.stderr


@pytest.mark.parametrize("name", ["a-file", "a-file/below"])
def test_out_that_is_not_a_folder_is_refused_before_the_run(tmp_path, name):
    (tmp_path / "a-file").write_text("keep me\n", encoding="utf-8")
    out = run("sweep", str(write(tmp_path, SMALL)), "--out", str(tmp_path / name), "--quiet",
              "--workers", "1")
    assert out.exit_code == 2, out.output
    assert "--out" in out.stderr and "Traceback" not in out.output + out.stderr
    assert (tmp_path / "a-file").read_text(encoding="utf-8") == "keep me\n"


def test_write_failure_is_an_input_error_and_leaves_no_partial_file(tmp_path, monkeypatch):
    from supernode.errors import InputError
    from supernode.planner import sweep_output

    def broken(self, *args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Path, "write_text", broken)
    with pytest.raises(InputError, match="--out.*No space left"):
        sweep_output.write_tables([{"variant": 0, "status": "ok"}], [], {}, tmp_path / "o")
    assert list(tmp_path.iterdir()) == []  # all or nothing: results.csv is not left


def test_base_global_batch_is_bounded(tmp_path):
    data = json.loads(json.dumps(SMALL))
    data["base"]["global_batch"] = 99999999999999999999999
    out = run("sweep", str(write(tmp_path, data)), "--out", str(tmp_path / "o"), "--quiet")
    assert out.exit_code == 2, out.output
    assert "base.global_batch" in out.stderr and "Traceback" not in out.output + out.stderr


def test_bad_variant_is_a_row_not_a_crash(tmp_path):
    data = json.loads(json.dumps(SMALL))
    data["axes"] = {"cluster.host.nics.speed_gbit_per_s": ["fast", 400]}
    out = run("sweep", str(write(tmp_path, data)), "--out", str(tmp_path / "o"), "--quiet",
              "--workers", "1", "--json")
    assert out.exit_code == 0, out.output
    rows = json.loads(out.stdout)["rows"]
    assert rows[0]["status"] == "error"
    assert "cluster.host.nics.speed_gbit_per_s" in rows[0]["error"]
    assert rows[1]["status"] == "ok"


def test_local_pool_writes_tables_and_plots(tmp_path):
    out = run("sweep", str(write(tmp_path, SMALL)), "--out", str(tmp_path / "o"), "--quiet",
              "--workers", "2")
    assert out.exit_code == 0, out.output
    folder = tmp_path / "o"
    with (folder / "results.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 4 and all(r["status"] == "ok" for r in rows)
    assert {r["scale_up_size"] for r in rows} == {"8", "16"}
    doc = json.loads((folder / "results.json").read_text())
    assert doc["meta"]["variants"] == 4 and len(doc["rows"]) == 4
    assert "cluster.scale_up.size" in doc["meta"]["keys"]
    for key in ("cluster_host_nics_speed_gbit_per_s", "cluster_scale_up_size"):
        assert (folder / f"plot_{key}.png").stat().st_size > 1000


def test_ray_and_local_pool_give_identical_tables(tmp_path):
    """Ray is an optional extra; CI installs it, so this runs there."""
    pytest.importorskip("ray")
    spec, variants = load_sweep_spec(write(tmp_path, SMALL))
    tasks = make_tasks(spec, variants)
    local = run_tasks(tasks, workers=2)
    on_ray = run_tasks(tasks, workers=2, use_ray=True)
    assert on_ray == local
    assert [r["variant"] for r in local] == [0, 1, 2, 3]


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_examples_run(path):
    """Examples are tests: every variant of every example sweep plans successfully."""
    spec, variants = load_sweep_spec(path)
    rows = run_tasks(make_tasks(spec, variants), workers=1)
    assert rows and all(r["status"] == "ok" for r in rows), [r.get("error") for r in rows]
    assert all(r["fits_in_memory"] for r in rows)


def test_spec_fields_are_documented():
    """One schema, many readers: every SPEC field appears in docs/planner.md."""
    from supernode.planner.sweep_spec import PLAN_SETTINGS, SweepBase, SweepSpec

    doc = (Path(__file__).parent.parent / "docs" / "planner.md").read_text(encoding="utf-8")
    for name in SweepSpec.model_fields:
        assert f"`{name}`" in doc, name
    for name in SweepBase.model_fields:
        assert f"`base.{name}`" in doc, name
    for name in PLAN_SETTINGS:
        assert name in doc, name

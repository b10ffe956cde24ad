"""A cluster file as a sweep axis: two candidate designs compare in one sweep."""

from __future__ import annotations

import pytest

from supernode.errors import InputError
from supernode.planner.sweep_run import make_tasks, run_variant
from supernode.planner.sweep_spec import load_sweep_spec


def _spec(tmp_path, clusters: str) -> object:
    path = tmp_path / "s.yaml"
    path.write_text(f"name: d\nbase: {{cluster: hgx-h100, workload: llama3-8b}}\n"
                    f"axes:\n  cluster: {clusters}\n")
    return path


def test_each_variant_plans_its_own_cluster(tmp_path):
    (tmp_path / "mine.yaml").write_text(
        "name: mine\nhost: {accelerator: h200-sxm-141gb, accelerators_per_host: 8}\n"
        "scale_up: {kind: nvswitch, size: 8, switch: nvswitch-gen3, switch_chips: 4}\n")
    spec, variants = load_sweep_spec(_spec(tmp_path, "[hgx-h100, mine.yaml]"))
    assert [v["cluster"] for v in variants] == ["hgx-h100", str(tmp_path / "mine.yaml")]
    rows = [run_variant(t) for t in make_tasks(spec, variants)]
    assert [r["status"] for r in rows] == ["ok", "ok"]
    # same job, faster memory and larger HBM on the H200 design: not slower
    assert rows[1]["step_time_s"] <= rows[0]["step_time_s"]


def test_a_missing_cluster_is_refused_at_load(tmp_path):
    with pytest.raises(InputError) as err:
        load_sweep_spec(_spec(tmp_path, "[hgx-h100, nope.yaml]"))
    assert err.value.path == "axes['cluster']"

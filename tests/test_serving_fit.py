"""Serving fit (issue 27 item 5): ``fit --serve`` and ``design --serve`` answer the seed's
question for serving — what a larger scale-up domain buys in tokens/s per GPU under the
targets, against 8-GPU servers of the same chips — with the serving model itself."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_cli_errors import assert_bad_input
from typer.testing import CliRunner

from supernode.cluster.load import load_cluster_spec
from supernode.commands import app, register_all
from supernode.design.serving_fit import serving_fit
from supernode.estimate.system import job_system
from supernode.planner.variants import with_domain_size
from supernode.serve.calibration import default_serve_constants
from supernode.serve.deploy import Deployments
from supernode.serve.plan import ServeRequest, plan_serving
from supernode.serve.request import build_request, serve_spec
from supernode.serve.step import decode_comm_s, decode_step_s

SERVE = Path(__file__).parent / "data" / "serve" / "llama70b-chat.yaml"
CLUSTER = "gb200-nvl72-superpod"


@pytest.fixture(scope="module")
def request_72():
    spec = serve_spec(str(SERVE), {"model": "llama3-70b", "gpus": 72})
    return build_request(spec, CLUSTER, 1, True)


@pytest.fixture(scope="module")
def fitted(request_72):
    return serving_fit(request_72, load_cluster_spec(CLUSTER), (8, 72))


def test_each_row_is_the_serve_search_on_that_domain_size(request_72, fitted):
    """Differential: a row's figures are those `serve` finds on the resized cluster."""
    for row in fitted["sizes"]:
        sized = with_domain_size(load_cluster_spec(CLUSTER), row["scale_up_size"], 72)
        system = job_system(sized, 72, add_tiers=True)
        one = ServeRequest(request_72.workload, system, request_72.precision,
                           request_72.traffic, 1, True, row["price_per_gpu_hour_usd"])
        plan = plan_serving(one)
        best = plan["disaggregated"] if plan["mode"] == "disaggregated" else \
            plan["aggregated"]["best"]
        assert row["mode"] == plan["mode"]
        assert row["output_tokens_per_s_per_gpu"] == best["output_tokens_per_s_per_gpu"]
        assert row["tpot_ms"] == best["tpot_ms"] <= 40.0 + 1e-9
    base, big = fitted["sizes"]
    assert (base["scale_up_size"], big["scale_up_size"]) == (8, 72)
    assert big["speedup_vs_8"] == pytest.approx(big["output_tokens_per_s_per_gpu"]
                                                / base["output_tokens_per_s_per_gpu"])
    assert big["price_per_gpu_hour_usd"] == pytest.approx(
        base["price_per_gpu_hour_usd"] * (1 + fitted["supernode_premium"]))
    q = fitted["questions"]
    assert q["communication_bound"]["decode_comm_share_on_8_gpu_servers"] == \
        base["decode_comm_share"]
    assert q["communication_bound"]["communication_bound"] == (base["decode_comm_share"] > 0.2)


@settings(max_examples=25, deadline=None)
@given(tp=st.sampled_from([1, 2, 4, 8]), pp=st.sampled_from([1, 2]),
       batch=st.integers(1, 512))
def test_decode_comm_is_a_part_of_the_decode_step(request_72, tp, pp, batch):
    """Exposed decode communication is a non-negative part of the decode step, and none
    without tensor parallelism (a dense model: no expert exchange)."""
    w, system = request_72.workload, request_72.system
    c, p = default_serve_constants(), request_72.precision
    d = Deployments.of(tp=tp, pp=pp, dp=1, ep=1, batch=batch)
    comm = float(np.asarray(decode_comm_s(w, d, system, c, p)).reshape(-1)[0])
    step = float(np.asarray(decode_step_s(w, d, system, c, p, 2250.0)).reshape(-1)[0])
    assert 0.0 <= comm < step
    if tp == 1:
        assert comm == 0.0


def test_fit_serve_cli_table_json_and_bad_file(tmp_path, fitted):
    register_all()
    runner = CliRunner()
    args = ["fit", "--workload", "llama3-70b", "--cluster", CLUSTER, "--gpus", "72",
            "--sizes", "8,72", "--serve", str(SERVE)]
    table = runner.invoke(app, args)
    assert table.exit_code == 0, table.output
    assert "serving llama3-70b on 72 x gb200" in table.stdout and "verdict: " in table.stdout
    as_json = runner.invoke(app, [*args, "--json"])
    assert json.loads(as_json.stdout) == json.loads(json.dumps(fitted))
    bad = tmp_path / "bad.yaml"
    bad.write_text("serve:\n  input_tokens: -5\n")
    assert_bad_input(runner.invoke(app, [*args[:-1], str(bad)]), "input_tokens")


def test_a_domain_that_cannot_be_resized_is_a_row_saying_why():
    """A full-mesh (or torus) scale-up cannot become 8-GPU switched domains: the row says
    so and the cluster's own domains are served as they are."""
    from supernode.design import example

    flawed = example("flawed")
    spec = serve_spec(str(SERVE), {"model": "llama3-70b", "gpus": 8})
    out = serving_fit(build_request(spec, str(flawed.cluster), 1, True),
                      load_cluster_spec(flawed.cluster), (8, 4))
    rows = {r["scale_up_size"]: r for r in out["sizes"]}
    assert not rows[8]["feasible"] and rows[8]["reason"].startswith("not buildable")
    assert rows[4]["feasible"] and out["questions"]["verdict"].startswith("no 8-GPU baseline")

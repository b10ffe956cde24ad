"""The ``inference`` kind of ``supernode validate`` on the packaged public serving cases,
and the committed serving constants against the data they were fitted on."""

from __future__ import annotations

import copy
import importlib
import json
import re
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from supernode.commands import app
from supernode.serve.calibration import default_serve_constants, read_serve_calibration_document
from supernode.serve.datasets import dataset_lengths
from supernode.serve.fit import ROBUST_SCALE, fitted_names, inference_cases_path, log_errors
from supernode.spec.casefile import read_cases
from supernode.validation.harness import run_case, summarize_metrics, validate_file

PUBLIC = inference_cases_path()


@pytest.fixture(scope="module")
def results():
    return validate_file(PUBLIC)


def test_every_case_is_predicted_or_says_why(results):
    cases, summary = results
    assert len(cases) == len(read_cases(PUBLIC, kind="inference")) > 0
    for r in cases:
        assert r.kind == "inference"
        if r.status == "ok":
            assert r.detail.startswith("chose tp=") and r.predicted > 0
        else:  # the format's rule: a dataset without published lengths
            assert r.detail.startswith("unsupported: workload lengths not given"), r.detail
    unsupported = {r.id for r in cases if r.status != "ok"}
    expected = {c["id"] for c in read_cases(PUBLIC, kind="inference")
                if c["serving"].get("input_tokens") is None
                and dataset_lengths(c["serving"].get("dataset")) is None}
    assert unsupported == expected
    assert summary["inference"]["n"] == len(cases) - len(unsupported)


def test_primary_metric_error_is_within_the_reached_bound(results):
    cases, summary = results
    # reached: 9.7 % over all 18, 17 within 20 % (issue 27's line is 15 %; the Mixtral
    # MLPerf run is +22.6 %, docs/serving.md)
    assert summary["inference"]["mape"] <= 0.15
    ok = [r for r in cases if r.status == "ok"]
    within = [r for r in ok if abs(r.error_frac) <= 0.20]
    assert len(within) >= 16, [(r.id, r.error_frac) for r in ok]


def test_per_gpu_and_system_figures_are_one_measurement(results):
    cases, _ = results
    by_metric = summarize_metrics(cases)["inference"]
    assert "output_tokens_per_s" not in by_metric
    assert by_metric["output_tokens_per_s_per_gpu"]["n"] >= 10
    for r in cases:
        names = [s["metric"] for s in r.secondary or ()]
        assert r.metric not in names and len(names) == len(set(names))


def test_ttft_and_tpot_are_compared_where_published():
    case = copy.deepcopy(next(c for c in read_cases(PUBLIC, kind="inference")
                              if c["id"].startswith("trtllm10_llama31_8b_h100")))
    case["measured"] = {"output_tokens_per_s_per_gpu": 15220.0, "ttft_ms": 500.0,
                        "tpot_ms": 30.0, "latency_statistic": "mean"}
    r = run_case(case)
    names = {s["metric"]: s for s in r.secondary}
    assert set(names) == {"ttft_ms", "tpot_ms"}
    assert all(s["predicted"] > 0 and s["error_frac"] is not None for s in names.values())
    case["serving"]["concurrency"] = 16
    slower = {s["metric"]: s for s in run_case(case).secondary}
    assert slower["tpot_ms"]["predicted"] < names["tpot_ms"]["predicted"]


def test_nulls_are_chosen_and_stated_values_held():
    case = copy.deepcopy(next(c for c in read_cases(PUBLIC, kind="inference")
                              if c["serving"]["ep"] is None and c["model"]["moe"]))
    r = run_case(case)
    assert r.status == "ok" and f"tp={case['serving']['tp']} " in r.detail
    case["serving"]["precision"] = "fp4"  # an H200 has no FP4 units: refused, not changed
    assert run_case(case).status == "unsupported"


def test_validate_json_reports_inference_by_metric(tmp_path):
    importlib.import_module("supernode.commands.validate")  # registers the command
    doc = json.loads(Path(PUBLIC).read_text())
    ids = ("trtllm_llama33_70b_h200_tp2_fp8_1024x1024", "mlperf41_amd_8xmi300x_llama2_70b_server")
    two = [copy.deepcopy(c) for c in doc["cases"] if c["id"] in ids]
    two[1]["serving"]["dataset"] = "unpublished-trace"  # no length table: unsupported
    path = tmp_path / "two.json"
    path.write_text(json.dumps({"schema": doc["schema"], "cases": two}))
    result = CliRunner().invoke(app, ["validate", str(path), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert set(data) == {"cases", "summary", "summary_by_metric"}
    keys = {"id", "kind", "metric", "measured", "predicted", "error_frac", "status", "detail",
            "secondary"}
    assert all(set(c) == keys for c in data["cases"])
    assert [c["status"] for c in data["cases"]] == ["ok", "unsupported"]
    text = CliRunner().invoke(app, ["validate", str(path)], terminal_width=200).stdout
    assert "MAPE per metric" in text and "unsupported" in text


def test_committed_constants_are_the_robust_optimum_and_off_their_bounds():
    """The committed fitted values minimise the fit's loss on the public cases: a step of
    3 % either way on any of them does not lower it (a full refit: python -m
    supernode.serve.fit)."""
    from supernode.serve.fit import supported_cases

    cases = supported_cases()
    names, lower, upper = fitted_names()
    base = default_serve_constants()

    def loss(c):
        z = log_errors(c, cases) ** 2 / ROBUST_SCALE ** 2
        return float(np.sum(2.0 * (np.sqrt(1.0 + z) - 1.0)))

    at = loss(base)
    for name, lo, hi in zip(names, lower, upper, strict=True):
        value = getattr(base, name)
        assert lo < value < hi, name
        for factor in (0.97, 1.03):
            assert loss(base.replace(**{name: value * factor})) >= at * (1 - 1e-3), name
    doc = read_serve_calibration_document()["constants"]
    assert all(entry.get("note") for entry in doc.values())


def test_an_inference_file_of_other_cases_is_read(tmp_path):
    doc = json.loads(Path(PUBLIC).read_text())
    case = copy.deepcopy(doc["cases"][0])
    case["id"] = "other"
    case["serving"]["input_tokens"], case["serving"]["output_tokens"] = 4000, 200
    bad = copy.deepcopy(case)
    bad["id"], bad["serving"]["phase"] = "bad", "sideways"
    path = tmp_path / "cases.json"
    path.write_text(json.dumps({"schema": doc["schema"], "cases": [case, bad]}))
    results, _ = validate_file(path)
    assert [r.status for r in results] == ["ok", "unsupported"]
    assert "serving.phase" in results[1].detail


def test_a_published_batch_is_the_engines_maximum_not_an_exact_batch():
    """``serving.batch_size`` is the engine's max batch (TensorRT-LLM ``max_batch_size``):
    offline, a case whose KV cache holds fewer sequences than that runs the KV limit, as
    it does under a stated concurrency; it never runs more than the published batch."""
    case = next(c for c in read_cases(PUBLIC, kind="inference")
                if (c.get("serving") or {}).get("batch_size"))
    for concurrency in (None, case["serving"].get("concurrency")):
        for batch in (case["serving"]["batch_size"], 100_000):
            trial = copy.deepcopy(case)
            trial["serving"].update(concurrency=concurrency, batch_size=batch)
            result = run_case(trial)
            assert result.status == "ok", result.detail
            chosen = int(re.search(r"batch=(\d+)", result.detail).group(1))
            limit = int(re.search(r"KV limit (\d{1,3}(?:,\d{3})*)", result.detail)
                        .group(1).replace(",", ""))
            assert chosen <= batch and chosen <= max(limit, 1)
            assert chosen == min(batch, limit) or concurrency

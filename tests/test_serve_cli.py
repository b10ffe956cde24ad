"""``supernode serve``: output shape, the serve file and traces, and bad input."""

from __future__ import annotations

import importlib
import json

import pytest
from typer.testing import CliRunner

from supernode.commands import app

BASE = ["serve", "--cluster", "hgx-h100", "--model", "llama3-70b", "--isl", "1000",
        "--osl", "200", "--precision", "fp8"]


@pytest.fixture(scope="module")
def runner():
    importlib.import_module("supernode.commands.serve")  # registers the command
    return CliRunner()


def _json(runner, args):
    result = runner.invoke(app, args + ["--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_json_ranks_by_tokens_per_gpu_and_explains_the_runners_up(runner):
    r = _json(runner, BASE + ["--tpot-ms", "40", "--top", "4"])
    best, rest = r["aggregated"]["best"], r["aggregated"]["runners_up"]
    assert best["tpot_ms"] <= 40 and len(rest) == 3
    rates = [best["output_tokens_per_s_per_gpu"]] + [x["output_tokens_per_s_per_gpu"]
                                                      for x in rest]
    assert rates == sorted(rates, reverse=True)
    assert all("fewer tokens/s per GPU" in x["why"] or "as many tokens/s per GPU" in x["why"]
               for x in rest)
    front = r["pareto"]
    users = [p["tokens_per_s_per_user"] for p in front]
    gpus = [p["output_tokens_per_s_per_gpu"] for p in front]
    assert users == sorted(users) and gpus == sorted(gpus, reverse=True)
    assert r["precision"] == {"math": "fp8", "other_gemms": "fp8", "weights": "fp8",
                              "kv_cache": "fp8"}
    assert r["mode"] in ("aggregated", "disaggregated")


def test_text_output_and_plot(runner, tmp_path):
    png = tmp_path / "frontier.png"
    result = runner.invoke(app, BASE + ["--plot", str(png)], terminal_width=200)
    assert result.exit_code == 0, result.output
    assert "Pareto frontier" in result.stdout and "mode:" in result.stdout
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_serve_file_and_trace_give_the_flags_answer(runner, tmp_path):
    trace = tmp_path / "lengths.csv"
    trace.write_text("input_tokens,output_tokens\n800,100\n1200,300\n")
    block = tmp_path / "serve.yaml"
    block.write_text(f"serve:\n  model: llama3-70b\n  trace_file: {trace}\n  precision: fp8\n")
    from_file = _json(runner, ["serve", "--cluster", "hgx-h100", "--serve", str(block)])
    from_flags = _json(runner, BASE)
    assert from_file["traffic"]["input_tokens"] == 1000.0
    assert from_file["aggregated"] == from_flags["aggregated"]


def test_concurrency_bounds_the_batch(runner):
    r = _json(runner, BASE + ["--concurrency", "16", "--top", "1"])
    best = r["aggregated"]["best"]
    assert best["batch_per_dp_rank"] * best["instances"] * best["dp"] <= 16


@pytest.mark.parametrize("extra,field", [
    (["--precision", "fp9"], "precision"),
    (["--concurrency", "8", "--rate", "2"], "request_rate_per_s"),
    (["--precision", "fp4"], "precision"),
    (["--ttft-ms", "-1"], "ttft_ms"),
])
def test_bad_input_is_one_error_line_naming_the_field(runner, extra, field):
    result = runner.invoke(app, BASE + extra)
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:") and field in lines[0], lines
    assert "Traceback" not in result.output


def test_missing_lengths_and_bad_trace_rows_are_named(runner, tmp_path):
    result = runner.invoke(app, ["serve", "--cluster", "hgx-h100", "--model", "llama3-8b"])
    assert result.exit_code == 2 and "input_tokens" in result.output
    trace = tmp_path / "t.csv"
    trace.write_text("input_tokens,output_tokens\n100,x\n")
    result = runner.invoke(app, ["serve", "--cluster", "hgx-h100", "--model", "llama3-8b",
                                 "--trace", str(trace)])
    assert result.exit_code == 2 and "trace_file[row 2].output_tokens" in result.output


def test_a_model_that_fits_nowhere_is_a_result_not_an_error(runner):
    r = _json(runner, ["serve", "--cluster", "hgx-h100", "--model", "deepseek-v3", "--isl",
                       "1000", "--osl", "100", "--gpus", "1"])
    assert r["mode"] == "none" and r["aggregated"]["best"] is None
    assert "no layout fits" in r["mode_reason"]


def test_a_request_rate_is_served_at_the_fastest_per_user_deployment(runner):
    r = _json(runner, BASE + ["--rate", "5", "--top", "3"])
    best = r["aggregated"]["best"]
    assert best["output_tokens_per_s_per_gpu"] == pytest.approx(5 * 200 / 8)
    for other in r["aggregated"]["runners_up"]:
        assert other["output_tokens_per_s_per_gpu"] <= best["output_tokens_per_s_per_gpu"]
        if other["output_tokens_per_s_per_gpu"] == best["output_tokens_per_s_per_gpu"]:
            assert other["tokens_per_s_per_user"] <= best["tokens_per_s_per_user"]


def test_price_per_million_tokens_follows_the_price_per_gpu_hour(runner):
    listed = _json(runner, BASE + ["--top", "1"])
    given = _json(runner, BASE + ["--top", "1", "--price-per-gpu-hour", "1.5"])
    best, cheap = listed["aggregated"]["best"], given["aggregated"]["best"]
    assert given["price"] == {"usd_per_gpu_hour": 1.5, "listed": False,
                              "source": "--price-per-gpu-hour"}
    per_hour = cheap["output_tokens_per_s_per_gpu"] * 3600 / 1e6
    assert cheap["usd_per_million_output_tokens"] == pytest.approx(1.5 / per_hour)
    ratio = listed["price"]["usd_per_gpu_hour"] / 1.5
    assert best["usd_per_million_output_tokens"] == pytest.approx(
        ratio * cheap["usd_per_million_output_tokens"])

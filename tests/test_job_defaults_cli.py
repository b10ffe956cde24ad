"""One default global batch (4 Mi tokens, ``workload/batch.py``) and one job size
(``--gpus``) on every command that takes a workload and explicit plan flags."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from supernode.commands import app, register_all
from supernode.workload.batch import DEFAULT_TOKENS_PER_STEP, with_default_batch
from supernode.workload.presets import load_workload


def run(*args: str):
    register_all()
    return CliRunner().invoke(app, list(args))


def test_explicit_plan_flags_take_the_default_batch_on_estimate_and_simulate():
    """``estimate`` and ``simulate`` with ``--tp`` and no ``--global-batch`` take 4 Mi
    tokens (512 sequences of Llama 3 8B's 8,192), as plan and design do."""
    w = load_workload("llama3-8b")
    expected = DEFAULT_TOKENS_PER_STEP // w.seq_len
    est = run("estimate", "--cluster", "hgx-h100", "--workload", "llama3-8b", "--tp", "8",
              "--json")
    assert est.exit_code == 0, est.output
    assert json.loads(est.output)["plan"]["global_batch_sequences"] == expected == 512
    sim = run("simulate", "--cluster", "hgx-h100", "--workload", "llama3-8b", "--tp", "4",
              "--dp", "2", "--json")
    assert sim.exit_code == 0, sim.output
    assert "global_batch_sequences" in sim.output


def test_default_batch_is_a_legal_multiple_and_a_given_one_is_kept():
    w = load_workload("llama3-8b")
    data = with_default_batch({"tp": 8, "pp": 2, "dp": 12, "micro_batch": 2}, w)
    assert data["global_batch_sequences"] % 24 == 0
    assert data["global_batch_sequences"] >= DEFAULT_TOKENS_PER_STEP // w.seq_len
    assert with_default_batch({"dp": 4, "global_batch_sequences": 8}, w)[
        "global_batch_sequences"] == 8


def test_reliability_takes_gpus_without_a_cluster_file():
    """16,384 H100s (Llama 3 405B's job) from the SuperPOD SU preset: the cluster grows by
    whole units, and the job is that size (Dubey et al. 2024 report 419 interruptions in 54
    days, 7.8 a day: the model's figure is of that order)."""
    out = run("reliability", "--cluster", "dgx-h100-superpod-su", "--workload",
              "llama3-405b", "--gpus", "16384", "--runs", "10", "--json")
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert data["job"]["gpus"] == 16384
    assert 3 < data["interruptions"]["interruptions_per_day"] < 15

"""Step-time model: invariants, differential vectorised-vs-scalar, bad input, CLI."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from supernode.cluster.load import load_cluster
from supernode.commands import app, register_all
from supernode.estimate.calibration import default_calibration
from supernode.estimate.model import estimate_plan
from supernode.estimate.step import BREAKDOWN_KEYS, step_arrays
from supernode.estimate.system import system_from_cluster
from supernode.spec.plan import ParallelPlan, PlanArrays
from supernode.workload import load_workload, model_flops_per_step
from supernode.workload.flops import EXECUTED

CLUSTER = "dgx-h100-superpod-su"


@pytest.fixture(scope="module")
def system():
    return system_from_cluster(load_cluster(CLUSTER))


@pytest.fixture(scope="module")
def llama70b():
    return load_workload("llama3-70b")


def _plan(**kw):
    base = dict(tp=8, pp=4, dp=8, global_batch_sequences=256, distributed_optimizer=True)
    base.update(kw)
    return ParallelPlan(**base)


def test_breakdown_adds_up_and_mfu_definition(system, llama70b):
    result = estimate_plan(llama70b, _plan(), system)
    assert sum(result.breakdown_s.values()) == pytest.approx(result.step_time_s, rel=1e-12)
    # MFU on executed FLOPs (the causal half of the attention square): never above 1
    flops = float(model_flops_per_step(llama70b, 256, causal_attention_factor=EXECUTED))
    expected = flops / (result.step_time_s * system.gpus * system.peak_flops)
    assert result.mfu == pytest.approx(expected, rel=1e-12)
    assert result.hfu >= result.mfu
    assert result.tokens_per_s == pytest.approx(256 * llama70b.seq_len / result.step_time_s)


def test_tp_across_domains_is_slower(system):
    gpt3 = load_workload("gpt3-175b")
    inside = estimate_plan(gpt3, _plan(tp=8, pp=4, dp=8, recompute="full"), system)
    across = estimate_plan(gpt3, _plan(tp=16, pp=2, dp=8, recompute="full"), system)
    assert across.breakdown_s["tp_comm"] > 1.5 * inside.breakdown_s["tp_comm"]
    assert across.step_time_s > inside.step_time_s


def test_out_of_memory_is_a_result_not_an_error(system):
    big = load_workload("llama3-405b")
    result = estimate_plan(big, _plan(tp=8, pp=1, dp=32, recompute="none",
                                      micro_batch=1, distributed_optimizer=False), system)
    assert not result.fits_in_memory
    assert result.memory_per_gpu_bytes["total"] > system.usable_memory_bytes
    assert result.notes and "does not fit" in result.notes[0]


def test_chosen_knobs_fit_when_possible(system, llama70b):
    result = estimate_plan(llama70b, _plan(), system)
    assert result.fits_in_memory
    assert result.memory_per_gpu_bytes["total"] <= system.usable_memory_bytes
    assert set(result.chosen) == {"micro_batch", "recompute", "sequence_parallel", "vpp",
                                  "zero_stage", "pp_layout"}


@settings(max_examples=25, deadline=None)
@given(tp=st.sampled_from([1, 2, 4, 8]), pp=st.sampled_from([1, 2, 4]),
       mb=st.sampled_from([1, 2]), rec=st.sampled_from([0, 1, 2]))
def test_vectorised_equals_scalar(system, llama70b, tp, pp, mb, rec):
    """Differential: a batch of plans evaluated at once equals each plan alone."""
    dp = 256 // (tp * pp)
    cal = default_calibration()
    grid = PlanArrays.from_columns(tp=np.array([tp, 8]), pp=np.array([pp, 4]),
                                   dp=np.array([dp, 8]), micro_batch=mb, recompute=rec,
                                   global_batch_sequences=512, sequence_parallel=True,
                                   distributed_optimizer=True)
    many = step_arrays(llama70b, grid, system, cal)
    single = PlanArrays.from_columns(tp=tp, pp=pp, dp=dp, micro_batch=mb, recompute=rec,
                                     global_batch_sequences=512, sequence_parallel=True,
                                     distributed_optimizer=True)
    one = step_arrays(llama70b, single, system, cal)
    assert float(many.step_time_s[0]) == pytest.approx(float(one.step_time_s), rel=1e-12)
    for key in BREAKDOWN_KEYS:
        assert float(many.breakdown_s[key][0]) == pytest.approx(float(one.breakdown_s[key]),
                                                                rel=1e-12, abs=1e-15)


def test_more_dp_bandwidth_never_slows_down(llama70b):
    slow = system_from_cluster(load_cluster("dgx-a100-selene-like"))
    plan = _plan(tp=8, pp=4, dp=25, global_batch_sequences=400, recompute="full")
    result = estimate_plan(llama70b, plan, slow)
    assert result.step_time_s > 0 and all(v >= 0 for v in result.breakdown_s.values())


@pytest.mark.parametrize("args, path", [
    (["--tp", "3", "--dp", "1", "--pp", "1"], "plan."),  # tp does not divide heads / gpus
    (["--tp", "8", "--pp", "1", "--dp", "8"], "plan.dp"),  # 64 GPUs on a 256-GPU cluster
    (["--tp", "8", "--pp", "4", "--micro-batch", "3"], "plan.global_batch_sequences"),
])
def test_bad_plans_exit_2(args, path):
    register_all()
    out = CliRunner().invoke(app, ["estimate", "--cluster", CLUSTER, "--workload", "llama3-70b",
                                   "--global-batch", "256", *args])
    assert out.exit_code == 2
    assert "Traceback" not in out.output
    assert path in out.output


def test_unknown_preset_exits_2():
    register_all()
    out = CliRunner().invoke(app, ["estimate", "--cluster", "no-such-cluster", "--workload",
                                   "llama3-70b", "--tp", "8", "--global-batch", "256"])
    assert out.exit_code == 2 and "Traceback" not in out.output


def test_estimate_json_keys():
    register_all()
    out = CliRunner().invoke(app, ["estimate", "--cluster", CLUSTER, "--workload", "llama3-8b",
                                   "--tp", "1", "--global-batch", "512", "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    for key in ("step_time_s", "tokens_per_s", "mfu", "breakdown_s", "memory_per_gpu_bytes",
                "fits_in_memory", "comm_share_by_tier"):
        assert key in data
    assert "total" in data["memory_per_gpu_bytes"]


def test_borrowed_scale_up_efficiency_is_noted():
    """Parts without a measured scale-up efficiency table say which table was borrowed
    (xGMI has its own table since OCI's MI300X/MI355X runs calibrate it; TPU ICI has none)."""
    tpu = system_from_cluster(load_cluster("tpu-v4-pod"))
    assert tpu.notes and "tpu-v4" in tpu.notes[0] and "ici" in tpu.notes[0]
    assert system_from_cluster(load_cluster(CLUSTER)).notes == ()
    assert system_from_cluster(load_cluster("mi300x-8")).notes == ()
    result = estimate_plan(load_workload("llama3-8b"),
                           ParallelPlan(tp=1, dp=64, global_batch_sequences=64),
                           system_from_cluster(load_cluster("trn2-ultraserver")))
    assert any("trainium2" in n for n in result.notes)


def test_published_mfu_counts_the_full_attention_square():
    """MFU on executed FLOPs (the causal half) and the conventional figure of Megatron and
    PaLM (the full s x s square) differ by exactly the half of the attention core."""
    w = load_workload("llama3-8b")
    system = system_from_cluster(load_cluster("dgx-h100-superpod-su"))
    plan = ParallelPlan(tp=2, pp=1, dp=128, global_batch_sequences=256)
    result = estimate_plan(w, plan, system)
    full, half = (float(model_flops_per_step(w, 256, causal_attention_factor=f))
                  for f in (1.0, 0.5))
    assert result.mfu_published_convention / result.mfu == pytest.approx(full / half)
    assert result.to_dict()["mfu_published_convention"] == result.mfu_published_convention

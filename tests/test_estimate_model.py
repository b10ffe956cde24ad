"""Step-time model: invariants, differential vectorised-vs-scalar, bad input, CLI."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from supernode.catalog import cluster_presets
from supernode.cluster.load import load_cluster
from supernode.collectives import Fabric
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


def _faster_scale_out(system, factor: float):
    """The same system with every scale-out tier (all tiers past the scale-up one, where
    the data-parallel groups of these plans meet) ``factor`` times faster."""
    tiers = (system.fabric.tiers[0], *(
        replace(t, bandwidth_bytes_per_s=t.bandwidth_bytes_per_s * factor)
        for t in system.fabric.tiers[1:]))
    return replace(system, fabric=Fabric(tiers))


@settings(max_examples=30, deadline=None)
@given(name=st.sampled_from(["llama3-8b", "llama3-70b"]), tp=st.sampled_from([1, 2, 4, 8]),
       pp=st.sampled_from([1, 2, 4]), overlap=st.sampled_from([None, True, False]),
       zero=st.sampled_from([None, 1, 2, 3]), batches=st.sampled_from([1, 4]),
       factor=st.sampled_from([1.25, 2.0, 8.0]))
def test_more_dp_bandwidth_never_slows_down(system, name, tp, pp, overlap, zero, batches,
                                            factor):
    """Two systems that differ only in scale-out (DP) bandwidth: the faster one is never
    slower, and strictly faster wherever DP communication is exposed and runs on the
    scale-out tiers alone (TP filling a domain; smaller TP puts DP peers inside a domain,
    whose scale-up phase may then set the pace). With the knobs the slow system chose
    pinned on both, nothing but the communication changes, and the exposed DP time falls
    no more than the bandwidth rose where it is not overlapped."""
    w = load_workload(name)
    dp = system.gpus // (tp * pp)
    plan = ParallelPlan(tp=tp, pp=pp, dp=dp, global_batch_sequences=dp * batches * 2,
                        zero_stage=zero, overlap_dp_comm=overlap)
    fast_system = _faster_scale_out(system, factor)
    slow = estimate_plan(w, plan, system)
    assert estimate_plan(w, plan, fast_system).step_time_s <= slow.step_time_s * (1 + 1e-12)

    pinned = ParallelPlan(**{k: v for k, v in slow.plan.items() if v is not None})
    slow, fast = estimate_plan(w, pinned, system), estimate_plan(w, pinned, fast_system)
    assert fast.chosen == slow.chosen
    for key in ("compute", "optimizer", "other"):
        assert fast.breakdown_s[key] == slow.breakdown_s[key]
    for key in BREAKDOWN_KEYS:
        assert fast.breakdown_s[key] <= slow.breakdown_s[key] * (1 + 1e-12) + 1e-15, key
    dp_slow, dp_fast = slow.breakdown_s["dp_comm"], fast.breakdown_s["dp_comm"]
    assert dp_slow > 0 or overlap is not False  # nothing hides DP traffic with overlap off
    if dp_slow > 1e-9 and tp >= system.scale_up_size:
        # one DP peer per scale-up domain: every DP byte crosses the faster tiers
        assert dp_fast < dp_slow
        assert fast.step_time_s < slow.step_time_s
    if overlap is False:  # all DP traffic exposed: latency and fixed costs do not scale
        assert dp_fast >= dp_slow / factor * (1 - 1e-12)
    if pp == 1:  # only the DP groups leave a scale-up domain: the gain is all DP's
        assert slow.step_time_s - fast.step_time_s == pytest.approx(dp_slow - dp_fast,
                                                                     rel=1e-9, abs=1e-12)
        for key in BREAKDOWN_KEYS:
            if key != "dp_comm":
                assert fast.breakdown_s[key] == pytest.approx(slow.breakdown_s[key],
                                                              rel=1e-12, abs=1e-15)


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
    """Exit 2 with one error line naming the cluster that was not found and every preset."""
    register_all()
    out = CliRunner().invoke(app, ["estimate", "--cluster", "no-such-cluster", "--workload",
                                   "llama3-70b", "--tp", "8", "--global-batch", "256"])
    assert out.exit_code == 2 and out.stdout == "" and "Traceback" not in out.stderr
    (line,) = out.stderr.strip().splitlines()
    assert line == ("error: no-such-cluster: no such file or preset (presets: "
                    + ", ".join(sorted(cluster_presets())) + ")")


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

"""The issue's cases: plans the format can now say, one plan vocabulary across commands,
ZeRO-3 traffic that cannot all hide, expert layout as Megatron-Core places it."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from supernode.cluster.load import load_cluster, load_cluster_spec
from supernode.commands import app, register_all
from supernode.estimate.comm import group_stride
from supernode.estimate.layout import group_factors
from supernode.estimate.model import estimate_plan
from supernode.estimate.system import job_system, system_from_cluster
from supernode.planner import build_target, plan_job
from supernode.spec.plan import ParallelPlan, PlanArrays, as_plan_arrays
from supernode.spec.workload import WorkloadSpec
from supernode.workload import load_workload

H100_SU = "dgx-h100-superpod-su"


def run(*args: str):
    register_all()
    return CliRunner().invoke(app, list(args))


def test_llama3_405b_as_meta_ran_it_fits_with_fsdp():
    """TP 8, PP 16, FSDP on 1,024 H100 (Llama 3 report): it fits, and interleaving is
    still chosen (no 15/16 bubble)."""
    w = load_workload("llama3-405b")
    system = job_system(load_cluster_spec(H100_SU), 1024)
    plan = ParallelPlan(tp=8, pp=16, dp=8, global_batch_sequences=256, zero_stage=3)
    result = estimate_plan(w, plan, system)
    assert result.fits_in_memory
    assert result.chosen["vpp"] > 1
    assert result.breakdown_s["pipeline_bubble"] < 0.2 * result.step_time_s


def test_no_fit_still_chooses_the_speed_knobs():
    """Nothing fits: the reported plan is within 10 % of the least memory and the
    fastest of those (interleaving included), not the least-memory point itself."""
    w = load_workload("llama3-405b")
    system = system_from_cluster(load_cluster(H100_SU))
    plan = ParallelPlan(tp=8, pp=8, dp=4, global_batch_sequences=64, zero_stage=0)
    result = estimate_plan(w, plan, system)
    assert not result.fits_in_memory and "does not fit" in result.notes[-1]
    assert result.chosen["vpp"] > 1


def test_zero3_first_layer_gathers_stay_exposed():
    """ZeRO-3 traffic is hidden layer by layer, never entirely: the first layer of every
    pass waits for its gather (GPT-3 13B on 64 H100, micro-batch 8)."""
    gpt13 = WorkloadSpec(name="gpt3-13b", layers=40, hidden=5120, heads=40, ffn_hidden=20480,
                         vocab=50257, seq_len=2048, norm="layernorm", linear_bias=True)
    system = job_system(load_cluster_spec(H100_SU), 64)
    plan = ParallelPlan(dp=64, micro_batch=8, global_batch_sequences=1024, zero_stage=3,
                        recompute="full")
    result = estimate_plan(gpt13, plan, system)
    assert result.breakdown_s["dp_comm"] > 0.0
    off = estimate_plan(gpt13, plan.model_copy(update={"overlap_dp_comm": False}), system)
    assert off.breakdown_s["dp_comm"] > 5 * result.breakdown_s["dp_comm"]


def test_expert_parallelism_stays_inside_the_node():
    """EP 8 with TP 4 on 8-GPU nodes: Megatron-Core puts the EP group at stride etp = 1
    (it used to be laid out after TP, at stride 4, across nodes)."""
    a = PlanArrays.from_columns(tp=4, dp=8, ep=8, etp=1, global_batch_sequences=8)
    assert int(group_stride("ep", a)) == 1 and int(group_stride("dp_expert", a)) == 8
    f = group_factors(4, 1, 8, 1, ep=8, etp=1)
    assert f["ep"] == ((1, 8),) and f["etp"] == ((1, 1),) and f["dp_expert"] == ((8, 4),)
    # the default etp = tp puts EP after the expert-TP group
    g = group_factors(4, 1, 8, 1, ep=8)
    assert g["etp"] == ((1, 4),) and g["ep"] == ((4, 8),)


def test_estimate_reproduces_the_planner_winner_through_the_cli():
    """One plan vocabulary: the planner's best, given to `estimate` with its sizes, knobs
    and rank order, has the same step time."""
    target, _ = build_target(H100_SU, "llama3-8b", gpus=64, global_batch=256)
    best = plan_job(target, top=1).plans[0]
    x, k = best.layout, best.knobs
    args = ["estimate", "--cluster", H100_SU, "--workload", "llama3-8b", "--gpus", "64",
            "--global-batch", "256", "--tp", str(x.tp), "--pp", str(x.pp), "--dp", str(x.dp),
            "--cp", str(x.cp), "--vpp", str(k["vpp"]), "--micro-batch", str(k["micro_batch"]),
            "--recompute", k["recompute"], "--zero-stage", str(k["zero_stage"]),
            "--pp-layout", k["pp_layout"], "--rank-order", "-".join(x.order),
            "--sequence-parallel" if k["sequence_parallel"] else "--no-sequence-parallel",
            "--json"]
    out = run(*args)
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert data["gpus"] == 64
    assert data["step_time_s"] == pytest.approx(best.step_time_s, rel=1e-9)


def test_gpus_on_estimate_and_simulate():
    est = run("estimate", "--cluster", H100_SU, "--workload", "llama3-8b", "--gpus", "32",
              "--tp", "8", "--global-batch", "64", "--json")
    assert est.exit_code == 0, est.output
    data = json.loads(est.stdout)
    assert data["gpus"] == 32 and data["plan"]["dp"] == 4
    assert any("32 of" in n for n in data["notes"])
    sim = run("simulate", "--cluster", H100_SU, "--workload", "llama3-8b", "--gpus", "32",
              "--tp", "8", "--global-batch", "64", "--json", "--quiet")
    assert sim.exit_code == 0, sim.output
    jobs = json.loads(sim.stdout)["jobs"]
    assert jobs[0]["gpus"] == 32
    assert jobs[0]["step_time_s"] == pytest.approx(jobs[0]["estimate_step_time_s"], rel=0.05)


@pytest.mark.parametrize(("args", "path"), [
    (["--rank-order", "dp-tp"], "rank_order"),
    (["--etp", "3", "--ep", "1"], "plan.etp"),
    (["--pp-layout", "sideways"], "--pp-layout"),
    (["--zero-stage", "4"], "--zero-stage"),
])
def test_bad_plan_options_exit_2(args, path):
    out = run("estimate", "--cluster", H100_SU, "--workload", "mixtral-8x7b",
              "--global-batch", "256", *args)
    assert out.exit_code == 2 and "Traceback" not in out.output
    assert path in out.stderr


def test_plan_accepts_the_same_options():
    out = run("plan", "--cluster", H100_SU, "--workload", "llama3-8b", "--gpus", "64",
              "--global-batch", "256", "--tp", "4", "--zero-stage", "1", "--top", "2",
              "--json")
    assert out.exit_code == 0, out.output
    plans = json.loads(out.stdout)["plans"]
    assert plans and all(p["tp"] == 4 and p["zero_stage"] == 1 for p in plans)


def test_size_prints_figures_of_one_plan():
    """`size --utilization plan`: the utilisation is the cross-check plan's MFU, the cards
    are sized at it, and phase 1 holds them (it printed 28 % next to 3,633 cards while the
    cross-check said 2,922)."""
    out = run("size", "--workload", "llama3-8b", "--tokens", "2e12", "--days", "20",
              "--utilization", "plan", "--json")
    assert out.exit_code == 0, out.output
    r = json.loads(out.stdout)
    check = r["cross_check"]
    assert r["utilization"] == pytest.approx(check["mfu"], rel=1e-12)
    assert r["cards"] == pytest.approx(check["cards_at_plan_mfu"], rel=1e-9)
    assert r["phase1_gpus"] == check["gpus"] >= r["cards"]
    assert check["meets_deadline"] == (check["days_predicted"] <= r["days"])
    assert check["meets_deadline"]
    assert np.isfinite(r["utilization"]) and 0 < r["utilization"] < 1


def test_default_batch_note_names_its_rule():
    target, _ = build_target(H100_SU, "llama3-70b", gpus=16384)
    note = next(n for n in target.notes if n.startswith("global batch"))
    assert "one sequence per 8 GPUs" in note and "4 Mi tokens would be 512" in note


def test_token_imbalance_slows_the_busiest_expert_rank():
    """moe.token_imbalance (default 1: benchmarks force balance) scales the busiest rank's
    expert GEMMs, all-to-all and activations."""
    from supernode.workload.traffic import bytes_per_step_by_dim, traffic_per_step

    base = load_workload("mixtral-8x7b")
    skewed = base.model_copy(update={"moe": base.moe.model_copy(update={"token_imbalance": 2.0})})
    system = system_from_cluster(load_cluster(H100_SU))
    plan = ParallelPlan(tp=1, pp=1, dp=256, ep=8, micro_batch=1, recompute="full",
                        global_batch_sequences=256)
    fast, slow = (estimate_plan(w, plan, system) for w in (base, skewed))
    assert slow.breakdown_s["compute"] > 1.3 * fast.breakdown_s["compute"]
    a = as_plan_arrays(plan)
    ep = [float(bytes_per_step_by_dim(traffic_per_step(w, a))["ep"]) for w in (base, skewed)]
    assert ep[1] == pytest.approx(2 * ep[0])
    assert slow.memory_per_gpu_bytes["activations"] > fast.memory_per_gpu_bytes["activations"]

"""Communication per step: closed forms per dimension and vectorised == scalar."""

from __future__ import annotations

import numpy as np
import pytest

from supernode.spec.plan import ParallelPlan, PlanArrays
from supernode.spec.workload import WorkloadSpec
from supernode.workload import bytes_per_step_by_dim, load_workload, traffic_per_step
from supernode.workload.memory import params_per_gpu

GPT = WorkloadSpec(name="gpt", layers=8, hidden=1024, heads=16, ffn_hidden=4096, vocab=1000,
                   seq_len=2048)


def _calls(w: WorkloadSpec, **kw: object) -> dict[tuple[str, str, str], tuple[float, float, int]]:
    plan = ParallelPlan(**{"global_batch_sequences": 32, "micro_batch": 1, **kw})
    return {(c.dim, c.kind, c.phase): (float(c.message_bytes), float(c.calls_per_step),
                                       int(c.group_size))
            for c in traffic_per_step(w, plan) if float(c.calls_per_step) > 0}


def test_tensor_parallel_all_reduce_and_sp() -> None:
    sbh2 = 2048 * 1024 * 2.0
    plain = _calls(GPT, tp=4, dp=2, sequence_parallel=False, recompute="none")
    m = 32 // 2
    assert plain[("tp", "all_reduce", "forward")] == (sbh2, m * (2 * 8 + 1), 4)
    assert plain[("tp", "all_reduce", "backward")] == (sbh2, m * 2 * 8, 4)
    sp = _calls(GPT, tp=4, dp=2, sequence_parallel=True, recompute="none")
    # an all-reduce is a reduce-scatter plus an all-gather of the same buffer
    assert sp[("tp", "all_gather", "forward")][1] == plain[("tp", "all_reduce", "forward")][1]
    assert sp[("tp", "reduce_scatter", "forward")][1] == plain[("tp", "all_reduce",
                                                                "forward")][1]
    assert sp[("tp", "all_gather", "backward")][1] == 2 * m * 2 * 8  # incl. weight-grad gather
    full = _calls(GPT, tp=4, dp=2, sequence_parallel=False, recompute="full")
    assert full[("tp", "all_reduce", "forward")][1] == m * (4 * 8 + 1)


def test_no_parallelism_no_traffic() -> None:
    assert _calls(GPT) == {}


def test_data_parallel_modes() -> None:
    plan = ParallelPlan(dp=8, micro_batch=1, global_batch_sequences=32)
    params = float(params_per_gpu(GPT, plan)["dense"])
    ar = _calls(GPT, dp=8, grad_reduce_in_fp32=True)
    msg, calls, group = ar[("dp", "all_reduce", "backward")]
    assert group == 8 and msg * calls == pytest.approx(params * 4)  # fp32 grads (bf16 plan)
    half = _calls(GPT, dp=8)[("dp", "all_reduce", "backward")]
    assert half[0] * half[1] == pytest.approx(params * 2)  # default: bf16 gradients
    dist = _calls(GPT, dp=8, distributed_optimizer=True, grad_reduce_in_fp32=True)
    rs, ag = dist[("dp", "reduce_scatter", "backward")], dist[("dp", "all_gather", "step")]
    assert rs[0] * rs[1] == pytest.approx(params * 4) and ag[0] * ag[1] == pytest.approx(
        params * 2)
    z3 = _calls(GPT, dp=8, zero_stage=3)
    m, buckets = 32 // 8, np.ceil(params / 40e6)
    assert z3[("dp", "all_gather", "forward")][1] == 2 * m * buckets  # before fwd and bwd
    assert z3[("dp", "reduce_scatter", "backward")][1] == m * buckets


def test_bucketing() -> None:
    w = load_workload("llama3-8b")
    plan = ParallelPlan(dp=8, micro_batch=1, global_batch_sequences=32)
    dp = [c for c in traffic_per_step(w, plan, bucket_params=1e8)
          if c.dim == "dp" and c.kind == "all_reduce"][0]
    assert float(dp.calls_per_step) == np.ceil(8.03e9 / 1e8)
    assert float(dp.message_bytes) <= 1e8 * 4


def test_pipeline_context_and_expert() -> None:
    w = load_workload("mixtral-8x7b")
    c = _calls(w, tp=2, pp=4, dp=4, cp=2, ep=4, vpp=2, sequence_parallel=True,
               recompute="none")
    m = 32 // 4
    tokens = 32768 / 2
    msg, calls, group = c[("pp", "p2p", "forward")]
    assert (msg, calls, group) == (tokens * 4096 * 2 / 2, m * 2, 2)
    kv = 2 * tokens * 8 * (128 + 128) / 2
    assert c[("cp", "p2p", "forward")] == (kv, 1 * 8 * m, 2)  # 8 layers on the GPU
    a2a_msg, a2a_calls, ep = c[("ep", "all_to_all", "forward")]
    assert a2a_msg == tokens / 2 * 2 * 4096 * 2 and a2a_calls == 8 * m * 2 and ep == 4
    assert ("dp_expert", "all_reduce", "backward") in c
    assert c[("dp_expert", "all_reduce", "backward")][2] == 4 * 2 // 4


def test_vectorised_equals_scalar() -> None:
    w = load_workload("mixtral-8x7b")
    cols = {"tp": np.array([1, 2, 4, 8]), "pp": np.array([1, 2, 4, 2]),
            "dp": np.array([8, 4, 2, 2]), "ep": np.array([8, 4, 2, 1]),
            "sequence_parallel": np.array([False, True, True, False]),
            "recompute": np.array([0, 1, 2, 0]), "zero_stage": np.array([0, 1, 1, 0])}
    vec = bytes_per_step_by_dim(traffic_per_step(w, PlanArrays.from_columns(
        global_batch_sequences=64, **cols)))
    for i in range(4):
        one = {k: v[i].item() for k, v in cols.items()}
        sca = bytes_per_step_by_dim(traffic_per_step(w, PlanArrays.from_columns(
            global_batch_sequences=64, **one)))
        for dim, value in sca.items():
            assert float(value) == pytest.approx(float(vec[dim][i]), rel=1e-12), dim

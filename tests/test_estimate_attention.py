"""Attention at length and the context-parallel exchange.

* the kernel tables read back the published figures (FA3 paper Figs. 5-6) at their
  points, on the part they were measured on;
* attention time per GPU never grows with cp at fixed tokens, for every exchange type,
  kernel and head size (property);
* the CP exchange moves what each ``cp_comm_type`` moves, in closed form (property);
* sliding-window and MLA workloads keep working.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from supernode.estimate.attention import attention_core_s
from supernode.estimate.attention_kernels import kernel_tables, kernel_tflops
from supernode.estimate.kernels import attention_rate
from supernode.estimate.system import system_from_validation
from supernode.spec.plan import PlanArrays
from supernode.spec.plan_arrays import CP_COMM_CODES
from supernode.units import TFLOPS
from supernode.workload import load_workload
from supernode.workload.traffic import traffic_per_step

H100 = {"accelerator": "h100-sxm-80gb", "peak_dense_bf16_tflops": 989.0, "scale_up_gpus": 8,
        "scale_up_gigabytes_per_s": 450.0, "scale_out_gigabits_per_s": 400.0, "gpus": 8}


@pytest.fixture(scope="module")
def h100():
    return system_from_validation(H100)


def test_tables_read_back_the_published_points(h100):
    """At a measured point the rate is the figure (cuDNN on H100: 518 TFLOP/s causal
    forward at 4k, head dim 128; 499 backward non-causal; FA3 616 causal at 16k)."""
    assert float(kernel_tflops("te-cudnn", 128, 4096, True, False)) == pytest.approx(518)
    assert float(attention_rate(h100, 128, 4096, True, False)) / TFLOPS == pytest.approx(518)
    assert float(attention_rate(h100, 128, 4096, False, True)) / TFLOPS == pytest.approx(499)
    assert float(attention_rate(h100, 128, 16384, True, False, "fa3")) / TFLOPS == \
        pytest.approx(616)
    # between head dims: linear; beyond 16k: the plateau
    mid = float(kernel_tflops("te-cudnn", 96, 4096, True, False))
    assert mid == pytest.approx((363 + 518) / 2)
    assert float(kernel_tflops("fa2", 128, 262144, True, False)) == pytest.approx(335)
    for table in kernel_tables().values():  # every kernel: both passes, both masks
        assert (False, True) in table.curves and (False, False) in table.curves


PLAN_WORKLOADS = ("llama3-8b", "deepseek-v3", "mixtral-8x7b")


@settings(max_examples=25)
@given(name=st.sampled_from(PLAN_WORKLOADS), kernel=st.sampled_from(sorted(kernel_tables())),
       comm=st.sampled_from(sorted(CP_COMM_CODES)), seq=st.sampled_from([2048, 8192, 65536]),
       tp=st.sampled_from([1, 2]))
def test_attention_time_per_gpu_never_grows_with_cp(h100, name, kernel, comm, seq, tp):
    w = load_workload(name).model_copy(update={"seq_len": seq})
    cps = [1, 2, 4, 8, 16]
    times = []
    for cp in cps:
        a = PlanArrays.from_columns(tp=tp, cp=cp, cp_comm=comm, global_batch_sequences=8)
        f, b = attention_core_s(w, a, h100, kernel)
        times.append(float(f + b))
    assert all(t > 0 for t in times)
    assert all(later <= earlier * (1 + 1e-12)
               for earlier, later in zip(times, times[1:], strict=False))


def _closed_form_bytes(w, tp, cp, mb, comm, layers, microbatches):
    """Bytes one GPU sends per step in the CP exchange, from the definitions (TE
    attention.py): K+V chunk ``kv`` of ``mb s / cp`` tokens and ``kv_heads / tp`` heads."""
    e = 2.0
    tokens = mb * w.seq_len / cp
    kv = e * tokens * w.n_kv_heads * (w.qk_head_dim + w.v_head_dim) / tp
    q = e * tokens * w.n_heads * w.qk_head_dim / tp
    o = e * tokens * w.n_heads * w.v_head_dim / tp
    per_layer = {
        "p2p": (cp - 1) * kv + (cp - 1) * 2 * kv,   # KV forward; KV + dKV backward
        "all_gather": 3 * cp * kv,                   # AG forward; AG + RS(dKV) backward
        "a2a": 2 * (q + kv + o),                     # Q, K, V, O forward; gradients back
    }
    if comm == "a2a+p2p":
        inner = max(d for d in range(1, 9) if cp % d == 0 and d * tp <= 8)
        ring = cp // inner
        per_layer["a2a+p2p"] = (2 * (q + kv + o) if inner > 1 else 0.0) + 3 * (ring - 1) * kv
    return per_layer[comm] * layers * microbatches


@settings(max_examples=25)
@given(name=st.sampled_from(PLAN_WORKLOADS), comm=st.sampled_from(sorted(CP_COMM_CODES)),
       cp=st.sampled_from([2, 4, 8, 16]), tp=st.sampled_from([1, 2, 4]),
       mb=st.sampled_from([1, 2]))
def test_cp_exchange_bytes_are_what_the_comm_type_moves(name, comm, cp, tp, mb):
    w = load_workload(name)
    a = PlanArrays.from_columns(tp=tp, cp=cp, micro_batch=mb, cp_comm=comm,
                                global_batch_sequences=4 * mb)
    sent = sum(float(c.bytes_per_step) for c in traffic_per_step(w, a) if c.dim == "cp")
    expected = _closed_form_bytes(w, tp, cp, mb, comm, w.layers, 4)
    assert sent == pytest.approx(expected, rel=1e-12)


def test_only_the_ring_hides_under_attention():
    w = load_workload("llama3-8b")
    for comm in CP_COMM_CODES:
        a = PlanArrays.from_columns(cp=16, cp_comm=comm, global_batch_sequences=1)
        hidden = {c.kind for c in traffic_per_step(w, a)
                  if c.dim == "cp" and float(c.calls_per_step) > 0 and c.hidden}
        assert hidden == ({"p2p"} if comm in ("p2p", "a2a+p2p") else set())


@pytest.mark.parametrize("name", ["gpt-oss-120b", "deepseek-v3"])
def test_windowed_and_mla_workloads_keep_working(h100, name):
    """A sliding-window model (gpt-oss) and MLA (DeepSeek-V3, 192-wide query heads)."""
    w = load_workload(name)
    for comm in CP_COMM_CODES:
        a = PlanArrays.from_columns(cp=2, cp_comm=comm, global_batch_sequences=2)
        f, b = attention_core_s(w, a, h100)
        assert np.isfinite(float(f)) and float(f) > 0 and float(b) > float(f)


def test_cp_comm_type_reaches_the_plan_from_cases_and_options():
    """A case's training.cp_comm_type (Megatron's 'allgather' spelling too), the command
    line's --cp-comm-type and the planner's fixed knob; Ulysses needs the heads to split."""
    from supernode.commands._plan_options import plan_flags
    from supernode.errors import InputError
    from supernode.planner.space import space_from_plan_fields
    from supernode.spec.plan import check_plan, plan_from_data
    from supernode.spec.training_case import case_plan

    case = {"parallelism": {"cp": 2, "dp": 4}, "training": {"global_batch": 8,
                                                             "cp_comm_type": "allgather"}}
    assert case_plan(case).cp_comm_type == "all_gather"
    assert case_plan({"parallelism": {"cp": 2}, "training": {"global_batch": 8}}
                     ).cp_comm_type is None
    fields = plan_flags(cp=4, cp_comm_type="a2a")
    assert space_from_plan_fields(fields).cp_comm == CP_COMM_CODES["a2a"]
    w = load_workload("llama3-8b")  # 8 kv heads
    check_plan(w, plan_from_data({"cp": 8, "global_batch_sequences": 1, **fields}))
    with pytest.raises(InputError, match="kv heads"):
        check_plan(w, plan_from_data({"tp": 2, "cp": 8, "global_batch_sequences": 1,
                                      "cp_comm_type": "a2a"}))

"""Memory: published validation cases (tier d), closed forms (b, c) and invariants (a)."""

from __future__ import annotations

import json
import math
from importlib import resources

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_workload_strategies import workloads

from supernode.errors import InputError
from supernode.spec.plan import RECOMPUTE_MODES, ParallelPlan, PlanArrays
from supernode.spec.workload import WorkloadSpec
from supernode.workload import (
    count_params,
    in_flight_layer_microbatches,
    korthikanti_layer_bytes,
    layer_activation_bytes,
    load_workload,
    memory_bytes_per_gpu,
    model_state_bytes,
    params_per_gpu,
    predict_activation_memory,
    predict_model_state_memory,
    total_params,
)

PREDICTORS = {"model_state_memory": predict_model_state_memory,
              "activation_memory": predict_activation_memory}


def _cases() -> list[dict]:
    path = resources.files("supernode") / "data" / "validation" / "public.json"
    cases = json.loads(path.read_text(encoding="utf-8"))["cases"]
    return [c for c in cases if c["kind"] in PREDICTORS]


def _published_rounding(value: float) -> float:
    """Half a unit in the last significant digit the source printed (float noise removed)."""
    digits = f"{value:.6g}".split("e")[0].replace(".", "").replace("-", "").rstrip("0")
    exponent = math.floor(math.log10(abs(value)))
    return 0.5 * 10.0 ** (exponent - max(len(digits.lstrip("0")), 1) + 1)


@pytest.mark.parametrize("case", _cases(), ids=lambda c: c["id"])
def test_validation_case(case: dict) -> None:
    """Within 1 %, or within the rounding of the published figure when that is coarser.

    (ZeRO Figure 1 prints 1.9 GB for 16 x 7.5e9 / 64 = 1.875e9 bytes: 2 digits.)
    """
    measured = next(iter(case["measured"].values()))
    predicted = PREDICTORS[case["kind"]](case)
    tolerance = max(0.01 * measured, _published_rounding(measured))
    assert abs(predicted - measured) <= tolerance, (predicted, measured)


def test_validation_inputs_refused() -> None:
    case = {"params": 1e9, "dp": 8, "zero_stage": 1, "precision": "fp12"}
    with pytest.raises(InputError) as info:
        predict_model_state_memory(case)
    assert info.value.path == "precision" and "fp16_params_fp16_grads_fp32_adam" in str(info.value)
    with pytest.raises(InputError, match="zero_stage"):
        predict_model_state_memory({**case, "precision": "bf16", "zero_stage": 5})
    act = {"seq_len": 2048, "micro_batch": 1, "hidden": 1024, "heads": 8, "tp": 2,
           "recompute": "none", "sequence_parallel": False, "precision": "int3"}
    with pytest.raises(InputError, match="precision"):
        predict_activation_memory(act)
    with pytest.raises(InputError, match="recompute"):
        predict_activation_memory({**act, "precision": "bf16", "recompute": "most"})
    with pytest.raises(InputError, match="hidden"):
        predict_activation_memory({k: v for k, v in act.items() if k != "hidden"})


@pytest.mark.parametrize(("precision", "unsharded", "sharded_const", "sharded_per_d"), [
    ("bf16", 18, 6, 12), ("fp16", 20, 4, 16), ("fp16_params_fp16_grads_fp32_adam", 16, 4, 12)])
def test_megatron_distributed_optimizer_bytes(precision: str, unsharded: int,
                                              sharded_const: int, sharded_per_d: int) -> None:
    assert model_state_bytes(1, 8, 0, precision)["total"] == unsharded
    for d in (1, 2, 8, 64):
        got = model_state_bytes(1, d, 0, precision, distributed_optimizer=True)["total"]
        assert got == pytest.approx(sharded_const + sharded_per_d / d)


@settings(max_examples=80, deadline=None)
@given(st.sampled_from([1, 2, 4, 8, 16, 32, 64, 128]), st.sampled_from([64, 128, 1024, 2048]),
       st.sampled_from([1, 2, 4, 8, 16, 32, 64, 96, 128]), st.sampled_from([1, 2, 4, 8]),
       st.sampled_from(["none", "selective", "full"]), st.booleans())
def test_korthikanti_closed_form(b: int, heads: int, head_dim: int, tp: int, recompute: str,
                                 sp: bool) -> None:
    """The general per-layer model reduces to Table 2 for GPT (MHA, 4h MLP, dropout, 2 B)."""
    h = heads * head_dim
    s = 2048
    w = WorkloadSpec(name="gpt", layers=1, hidden=h, heads=heads, ffn_hidden=4 * h, vocab=8,
                     seq_len=s, dropout=True)
    a = PlanArrays.from_columns(tp=tp, micro_batch=b, global_batch_sequences=b,
                                recompute=recompute, sequence_parallel=sp,
                                flash_attention=False, precision="fp16")
    ref = korthikanti_layer_bytes(s, b, h, heads, tp, recompute, sp and tp > 1)
    assert float(layer_activation_bytes(w, a)) == pytest.approx(float(ref), rel=1e-12)


def test_pipeline_in_flight() -> None:
    """1F1B first stage holds ~l layers; interleaved multiplies by 1 + (p-1)/(p v)."""
    w = WorkloadSpec(name="t", layers=48, hidden=64, heads=4, ffn_hidden=256, vocab=8,
                     seq_len=128)
    for p, v in [(1, 1), (2, 1), (4, 1), (4, 2), (4, 3), (8, 2), (6, 4)]:
        a = PlanArrays.from_columns(pp=p, vpp=v, global_batch_sequences=1024)
        expected = 48 * (1 + (p - 1) / (p * v)) if v > 1 else 48
        assert float(in_flight_layer_microbatches(w, a)) == pytest.approx(expected)
        assert float(in_flight_layer_microbatches(w, a, "last")) <= expected
    few = PlanArrays.from_columns(pp=8, global_batch_sequences=2)  # m = 2 < p
    assert float(in_flight_layer_microbatches(w, few)) == 2 * 6


def test_params_per_gpu_sum_to_total() -> None:
    """Summed over every stage and TP x EP rank, the shards cover the whole model."""
    for preset, tp, pp, ep in [("llama3-70b", 8, 1, 1), ("mixtral-8x7b", 2, 1, 8),
                               ("gpt3-175b", 1, 1, 1)]:
        w = load_workload(preset)
        plan = PlanArrays.from_columns(tp=tp, pp=pp, ep=ep, dp=ep, global_batch_sequences=ep)
        p = params_per_gpu(w, plan)
        c = float(p["dense"]) * tp + float(p["expert"]) * tp * ep
        assert c == pytest.approx(total_params(w), rel=2e-3)  # norms/routers replicated


def test_llama3_405b_breakdown() -> None:
    """Llama 3 405B at TP8 PP16 (Meta's layout): full recompute fits 80 GB, none does not."""
    w = load_workload("llama3-405b")
    plan = ParallelPlan(tp=8, pp=16, dp=8, vpp=2, micro_batch=1, global_batch_sequences=128,
                        recompute="full", sequence_parallel=True, distributed_optimizer=True,
                        grad_reduce_in_fp32=True)
    mem = memory_bytes_per_gpu(w, plan)
    assert 20e9 < float(mem["total"]) < 80e9
    parts = ("weights", "gradients", "optimizer_states", "activations", "output_logits",
             "comm_buffers")
    assert float(mem["total"]) == pytest.approx(sum(float(mem[k]) for k in parts))
    # states: 2 + 4 + 12/8 bytes per parameter; the first GPU holds 2 chunks of
    # ceil(126 / 32) = 4 layers and the input embedding, all split 8 ways by TP
    c = count_params(w)
    first_gpu = (8 * c.dense_layer + c.embedding) / 8
    assert float(mem["weights"] + mem["gradients"] + mem["optimizer_states"]) == pytest.approx(
        7.5 * first_gpu, rel=1e-3)
    no_recompute = memory_bytes_per_gpu(w, plan.model_copy(update={"recompute": "none"}))
    assert float(no_recompute["total"]) > 80e9


def _random_plans(draw: st.DrawFn) -> dict:
    return {"tp": draw(st.sampled_from([1, 2, 4])), "pp": draw(st.sampled_from([1, 2, 4])),
            "cp": draw(st.sampled_from([1, 2])), "vpp": draw(st.sampled_from([1, 2])),
            "micro_batch": draw(st.sampled_from([1, 2])),
            "recompute": draw(st.sampled_from(list(RECOMPUTE_MODES))),
            "sequence_parallel": draw(st.booleans()), "flash_attention": draw(st.booleans())}


@settings(max_examples=40, deadline=None)
@given(workloads(), st.data())
def test_memory_invariants(w: WorkloadSpec, data: st.DataObject) -> None:
    kw = _random_plans(data.draw)
    kw["vpp"] = kw["vpp"] if kw["pp"] > 1 else 1
    zero = data.draw(st.sampled_from([1, 2, 3])) if kw["pp"] == 1 else 1
    dps = np.array([1, 2, 4, 8, 16])
    a = PlanArrays.from_columns(dp=dps, global_batch_sequences=256, zero_stage=zero, **kw)
    total = memory_bytes_per_gpu(w, a)["total"]
    assert np.all(np.diff(total) <= 1e-6 * total[:-1])  # never grows with dp (ZeRO >= 1)
    # vectorised equals scalar, element by element (differential)
    for i, dp in enumerate(dps):
        one = PlanArrays.from_columns(dp=int(dp), global_batch_sequences=256, zero_stage=zero,
                                      **kw)
        assert float(memory_bytes_per_gpu(w, one)["total"]) == pytest.approx(total[i], rel=1e-12)
    # sequence parallelism never increases activations
    on = PlanArrays.from_columns(global_batch_sequences=256, **{**kw, "sequence_parallel": True})
    off = PlanArrays.from_columns(global_batch_sequences=256, **{**kw, "sequence_parallel": False})
    assert np.all(layer_activation_bytes(w, on) <= layer_activation_bytes(w, off))
    # recomputation never increases per-layer activations
    modes = [layer_activation_bytes(w, PlanArrays.from_columns(
        global_batch_sequences=256, **{**kw, "recompute": r})) for r in ("none", "selective",
                                                                       "full")]
    assert modes[0] >= modes[1] >= modes[2] > 0

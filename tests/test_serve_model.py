"""The serving model: KV-cache capacity, monotone TPOT, targets, disaggregation, and the
decode step priced by the step model's own forward pass (differential)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from supernode.cluster.load import load_cluster_spec
from supernode.estimate.compute import layer_time
from supernode.estimate.kernels import gemm_forward_s
from supernode.estimate.system import job_system
from supernode.serve.calibration import default_serve_constants
from supernode.serve.deploy import Deployments
from supernode.serve.memory import kv_bytes_per_token_per_gpu
from supernode.serve.plan import ServeRequest, plan_serving
from supernode.serve.precision import ELEMENT_BYTES, resolve_precision
from supernode.serve.step import decode_attention_s, decode_step_s, with_length
from supernode.serve.throughput import serve
from supernode.serve.traffic import Traffic
from supernode.workload.presets import load_workload
from supernode.workload.shapes import Gemm

MODELS = ("llama3-8b", "llama3-70b", "mixtral-8x7b", "deepseek-v3", "gpt-oss-120b",
          "qwen3-235b")


@pytest.fixture(scope="module")
def h100():
    return job_system(load_cluster_spec("hgx-h100"), 64)


@pytest.fixture(scope="module")
def gb200():
    return job_system(load_cluster_spec("gb200-nvl72"))


def _precision(w, system, main="fp8", kv=None):
    return resolve_precision(main, None, kv, w.moe is not None,
                             system.peak_flops_by_precision)


@settings(max_examples=15, deadline=None)
@given(model=st.sampled_from(MODELS), tp=st.sampled_from([1, 2, 4, 8]),
       pp=st.sampled_from([1, 2, 4]), batch=st.integers(1, 512),
       isl=st.integers(16, 8192), osl=st.integers(1, 4096), kv=st.sampled_from(["bf16", "fp8"]))
def test_kv_tokens_are_free_memory_over_bytes_per_token(h100, model, tp, pp, batch, isl, osl,
                                                        kv):
    w = load_workload(model)
    p = _precision(w, h100, kv=kv)
    d = Deployments.of(tp=tp, pp=pp, dp=1, ep=1, batch=batch)
    r = serve(w, d, h100, default_serve_constants(), p, Traffic(isl=isl, osl=osl))
    expected = (h100.usable_memory_bytes - r.weights_bytes - r.activation_bytes) \
        / r.kv_bytes_per_token
    assert np.array_equal(r.kv_tokens, expected)
    # bytes per token per GPU from the architecture alone
    layers = np.ceil(w.layers / pp)
    if w.mla is not None:
        per_layer = w.mla.kv_lora_rank + w.mla.qk_rope_head_dim
    else:
        per_layer = 2 * w.n_kv_heads * w.qk_head_dim / min(tp, w.n_kv_heads)
    assert r.kv_bytes_per_token == pytest.approx(per_layer * layers * ELEMENT_BYTES[kv])
    assert bool(r.fits) == bool(expected >= batch * (isl + osl) and expected > 0)


@settings(max_examples=12, deadline=None)
@given(model=st.sampled_from(MODELS), tp=st.sampled_from([1, 2, 4, 8]),
       dp=st.sampled_from([1, 2, 8]), context=st.integers(1, 32768),
       batches=st.lists(st.integers(1, 4096), min_size=2, max_size=6, unique=True),
       osl=st.integers(1, 2048))
def test_tpot_never_falls_as_the_batch_grows(h100, model, tp, dp, context, batches, osl):
    w = load_workload(model)
    p = _precision(w, h100)
    dp = dp if w.moe is not None else 1
    ep = tp * dp if w.moe is not None and w.moe.experts % (tp * dp) == 0 else 1
    b = np.array(sorted(batches))
    d = Deployments.of(tp=tp, pp=1, dp=dp, ep=ep, batch=b)
    c = default_serve_constants()
    step = decode_step_s(w, d, h100, c, p, context)
    assert np.all(np.diff(step) >= -1e-12 * step[1:])
    tpot = serve(w, d, h100, c, p, Traffic(isl=context, osl=osl)).tpot_s
    assert np.all(np.diff(tpot) >= -1e-12 * tpot[1:])


@pytest.mark.parametrize("model,cluster,isl,osl", [
    ("llama3-70b", "hgx-h100", 1000, 500), ("deepseek-v3", "gb200-nvl72", 2000, 500)])
def test_a_lower_latency_target_never_serves_more_per_gpu(model, cluster, isl, osl):
    w = load_workload(model)
    system = job_system(load_cluster_spec(cluster))
    p = _precision(w, system)
    served = []
    for tpot_ms in (200.0, 60.0, 30.0, 15.0):
        r = plan_serving(ServeRequest(w, system, p, Traffic(isl, osl, tpot_s=tpot_ms / 1e3)))
        rates = [(r[m] or {}).get("output_tokens_per_s_per_gpu", 0.0) if m == "disaggregated"
                 else (r[m]["best"] or {}).get("output_tokens_per_s_per_gpu", 0.0)
                 for m in ("aggregated", "disaggregated")]
        served.append(max(rates))
        best = r["aggregated"]["best"]
        if best:
            assert best["tpot_ms"] <= tpot_ms
    assert served == sorted(served, reverse=True)
    assert served[0] > served[-1]


def test_disaggregation_is_chosen_only_where_it_serves_more(gb200):
    setups = [("deepseek-v3", gb200, Traffic(2000, 500, tpot_s=0.05)),
              ("deepseek-v3", gb200, Traffic(100, 2000)),
              ("llama3-8b", job_system(load_cluster_spec("hgx-h100")), Traffic(1000, 1000)),
              ("llama3-8b", job_system(load_cluster_spec("hgx-h100")), Traffic(100, 4000))]
    modes = set()
    for model, system, traffic in setups:
        w = load_workload(model)
        r = plan_serving(ServeRequest(w, system, _precision(w, system), traffic))
        agg = (r["aggregated"]["best"] or {}).get("output_tokens_per_s_per_gpu", -1.0)
        dis = (r["disaggregated"] or {}).get("output_tokens_per_s_per_gpu", -1.0)
        assert r["mode"] == ("disaggregated" if dis > agg else "aggregated")
        modes.add(r["mode"])
    w = load_workload("deepseek-v3")
    off = plan_serving(ServeRequest(w, gb200, _precision(w, gb200),
                                    Traffic(2000, 500, tpot_s=0.05), disaggregation=False))
    assert off["mode"] == "aggregated" and off["disaggregated"] is None
    assert modes == {"aggregated", "disaggregated"}


@pytest.mark.parametrize("model,precision", [("llama3-8b", "bf16"), ("llama3-70b", "fp8"),
                                             ("mixtral-8x7b", "fp8"), ("deepseek-v3", "fp8")])
def test_decode_step_of_one_layer_is_the_estimates_forward_pass(h100, model, precision):
    """One layer (dense or MoE), TP 1: serve's decode step less its decode attention and
    output layer is the step model's layer forward (less its attention core) of the same
    shapes, with the same kernel constants."""
    base = load_workload(model)
    moe = base.moe is not None
    one_layer = base.model_copy(update={"layers": 1, "moe": base.moe.model_copy(
        update={"first_k_dense_layers": 0}) if moe else None})
    c = replace(default_serve_constants(), iteration_overhead_s=0.0, moe_layer_overhead_s=0.0)
    p = _precision(one_layer, h100, precision)
    batch, context = 48, 3000
    d = Deployments.of(tp=1, pp=1, dp=1, ep=1, batch=batch)
    step = decode_step_s(one_layer, d, h100, c, p, context)
    k = c.kernel.replace(memory_eta=c.decode_memory_eta)
    attention = decode_attention_s(one_layer, d, h100, c, p, batch, context)
    w1 = with_length(one_layer, 1)
    a = d.plan_arrays(batch, p.other)
    head = gemm_forward_s([Gemm("output", batch, w1.vocab, w1.hidden, precision="bf16")],
                          h100, k, "bf16")
    t = layer_time(w1, a, h100, k, moe)
    assert step - attention - head == pytest.approx(t.forward_s - t.core_forward_s, rel=1e-12)
    # and the layer's GEMMs are the shapes a decode step multiplies: m = batch
    if not moe and base.mla is None:
        h, f = w1.hidden, w1.ffn_hidden
        qkv = (w1.n_heads + 2 * w1.n_kv_heads) * w1.qk_head_dim
        gemms = [Gemm("qkv", batch, qkv, h), Gemm("attn_out", batch, h, w1.n_heads *
                                                  w1.v_head_dim),
                 Gemm("fc1", batch, 2 * f, h), Gemm("fc2", batch, h, f)]
        streamed = t.forward_s - t.core_forward_s - gemm_forward_s(gemms, h100, k, p.other)
        assert 0.0 <= streamed < 0.05 * (t.forward_s - t.core_forward_s)


def test_small_batch_decode_is_bound_by_weight_reads(h100):
    w = load_workload("llama3-70b")
    p = _precision(w, h100)
    c = default_serve_constants()
    d = Deployments.of(tp=8, batch=np.array([1, 2, 4]))
    step = decode_step_s(w, d, h100, c, p, 128)
    # the weights dominate: doubling a tiny batch barely changes the step
    assert step[2] < 1.1 * step[0]
    weights_s = 70e9 / 8 / (h100.memory_bandwidth_bytes_per_s * c.decode_memory_eta)
    assert step[0] > weights_s


def test_fp4_needs_fp4_units_and_halves_the_weight_reads(h100, gb200):
    w = load_workload("llama3-70b")
    with pytest.raises(Exception, match="fp4"):
        _precision(w, h100, "fp4")
    d = Deployments.of(tp=4, batch=1)
    c = replace(default_serve_constants(), iteration_overhead_s=0.0)
    fp8 = decode_step_s(w, d, gb200, c, _precision(w, gb200, "fp8"), 64)
    fp4 = decode_step_s(w, d, gb200, c, _precision(w, gb200, "fp4"), 64)
    assert fp4 < 0.8 * fp8


def test_mla_cache_is_one_latent_replicated_across_tp(h100):
    w = load_workload("deepseek-v3")
    p = _precision(w, h100, kv="bf16")
    one = kv_bytes_per_token_per_gpu(w, Deployments.of(tp=1), p)
    eight = kv_bytes_per_token_per_gpu(w, Deployments.of(tp=8), p)
    assert one == eight == pytest.approx(61 * 576 * 2)

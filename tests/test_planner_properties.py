"""Invariants of the planner over generated clusters and workloads (hypothesis).

* No returned plan puts TP across scale-up domains unless allowed.
* No returned plan exceeds memory; when nothing fits, the answer is the nearest plans
  (marked as not fitting) with a reason and suggestions, never an empty table.
* Plans are ranked, distinct, and the report is valid JSON.
"""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_planner_search import assert_ranked_by_class

from supernode.cluster.load import load_cluster_spec
from supernode.planner import build_target, plan_job
from supernode.planner.variants import with_domain_size
from supernode.spec.hardware import AcceleratorSpec
from supernode.spec.workload import WorkloadSpec


def _chip(memory_gbyte: float) -> AcceleratorSpec:
    return AcceleratorSpec(name=f"test-gpu-{memory_gbyte:g}", peak_dense_tflops={"bf16": 989},
                           memory_gbyte=memory_gbyte, memory_bandwidth_tbyte_per_s=3.35,
                           scale_up_ports=18, scale_up_port_bandwidth_gbyte_per_s=25,
                           tdp_w=700)


@st.composite
def clusters(draw):
    spec = load_cluster_spec("dgx-h100-superpod-su")
    size = draw(st.sampled_from([8, 16, 32]))
    domains = draw(st.sampled_from([2, 4, 8, 16]))
    memory = draw(st.sampled_from([16.0, 40.0, 80.0, 141.0]))
    host = spec.host.model_copy(update={"accelerator": _chip(memory)})
    spec = spec.model_copy(update={"host": host})
    return with_domain_size(spec, size, size * domains)


@st.composite
def workloads(draw):
    heads = draw(st.sampled_from([8, 16, 32]))
    head_dim = draw(st.sampled_from([64, 128]))
    hidden = heads * head_dim
    kv = draw(st.sampled_from([h for h in (1, 2, 4, 8, heads) if heads % h == 0]))
    data = {"name": "generated", "layers": draw(st.integers(2, 48)), "hidden": hidden,
            "heads": heads, "kv_heads": kv, "ffn_hidden": 4 * hidden,
            "vocab": draw(st.sampled_from([32000, 128256])),
            "seq_len": draw(st.sampled_from([1024, 2048, 4096])),
            "gated_mlp": draw(st.booleans())}
    if draw(st.booleans()):
        data["moe"] = {"experts": draw(st.sampled_from([8, 16])), "top_k": 2,
                       "expert_ffn_hidden": 2 * hidden}
    return WorkloadSpec.model_validate(data)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec=clusters(), w=workloads(), allow=st.booleans(),
       batch=st.sampled_from([None, 64, 96, 1024]))
def test_returned_plans_fit_and_respect_the_domain(spec, w, allow, batch):
    target, _ = build_target(spec, w, global_batch=batch)
    report = plan_job(target, top=3, allow_cross_domain_tp=allow)
    json.dumps(report.to_dict(), allow_nan=False)
    if report.feasible:
        assert_ranked_by_class(report.plans)
        for p in report.plans:
            assert p.fits_in_memory
            assert p.memory_per_gpu_bytes["total"] <= target.system.usable_memory_bytes
            assert allow or not p.tp_crosses_domain
            assert p.layout.tp * p.layout.pp * p.layout.dp * p.layout.cp == target.gpus
    else:
        assert report.advice and report.advice["reason"]
        assert report.plans or not report.outcome.records
        assert all(not p.fits_in_memory or p.tp_crosses_domain for p in report.plans)
        assert report.explanation[0].startswith("No feasible plan")


def test_impossible_memory_is_an_answer_with_alternatives():
    """405B on one 8-GPU server: nearest plans listed, and how many GPUs would do."""
    target, _ = build_target("hgx-h100", "llama3-405b")
    report = plan_job(target, top=3)
    assert not report.feasible
    assert len(report.plans) == 3 and not any(p.fits_in_memory for p in report.plans)
    needs = [p.memory_per_gpu_bytes["total"] for p in report.plans]
    assert needs == sorted(needs)
    assert any("GPUs" in s for s in report.advice["suggestions"])


def test_unsplittable_batch_says_which_batches_work():
    """2 layers, 8 heads, 1K tokens: at most tp 8 x pp 2 x cp 2 = 32 ways without dp."""
    w = WorkloadSpec(name="tiny", layers=2, hidden=512, heads=8, ffn_hidden=2048,
                     vocab=32000, seq_len=1024)
    target, _ = build_target("dgx-h100-superpod-su", w, global_batch=1)
    report = plan_job(target, top=2)
    assert not report.feasible and not report.plans
    assert "global batch" in report.advice["suggestions"][0]
    assert "256" in report.advice["suggestions"][0]

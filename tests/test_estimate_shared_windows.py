"""Overlap windows shared by the tiers: TP traffic hidden under the GEMMs occupies them
for an EP or DP transfer on the same links, not for one on another tier.

Megatron-Core runs TP communication overlap (Transformer Engine userbuffers), the
gradient reduce-scatter (``--overlap-grad-reduce``) and the expert all-to-all overlap
under the same GEMMs; transfers that cross the same links share those links' time, so
what one hides there is not free for the other (the simulator's links share it the same
way). The step model's calls are priced here by a stand-in with known seconds and tiers
so the windows' arithmetic is checked exactly.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from supernode.cluster.load import load_cluster
from supernode.estimate.calibration import default_calibration
from supernode.estimate.step import Overlap, paired_share, step_arrays, tp_hidden_s
from supernode.estimate.system import system_from_cluster
from supernode.spec.plan import ParallelPlan, as_plan_arrays
from supernode.workload import load_workload
from supernode.workload.traffic import traffic_per_step

NVLINK, NETWORK = 0, 1


def _priced(case, seconds: dict[str, float], tiers: dict[str, int]):
    """A call pricer: the calls of dimension ``d`` cost ``seconds[d]`` per step in all
    (shared equally), on tier ``tiers[d]``; it records the seconds by (dim, phase)."""
    w, a, _ = case
    calls = [c for c in traffic_per_step(w, a) if np.any(c.calls_per_step)
             and np.any(np.asarray(c.group_size) > 1)]
    n = {d: sum(c.dim == d for c in calls) for d in {c.dim for c in calls}}
    issued: dict[tuple[str, str], float] = {}

    def call_time(call, a, fabric):
        per_step = seconds.get(call.dim, 0.0) / n[call.dim]
        key = (call.dim, call.phase)
        issued[key] = issued.get(key, 0.0) + per_step
        count = max(float(np.max(call.calls_per_step)), 1.0)
        return (np.asarray(per_step / count), np.asarray(per_step),
                np.asarray(tiers.get(call.dim, NETWORK)))
    return call_time, issued


@pytest.fixture(scope="module")
def moe_case():
    w = load_workload("mixtral-8x7b")
    plan = ParallelPlan(tp=4, pp=2, dp=8, ep=8, etp=1, micro_batch=1, vpp=1,
                        global_batch_sequences=64, recompute="none", zero_stage=1,
                        moe_a2a_overlap=True)
    system = system_from_cluster(load_cluster("dgx-h100-superpod-su"))
    return w, as_plan_arrays(plan), system


def _steps(case, seconds, tiers):
    w, a, system = case
    call_time, issued = _priced(case, seconds, tiers)
    return step_arrays(w, a, system, default_calibration(), Overlap(), call_time), issued


def test_tp_hidden_time_leaves_the_expert_window_on_a_shared_tier(moe_case):
    """EP on TP's tier hides only under what TP left of the paired passes; on another
    tier the whole window is its own."""
    _, a, _ = moe_case
    cal = default_calibration()
    base, _ = _steps(moe_case, {}, {})
    compute = float(base.breakdown_s["compute"])
    comp = base.compute
    m = float(a.microbatches)
    core = m * float(comp.attention_core_forward_s + comp.attention_core_backward_s)
    paired = float(paired_share(a))
    # TP traffic that fills most of its window, EP traffic larger than the rest of it
    tp_total = 0.5 * m * float(comp.forward_s + comp.backward_s - core / m)
    ep = 2.0 * compute
    seconds = {"tp": tp_total, "ep": ep}
    shared, issued = _steps(moe_case, seconds, {"tp": NVLINK, "ep": NVLINK})
    apart, _ = _steps(moe_case, seconds, {"tp": NVLINK, "ep": NETWORK})
    tp_phase = {ph: issued.get(("tp", ph), 0.0) for ph in ("forward", "backward")}
    assert sum(tp_phase.values()) == pytest.approx(tp_total)
    hidden_tp = sum(float(v) for v in tp_hidden_s(tp_phase, comp, a, cal).values())
    assert hidden_tp > 0.0
    window = compute - core  # nothing on DP here
    expect_apart = ep - min(paired * ep, cal.a2a_overlap * paired * window)
    expect_shared = ep - min(paired * ep, cal.a2a_overlap * paired * (window - hidden_tp))
    assert float(apart.breakdown_s["ep_comm"]) == pytest.approx(expect_apart, rel=1e-9)
    assert float(shared.breakdown_s["ep_comm"]) == pytest.approx(expect_shared, rel=1e-9)
    assert float(shared.breakdown_s["ep_comm"]) > float(apart.breakdown_s["ep_comm"])


def test_tp_on_the_dp_tier_shrinks_the_gradient_window(moe_case):
    """ZeRO-1's bucketed gradient reduction hides under the last backward less the TP
    traffic hidden in it when both cross NVLink."""
    w, a, system = moe_case
    base, _ = _steps(moe_case, {}, {})
    comp = base.compute
    m = float(a.microbatches)
    bwd_window = float(comp.backward_s - comp.attention_core_backward_s)
    grads = 0.9 * bwd_window
    tp_total = 0.6 * m * bwd_window
    seconds = {"tp": tp_total, "dp": grads}
    shared, _ = _steps(moe_case, seconds, {"tp": NVLINK, "dp": NVLINK})
    apart, _ = _steps(moe_case, seconds, {"tp": NVLINK, "dp": NETWORK})
    assert float(apart.breakdown_s["dp_comm"]) < float(shared.breakdown_s["dp_comm"])
    assert float(shared.breakdown_s["dp_comm"]) <= grads + 1e-12


@settings(max_examples=25, deadline=None)
@given(tp_share=st.floats(0.0, 3.0), ep_share=st.floats(0.0, 3.0),
       dp_share=st.floats(0.0, 3.0), same_ep=st.booleans(), same_dp=st.booleans())
def test_sharing_a_tier_never_speeds_a_step(moe_case, tp_share, ep_share, dp_share,
                                            same_ep, same_dp):
    """Moving EP or DP onto TP's links can only lengthen the step, never beyond the
    step with nothing overlapped; exposed seconds never exceed the issued ones."""
    base, _ = _steps(moe_case, {}, {})
    compute = float(base.breakdown_s["compute"])
    seconds = {"tp": tp_share * compute, "ep": ep_share * compute, "dp": dp_share * compute}
    tiers = {"tp": NVLINK, "ep": NVLINK if same_ep else NETWORK,
             "dp": NVLINK if same_dp else NETWORK}
    shared, _ = _steps(moe_case, seconds, tiers)
    apart, _ = _steps(moe_case, seconds, {"tp": NVLINK, "ep": NETWORK, "dp": NETWORK})
    assert float(shared.step_time_s) >= float(apart.step_time_s) - 1e-12
    b = shared.breakdown_s
    assert float(b["ep_comm"]) <= seconds["ep"] + 1e-12
    assert float(b["dp_comm"]) <= seconds["dp"] + 1e-12
    assert float(b["tp_comm"]) <= seconds["tp"] + 1e-12

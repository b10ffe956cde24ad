"""The workload fit reuses a plan search its caller already ran when it is the same search
(the design review's own plan search at the cluster's domain size), and gives the same
answer as searching again; a different search is never reused."""

from __future__ import annotations

from dataclasses import replace

import supernode.planner.fit as fit
from supernode.cluster.load import load_cluster_spec
from supernode.planner.build import build_target
from supernode.planner.fit import FitInput, same_search, workload_fit
from supernode.planner.report import plan_job

CLUSTER, WORKLOAD = "dgx-h100-superpod-su", "llama3-8b"


def test_a_fit_reusing_the_callers_search_equals_a_fresh_fit(monkeypatch) -> None:
    spec = load_cluster_spec(CLUSTER)
    target, _ = build_target(spec, WORKLOAD, None, 64, price_per_gpu_hour=3.0)
    searched = plan_job(target, top=3)
    sizes = (8,)
    fresh = workload_fit(FitInput(target.workload, spec, None, 64, sizes,
                                  price_per_gpu_hour=3.0, supernode_premium=0.0))
    calls = []
    monkeypatch.setattr(fit, "plan_job", lambda *a, **k: calls.append(a) or plan_job(*a, **k))
    reused = workload_fit(FitInput(target.workload, spec, None, 64, sizes,
                                   price_per_gpu_hour=3.0, supernode_premium=0.0,
                                   searched=(searched,)))
    assert calls == []  # the one size asked for was the caller's search
    assert reused == fresh
    assert same_search(searched.outcome.target, replace(
        target, notes=("another note",),
        economics=replace(target.economics, price_note="worded otherwise")))


def test_another_price_or_batch_is_another_search() -> None:
    target, _ = build_target(CLUSTER, WORKLOAD, None, 64, price_per_gpu_hour=3.0)
    dearer, _ = build_target(CLUSTER, WORKLOAD, None, 64, price_per_gpu_hour=4.0)
    bigger, _ = build_target(CLUSTER, WORKLOAD, None, 128, price_per_gpu_hour=3.0)
    assert not same_search(target, dearer)
    assert not same_search(target, bigger)

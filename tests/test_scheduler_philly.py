"""Acceptance: on the real Philly trace and GB200 NVL72 SuperPOD-like clusters,
topology-aware placement has fewer TP-crossing jobs and a lower slowdown spread among
co-located jobs than first-fit and random (seed 000 §4.1, seed 001 §4.2).

Figures at seed 0 (``docs/scheduler.md`` has the whole trace): first 8,000 Philly jobs on
the 576-GPU preset — TP-crossing share random 93 %, first-fit 29 %, best-fit 0 %; slowdown
spread (p95/p5 − 1 of co-located multi-GPU jobs) 564 %, 228 %, 0.03 %.

The seeds' "> 20 % → < 5 %" (seed 001 §4.2) is a measurement of one cluster; what the
model claims, and this test asserts, is its own half: best fit keeps the spread under
5 %, and topology-aware placement is strictly better than the blind policies on every
figure. How far first-fit and random spread is whatever the step model says (reported in
docs/scheduler.md, not forced over a line).

The acceptance runs under ``uniform-tp`` shapes (TP drawn among the legal sizes: many TP
jobs to judge by). Under the default ``memory-tp`` the 2017 Philly jobs are small enough
that few need TP at all (issue 26); :func:`test_memory_tp_philly_jobs_rarely_need_tp`
checks what remains true there.
"""

from __future__ import annotations

import pytest

from supernode.cluster.load import load_cluster_spec
from supernode.cluster.scaling import scale_cluster
from supernode.scheduler import EngineOptions, TraceRules, load_trace, schedule

CASES = [("gb200-nvl72-superpod", None, 8000), ("gb200-nvl72-superpod", 1152, 6000)]


@pytest.mark.parametrize("preset, gpus, jobs", CASES)
def test_topology_aware_placement_wins_on_philly(preset, gpus, jobs):
    cluster = scale_cluster(load_cluster_spec(preset), gpus).cluster
    trace = load_trace("philly", TraceRules(cluster.accelerators)).head(jobs)
    result = schedule(cluster, trace, ["random", "first-fit", "best-fit"], seed=0,
                      options=EngineOptions(shapes="uniform-tp", pricing="all-split"))
    rnd, ff, bf = (result.policy(p) for p in ("random", "first-fit", "best-fit"))
    assert bf["tp_jobs"] > 100                                   # enough TP>1 jobs to judge
    assert bf["tp_crossing_jobs"] < ff["tp_crossing_jobs"] < rnd["tp_crossing_jobs"]
    assert bf["tp_crossing_share"] == 0.0
    assert ff["tp_crossing_share"] > 0.2 and rnd["tp_crossing_share"] > 0.9
    # the seeds' "< 5 %" with topology awareness, and strictly less than without it
    assert bf["slowdown_spread"] < 0.05
    assert bf["slowdown_spread"] < ff["slowdown_spread"]
    assert bf["slowdown_spread"] < rnd["slowdown_spread"]
    assert bf["mean_slowdown"] < ff["mean_slowdown"] < rnd["mean_slowdown"]
    assert bf["goodput_utilisation"] >= ff["goodput_utilisation"]


def test_memory_tp_philly_jobs_rarely_need_tp():
    """Memory-derived TP on the first 8,000 Philly jobs: few jobs need TP > 1 (a model
    that fits gets TP 1), best fit still splits none, and node packing, which keeps a job
    of one node's GPUs on one node, splits no more TP jobs than first-fit."""
    cluster = load_cluster_spec("gb200-nvl72-superpod")
    cluster = scale_cluster(cluster, None).cluster
    trace = load_trace("philly", TraceRules(cluster.accelerators)).head(8000)
    memory = schedule(cluster, trace, ["first-fit", "node-pack", "best-fit"], seed=0)
    uniform = schedule(cluster, trace, ["best-fit"], seed=0,
                       options=EngineOptions(shapes="uniform-tp"))
    ff, npk, bf = (memory.policy(p) for p in ("first-fit", "node-pack", "best-fit"))
    assert bf["tp_jobs"] < uniform.policy("best-fit")["tp_jobs"]
    assert bf["tp_crossing_share"] == 0.0
    assert npk["tp_crossing_jobs"] <= ff["tp_crossing_jobs"]
    assert bf["mean_slowdown"] <= min(ff["mean_slowdown"], npk["mean_slowdown"])

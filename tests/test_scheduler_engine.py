"""The event engine: work conservation, capacity, determinism, checkpoint-boundary stops."""

from __future__ import annotations

import json

import numpy as np
import pytest

from supernode.cluster.load import load_cluster
from supernode.scheduler import (
    EngineOptions,
    SyntheticSpec,
    build_hierarchy,
    schedule,
    synthetic_trace,
)
from supernode.scheduler.engine import Simulation
from supernode.scheduler.policies import POLICIES
from supernode.scheduler.run import job_table
from supernode.scheduler.slowdown import SlowdownModel
from supernode.scheduler.state import Occupancy

CLUSTER = load_cluster("gb200-nvl72-superpod")
HIERARCHY = build_hierarchy(CLUSTER)
SLOWDOWNS = SlowdownModel(CLUSTER, HIERARCHY)
#: A busy synthetic trace: arrivals offer 1.3x the cluster, many multi-GPU jobs.
TRACE = synthetic_trace(SyntheticSpec(jobs=500, load=1.3, size_law="pow2", max_gpus=64,
                                      median_duration_s=3600, duration_sigma=1.0),
                        CLUSTER.accelerators, seed=5)
JOBS = job_table(TRACE, CLUSTER, seed=5)
OPTIONS = EngineOptions(checkpoint_interval_s=900.0, preempt_after_s=300.0, restart_s=120.0)


def _run(policy: str, options: EngineOptions = OPTIONS, seed: int = 1):
    sim = Simulation(JOBS, Occupancy(HIERARCHY), POLICIES.create(policy), SLOWDOWNS,
                     options, seed)
    return sim.run()


@pytest.fixture(scope="module")
def records():
    return {name: _run(name) for name in POLICIES.names()}


def test_every_job_runs_to_the_end_after_it_arrives(records):
    for rec in records.values():
        assert not np.isnan(rec.end_s).any()
        assert (rec.first_start_s >= JOBS.submit_s - 1e-9).all()
        assert (rec.end_s >= rec.first_start_s).all()


def test_work_is_conserved(records):
    """Each job's segments, at ideal speed, add up to its run time plus one restart per
    pre-emption (stops happen at checkpoints: no work is lost beyond the restart)."""
    for rec in records.values():
        seg = rec.segments
        ideal = np.bincount(seg["job"], weights=(seg["end_s"] - seg["start_s"]) /
                            seg["slowdown"], minlength=len(JOBS))
        expected = JOBS.duration_s + rec.preemptions * OPTIONS.restart_s
        np.testing.assert_allclose(ideal, expected, rtol=1e-9, atol=1e-6)


def test_never_more_gpus_than_the_cluster(records):
    for rec in records.values():
        busy = rec.timeline["busy_gpus"]
        assert busy.min() >= 0 and busy.max() <= CLUSTER.accelerators


def test_no_placement_beats_the_ideal_one(records):
    """Slowdowns are ≥ 1: best fit on an empty cluster is the fastest class the step model
    sees, for every policy's placements."""
    for rec in records.values():
        assert rec.segments["slowdown"].min() >= 1.0 - 1e-9


def test_only_the_preempting_policy_preempts_and_only_at_checkpoints(records):
    for name, rec in records.items():
        seg = rec.segments
        stopped = ~seg["finished"]
        if name != "preempt":
            assert rec.preemptions.sum() == 0 and not stopped.any()
            continue
        assert rec.preemptions.sum() > 0
        elapsed = (seg["end_s"] - seg["start_s"])[stopped] / OPTIONS.checkpoint_interval_s
        np.testing.assert_allclose(elapsed, np.round(elapsed), atol=1e-6)
        assert (np.round(elapsed) >= 1).all()
        assert (JOBS.priority[seg["job"][stopped]] == 0).all()      # only low priority stops
        assert rec.immediate_loss_gpu_s > 0


def _without_timing(result: dict) -> str:
    for p in result["policies"]:
        p.pop("wall_time_s")
        p.pop("cpu_time_s")
    return json.dumps(result, sort_keys=True)


def test_same_seed_same_result_and_seeds_matter():
    """Identical output for the same inputs and seed (the measured wall time aside)."""
    a = schedule(CLUSTER, TRACE.head(200), ["random", "best-fit"], seed=3).to_dict()
    b = schedule(CLUSTER, TRACE.head(200), ["random", "best-fit"], seed=3).to_dict()
    assert _without_timing(a) == _without_timing(b)
    c = schedule(CLUSTER, TRACE.head(200), ["random"], seed=4).to_dict()
    assert c["policies"][0]["mean_slowdown"] != a["policies"][0]["mean_slowdown"]


def test_a_policy_result_does_not_depend_on_the_others():
    alone = schedule(CLUSTER, TRACE.head(150), ["random"], seed=2).policy("random")
    together = schedule(CLUSTER, TRACE.head(150), ["best-fit", "random"], seed=2).policy("random")
    for key in ("utilisation", "mean_queue_s", "tp_crossing_share", "slowdown_spread"):
        assert alone[key] == together[key]


def test_without_stretch_goodput_equals_utilisation():
    result = schedule(CLUSTER, TRACE.head(150), ["random"], seed=2,
                      options=EngineOptions(stretch=False))
    p = result.policy("random")
    assert p["goodput_utilisation"] == pytest.approx(p["utilisation"])
    stretched = schedule(CLUSTER, TRACE.head(150), ["random"], seed=2).policy("random")
    assert stretched["goodput_utilisation"] < stretched["utilisation"]


def test_json_keys_of_every_policy():
    result = schedule(CLUSTER, TRACE.head(60), seed=0).to_dict()
    assert [p["policy"] for p in result["policies"]] == POLICIES.names()
    for p in result["policies"]:
        for key in ("policy", "utilisation", "mean_queue_s", "fragmentation",
                    "tp_crossing_share", "slowdown_spread", "goodput_utilisation",
                    "mean_slowdown", "preemptions"):
            assert key in p
        assert 0.0 <= p["utilisation"] <= 1.0 and 0.0 <= p["fragmentation"] <= 1.0
    json.dumps(result, allow_nan=False)


def test_policies_in_processes_give_the_same_result():
    one = schedule(CLUSTER, TRACE.head(120), ["random", "best-fit", "preempt"], seed=9)
    two = schedule(CLUSTER, TRACE.head(120), ["random", "best-fit", "preempt"], seed=9,
                   workers=2)
    assert _without_timing(one.to_dict()) == _without_timing(two.to_dict())


def test_parking_blocked_preemptors_changes_nothing(monkeypatch):
    """A job that found no victims is parked until the running set changes instead of
    re-checked every ``preempt_after_s``: the record is the same as re-checking always."""
    parked = _run("preempt")
    import supernode.scheduler.preempt as preempt

    monkeypatch.setattr(preempt, "_candidates", lambda sim, j: 10**9)  # never park
    always = _run("preempt")
    assert parked.preemptions.sum() > 0
    np.testing.assert_array_equal(parked.end_s, always.end_s)
    np.testing.assert_array_equal(parked.preemptions, always.preemptions)
    for key in parked.segments:
        np.testing.assert_array_equal(parked.segments[key], always.segments[key])

"""The scheduling stage of supernode design: the trace scaled to the cluster (offered load
against a timeline integral, the Philly sample, the synthetic fallback), seeded replays,
the topology-blind scheduling rule on its own facts, and decision D7."""

from __future__ import annotations

import copy
import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from supernode.cluster.load import load_cluster
from supernode.design import cache, example
from supernode.design.scheduling import (
    DESIGN_LOAD,
    MAX_CAPPED_SHARE,
    _philly,
    design_jobs,
    design_trace,
    offered_load,
    placement_record,
    run_scheduling,
    scale_to_load,
)
from supernode.rules import RULES, Facts, load_pack
from supernode.rules.pack import settings as rule_settings
from supernode.scheduler import Trace

RULE = "topology_blind_scheduling"


def _trace(submit, duration, gpus) -> Trace:
    n = len(submit)
    minus = np.full(n, -1, dtype=np.int64)
    return Trace("t", "supernode", np.asarray(submit, float), np.asarray(duration, float),
                 np.asarray(gpus, np.int64), np.zeros(n, np.int64), minus, minus.copy(),
                 np.arange(n, dtype=np.int64))


def _integral_load(trace: Trace, cluster_gpus: int, points: int = 200_001) -> float:
    """Offered load by integrating the GPUs busy on a fine grid over the arrival window
    (each job from its arrival for its run time), the other way of computing it."""
    t0, t1 = trace.submit_s[0], trace.submit_s[-1]
    grid = np.linspace(t0, t1, points)
    busy = np.zeros(points)
    for s, d, g in zip(trace.submit_s, trace.duration_s, trace.gpus, strict=True):
        busy += g * ((grid >= s) & (grid < s + d))
    return float(busy.mean() / cluster_gpus)


def test_offered_load_is_the_integral_of_busy_gpus():
    rng = np.random.default_rng(5)
    submit = np.sort(rng.uniform(0, 1e4, 60))
    trace = _trace(submit - submit[0], rng.lognormal(6, 1.5, 60), rng.integers(1, 9, 60))
    for factor in (0.1, 1.0, 7.0):
        scaled = dataclasses.replace(trace, submit_s=trace.submit_s * factor)
        closed = offered_load(trace.submit_s, trace.duration_s, trace.gpus, 32, factor)
        assert closed == pytest.approx(_integral_load(scaled, 32), rel=2e-3)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 1e5), st.floats(1, 1e5), st.integers(1, 64)),
                min_size=3, max_size=40),
       st.integers(8, 4096), st.floats(0.05, 0.95))
def test_scale_to_load_reaches_the_load_and_keeps_the_jobs(rows, gpus, load):
    rows.sort()
    trace = _trace(*zip(*rows, strict=True))
    if trace.submit_s[-1] - trace.submit_s[0] <= 0:
        return
    scaled, factor, reached = scale_to_load(trace, gpus, load)
    assert factor > 0 and reached <= load
    assert np.array_equal(scaled.duration_s, trace.duration_s)
    assert np.array_equal(scaled.gpus, trace.gpus)
    assert np.all(np.diff(scaled.submit_s) >= 0) and scaled.submit_s[0] == 0
    assert np.allclose(scaled.submit_s, (trace.submit_s - trace.submit_s[0]) * factor)
    got = offered_load(trace.submit_s, trace.duration_s, trace.gpus, gpus, factor)
    assert got == pytest.approx(reached, rel=1e-6)


def test_the_flawed_cluster_replays_philly_thinned_capped_and_scaled():
    cluster = load_cluster(str(example("flawed").cluster))
    trace, source = design_trace(cluster, seed=0)
    full = _philly()
    assert source["kind"] == "philly" and len(trace) == source["jobs"] == design_jobs(256)
    assert design_jobs(256) == 2_000 and design_jobs(1_152) == 4_608
    assert design_jobs(10**6) == 16_000
    # evenly thinned in submit order: first and last jobs of the trace are kept
    assert trace.duration_s[0] == full.duration_s[0]
    assert trace.duration_s[-1] == full.duration_s[-1]
    assert trace.gpus.max() <= 256 and source["philly_capped_gpu_seconds_share"] == 0.0
    assert source["load"] == pytest.approx(DESIGN_LOAD, rel=1e-9)
    assert offered_load(trace.submit_s, trace.duration_s, trace.gpus, 256, 1.0) == \
        pytest.approx(DESIGN_LOAD, rel=1e-6)
    assert source["window_s"] == pytest.approx(
        (full.submit_s[-1] - full.submit_s[0]) * source["time_factor"])


def test_a_cluster_smaller_than_the_large_jobs_replays_a_synthetic_trace():
    # one 8-GPU server: capping Philly's 16-128-GPU jobs at 8 would remove more than 5 %
    # of its GPU-seconds, so the review draws power-of-two jobs of at most 8 GPUs
    cluster = load_cluster("hgx-h100")
    trace, source = design_trace(cluster, seed=3)
    assert source["philly_capped_gpu_seconds_share"] > MAX_CAPPED_SHARE
    assert source["kind"] == "synthetic" and trace.name == "synthetic-pow2"
    assert set(np.unique(trace.gpus)) <= {1, 2, 4, 8}
    assert source["load"] == pytest.approx(DESIGN_LOAD, rel=1e-9)
    again, _ = design_trace(cluster, seed=3)
    other, _ = design_trace(cluster, seed=4)
    assert np.array_equal(again.gpus, trace.gpus) and not np.array_equal(other.gpus,
                                                                         trace.gpus)


def _without_timing(data: dict) -> dict:
    for p in data["schedule"]["policies"]:
        p.pop("wall_time_s")
        p.pop("cpu_time_s")
    return data


@pytest.fixture(scope="module")
def flawed_runs():
    cluster = load_cluster(str(example("flawed").cluster))
    runs = []
    for seed in (3, 3, 4):
        cache.clear()  # each replay computed, not memoised
        runs.append(run_scheduling(cluster, seed)[0])
    return cluster, runs


def test_same_seed_same_replay_other_seed_other_shapes(flawed_runs):
    _, (a, b, c) = flawed_runs
    assert _without_timing(copy.deepcopy(a)) == _without_timing(copy.deepcopy(b))
    assert a["schedule"]["seed"] == 3 and c["schedule"]["seed"] == 4
    assert a["schedule"]["shapes"] != c["schedule"]["shapes"]
    assert [p["policy"] for p in a["schedule"]["policies"]] == [
        "random", "first-fit", "best-fit", "slurm-block"]
    assert [p["kind"] for p in a["policies"]] == ["topology-blind"] * 2 + ["topology-aware"] * 2
    q = a["slowdown_quantiles"]
    for values in q["by_policy"].values():
        assert len(values) == len(q["q"]) and values == sorted(values) and values[0] >= 1.0


def _facts(cluster, scheduling, artefacts=None) -> Facts:
    return Facts(cluster=cluster, workload={}, topology={}, facility={}, scheduling=scheduling,
                 artefacts=artefacts)


def test_rule_on_its_own_facts(flawed_runs):
    cluster, (sch, _, _) = flawed_runs
    rule = RULES[RULE]
    blind, aware = (sch["schedule"]["policies"][sch["comparison"][k]]
                    for k in ("blind_index", "aware_index"))
    out = rule.evaluate(_facts(cluster, sch), 0.05)
    assert out.status == "fail" and out.measured == blind["slowdown_spread"] > 0.05
    assert out.predicted_value == aware["slowdown_spread"]
    assert "supernode export --format all" in out.fix  # no artefacts listed: the command
    artefacts = {"files": [{"path": "exports/volcano/volcano-hypernodes.yaml",
                            "format": "volcano"},
                           {"path": "exports/slurm-tree/topology.conf", "format": "slurm-tree"},
                           {"path": "exports/nccl-xml/n.xml", "format": "nccl-xml"}]}
    out = rule.evaluate(_facts(cluster, sch, artefacts), 0.05)
    assert "Slurm: exports/slurm-tree/topology.conf" in out.fix
    assert "Kubernetes: exports/volcano/volcano-hypernodes.yaml" in out.fix
    assert "n.xml" not in out.fix
    relaxed = rule.evaluate(_facts(cluster, sch), blind["slowdown_spread"])
    assert relaxed.status == "pass" and relaxed.fix is None
    assert rule.evaluate(_facts(cluster, None), 0.05).status == "not_evaluated"
    single = load_cluster("gb200-nvl72")
    assert rule.evaluate(_facts(single, sch), 0.05).status == "not_applicable"


def test_rule_threshold_lives_in_the_pack_and_a_pack_overrides_it(tmp_path):
    assert rule_settings()[RULE].threshold == 0.05
    assert rule_settings()[RULE].severity == "warning"
    pack = tmp_path / "p.yaml"
    pack.write_text(f"rules:\n  {RULE}: {{threshold: 0.25, severity: error}}\n")
    assert rule_settings(load_pack(pack))[RULE].threshold == 0.25


def test_placement_decision_picks_the_aware_policy_with_the_best_goodput(flawed_runs):
    _, (sch, _, _) = flawed_runs
    data = {"scheduling": sch, "findings": [], "cluster": {"accelerators": 256,
                                                          "supernodes": 64},
            "artefacts": {"files": [{"group": "exports", "path": "exports/kueue/k.yaml"},
                                    {"group": "exports", "path": "exports/k8s-labels/l.sh"}]}}
    d7 = placement_record(data)
    chosen = [o for o in d7["options"] if o["chosen"]]
    aware = [p for p, k in zip(sch["schedule"]["policies"], sch["policies"], strict=True)
             if k["kind"] == "topology-aware"]
    best = max(aware, key=lambda p: p["goodput_utilisation"])
    assert d7["id"] == "D7" and len(chosen) == 1 and chosen[0]["name"].startswith(
        best["policy"])
    goodput = {f["label"]: f["value"] for f in chosen[0]["figures"]}["useful GPU share"]
    assert goodput == best["goodput_utilisation"]
    assert "exports/kueue/k.yaml" in d7["consequences"][-1]
    assert "l.sh" not in d7["consequences"][-1]
    assert placement_record({"scheduling": None}) is None


def test_the_replay_is_memoised_per_cluster_and_seed_as_copies(flawed_runs):
    cluster, (a, _, c) = flawed_runs  # seed 3 evicted nothing: seed 4 ran last
    first = run_scheduling(cluster, 4)[0]
    assert first == c and first is not c  # the stored result, as a fresh copy
    first["schedule"]["policies"].clear()
    assert run_scheduling(cluster, 4)[0] == c  # changing a copy changes no later result
    calls = []
    for _ in range(2):
        cache.memoised("test", ("k", 1), lambda: calls.append(1) or {"x": [1]})
    assert calls == [1]
    for i in range(cache.SIZE + 1):
        cache.memoised("test", ("n", i), dict)
    cache.memoised("test", ("k", 1), lambda: calls.append(1) or {"x": [1]})
    assert calls == [1, 1]  # the oldest entry was dropped


def test_the_replay_run_beside_equals_the_one_run_here_and_is_remembered(flawed_runs):
    """Started in a forked child (as ``design`` does), the replay is the one computed in
    this process (timings aside), and this process remembers it afterwards."""
    import os

    from supernode.design.pipeline import DesignInput, _scheduling_beside
    from supernode.design.scheduling import scheduling_remembered

    cluster, (_, _, here) = flawed_runs
    cache.clear()
    with _scheduling_beside(cluster, DesignInput("c", "w", seed=4, workers=1)) as inline:
        assert inline is None  # one process: the replay runs in its stage
    with _scheduling_beside(cluster, DesignInput("c", "w", seed=4)) as beside:
        assert beside is not None and beside._children[0][0] != os.getpid()
        got = run_scheduling(cluster, 4, beside)[0]
    assert _without_timing(copy.deepcopy(got)) == _without_timing(copy.deepcopy(here))
    assert scheduling_remembered(cluster, 4)
    with _scheduling_beside(cluster, DesignInput("c", "w", seed=4)) as again:
        assert again is None  # remembered: nothing to start

"""Reliability model: published interval formulas, analytic vs Monte Carlo, rates, fleet check."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from supernode.reliability.checkpoint import daly_interval_s, young_interval_s
from supernode.reliability.goodput import daly_goodput
from supernode.reliability.interruptions import case_inventory, predict_case, rates_by_component
from supernode.reliability.montecarlo import (
    METRICS,
    RESTART,
    FailureClass,
    MonteCarloSpec,
    arrivals,
    progress_at,
    progress_clock,
    ready_times,
    simulate_runs,
)
from supernode.reliability.rates import DAY_S, default_rates, level_per_gpu_s, rates_file
from supernode.validation.harness import validate_file

DATA = Path(__file__).parent / "data" / "reliability"


def test_young_and_daly_match_the_published_formulas():
    # Young (1974): sqrt(2 C M); C = 300 s, M = 1 day -> exactly 7,200 s
    assert young_interval_s(300.0, 86_400.0) == pytest.approx(7_200.0, rel=1e-3)
    # Daly (2006) eq. 37 by hand: x = C/2M = 300/172,800
    x = 300.0 / 172_800.0
    by_hand = 7_200.0 * (1 + math.sqrt(x) / 3 + x / 9) - 300.0
    assert daly_interval_s(300.0, 86_400.0) == pytest.approx(by_hand, rel=1e-3)
    assert by_hand == pytest.approx(7_001.39, rel=1e-3)
    # C >= 2M: checkpoint every M
    assert daly_interval_s(5_000.0, 2_000.0) == 2_000.0


@given(st.floats(1.0, 3_600.0), st.floats(600.0, 1e7))
def test_daly_interval_is_near_the_numerical_optimum_of_daly_goodput(cost, mtbf):
    """Daly's higher-order interval nearly maximises his own exact wall-time model."""
    if cost >= 2 * mtbf:
        return
    grid = daly_interval_s(cost, mtbf) * np.exp(np.linspace(-1.5, 1.5, 601))
    best = max(daly_goodput(t, cost, 0.0, mtbf) for t in grid)
    assert daly_goodput(daly_interval_s(cost, mtbf), cost, 0.0, mtbf) >= best - 2e-3
    assert young_interval_s(cost, mtbf) == pytest.approx(math.sqrt(2 * cost * mtbf), rel=1e-9)


@pytest.mark.parametrize("mtbf_h,restart_s,cost_s", [(3.0, 600.0, 60.0), (24.0, 1800.0, 300.0),
                                                     (0.5, 120.0, 10.0)])
def test_monte_carlo_goodput_agrees_with_daly_within_its_error(mtbf_h, restart_s, cost_s):
    """Differential: one exponential failure class, ample spares -> Daly's exact model."""
    m = mtbf_h * 3600
    tau = daly_interval_s(cost_s, m)
    spec = MonteCarloSpec(120 * DAY_S, (FailureClass("x", 1 / m, RESTART, restart_s=restart_s),),
                          (tau / 3, tau, 3 * tau), cost_s, spare_hosts=0, seed=7)
    rows = simulate_runs(spec, 0, 200)[:, len(METRICS):]
    mean, se = rows.mean(axis=0), rows.std(axis=0, ddof=1) / math.sqrt(len(rows))
    for j, t in enumerate(spec.intervals_s):
        exact = daly_goodput(t, cost_s, restart_s, m)
        assert abs(mean[j] - exact) <= 3.5 * se[j] + 2e-4, (t, mean[j], exact, se[j])


def test_weibull_applies_per_unit_and_many_units_superpose_towards_poisson():
    """--weibull-shape is a renewal process per unit (each GPU ages on its own), not one
    for the whole job: 1,000 units of shape 0.7 superpose to gaps of CV ~1 (Poisson-like,
    the Palm-Khintchine limit), where one job-wide process gives CV > 1.2; units in
    service at random ages (stationary renewal) keep the mean rate."""
    rng = np.random.default_rng(3)
    one = np.diff(arrivals(rng, 1e-3, 1e7, 0.7))
    many = np.diff(arrivals(rng, 1e-3, 1e7, 0.7, units=1000))
    assert one.std() / one.mean() > 1.2
    assert 0.85 < many.std() / many.mean() < 1.15
    counts = [arrivals(rng, 1e-3, 1e5, 0.7, units=1000).size for _ in range(50)]
    assert np.mean(counts) == pytest.approx(1e-3 * 1e5, rel=0.05)
    assert [arrivals(np.random.default_rng(1), 1e-3, 1e6, 1.0, units=u).size
            for u in (1, 1000)] == [arrivals(np.random.default_rng(1), 1e-3, 1e6, 1.0).size] * 2


def test_a_restart_onto_a_degraded_domain_runs_slower_until_the_repair():
    """A lost NVSwitch plane stops the job, which restarts 1/18 slower until the switch tray
    is replaced (24 h): the Monte Carlo loses that time on top of the restart (before, the
    class had no speed and the restart came back at full speed)."""
    cls = FailureClass("nvswitch", 1 / (5 * DAY_S), RESTART, restart_s=600.0,
                       repair_s=24 * 3600.0, speed=1.0)
    runs = {}
    for speed in (1.0, 17 / 18):
        spec = MonteCarloSpec(60 * DAY_S, (FailureClass(**{**cls.__dict__, "speed": speed}),),
                              (1800.0,), 10.0, spare_hosts=0, seed=3)
        runs[speed] = simulate_runs(spec, 0, 40)[:, len(METRICS)].mean()
    # ~ rate x repair x (1 - speed) = 0.2 x 1 x 1/18 = 1.1 % of the time
    assert runs[1.0] - runs[17 / 18] == pytest.approx(0.2 * (1 / 18), rel=0.25)


def test_weibull_arrivals_keep_the_mean_rate_and_are_burstier():
    rng = np.random.default_rng(1)
    exp = [arrivals(rng, 1e-3, 1e6, 1.0).size for _ in range(200)]
    wei = [arrivals(rng, 1e-3, 1e6, 0.7).size for _ in range(200)]
    assert np.mean(exp) == pytest.approx(1000, rel=0.01)
    assert np.mean(wei) == pytest.approx(1000, rel=0.03)
    gaps = np.diff(arrivals(rng, 1e-3, 1e8, 0.7))
    assert gaps.std() / gaps.mean() > 1.2  # CV > 1: clustered failures


@given(st.lists(st.tuples(st.floats(0, 100), st.integers(0, 3), st.floats(0, 30)),
                min_size=1, max_size=12, unique_by=lambda e: e[0]), st.integers(0, 4))
def test_ready_times_match_a_brute_force_scan(events, spares):
    events.sort()
    t, h, r = (np.array(v, dtype=float) for v in zip(*events, strict=True))
    got = ready_times(t, h, r, spares)
    # what matters is the ready time before the next failure ends failure i's segment
    for i in range(t.size):
        def out_at(q, i=i):
            return sum(h[j] for j in range(i + 1) if t[j] <= q < t[j] + r[j])
        candidates = [t[i]] + [t[j] + r[j] for j in range(i + 1) if t[j] + r[j] >= t[i]]
        want = min((q for q in sorted(candidates) if out_at(q) <= spares), default=math.inf)
        cut = t[i + 1] if i + 1 < t.size else math.inf
        assert min(got[i], cut) == pytest.approx(min(want, cut))


@given(st.lists(st.tuples(st.floats(0, 50), st.floats(0, 20), st.floats(0, 1)),
                max_size=8), st.floats(0, 80))
def test_progress_clock_is_the_integral_of_the_product_of_speeds(windows, q):
    w = np.array([(a, a + d, s) for a, d, s in windows], dtype=float).reshape(-1, 3)
    grid = np.linspace(0, q, 4001)
    speed = np.ones_like(grid)
    for a, b, s in w:
        speed = np.where((grid >= a) & (grid < b), speed * s, speed)
    brute = np.trapezoid(speed, grid) if q > 0 else 0.0
    assert progress_at(progress_clock(w), np.array([q]))[0] == pytest.approx(brute, abs=0.05)


def test_runs_do_not_depend_on_how_they_are_split():
    spec = MonteCarloSpec(30 * DAY_S, (FailureClass("x", 1e-4, RESTART, restart_s=300,
                                                    hosts_out=1, repair_s=86_400),),
                          (3_600.0,), 10.0, spare_hosts=1, seed=3)
    whole = simulate_runs(spec, 0, 12)
    assert np.array_equal(whole, np.concatenate([simulate_runs(spec, 0, 5),
                                                 simulate_runs(spec, 5, 12)]))
    assert not np.array_equal(whole, simulate_runs(MonteCarloSpec(**{**spec.__dict__,
                                                                     "seed": 4}), 0, 12))


def test_default_rates_follow_the_data_file_arithmetic():
    data = rates_file()
    level = math.sqrt(6.50 * 2.34) / 1000 / 8 / DAY_S  # geometric mean, per GPU-second
    assert level_per_gpu_s() == pytest.approx(level)
    gpu_count = sum(c.count for c in data.mix.categories if c.component == "gpu")
    assert gpu_count == 148 + 19 + 17 + 6 + 6
    # per GPU: level x 16,384 x share / 16,384 GPUs
    assert default_rates()["gpu"].rate_per_unit_s == pytest.approx(level * gpu_count / 419)
    assert sum(c.count for c in data.mix.categories) == data.mix.total == 419


def test_llama3_54_days_from_default_rates_lands_in_the_reported_range():
    """Default component rates on 16,384 H100 for 54 days: a few hundred (419 reported)."""
    predicted, detail = predict_case({"system": {"accelerator": "h100-sxm-80gb",
                                                 "gpus": 16_384, "scale_up_gpus": 8},
                                      "duration_days": 54})
    assert 300 < predicted < 600, detail
    # the level alone spans the two RSC clusters: 2.34 .. 6.50 per 1,000 node-days
    assert 2.34e-3 * 2048 * 54 < predicted < 6.50e-3 * 2048 * 54
    cases, _ = validate_file(DATA / "llama3_interruptions.json")
    assert cases[0].status == "ok" and abs(cases[0].error_frac) < 0.10  # 440 vs 419


def test_interruptions_per_day_scale_linearly_with_gpus():
    per_gpu = []
    for gpus in (4_096, 16_384, 65_536):
        inventory, _ = case_inventory({"accelerator": "h100-sxm-80gb", "gpus": gpus})
        per_gpu.append(sum(rates_by_component(inventory).values()) / gpus)
    assert max(per_gpu) / min(per_gpu) < 1.03, per_gpu


def _moe_job(tp: int, dp: int, ep: int, etp: int | None):
    """DeepSeek-V3 on 576 GB200 (8 NVL72 racks), four pipeline stages."""
    import dataclasses

    from supernode.cluster.load import load_cluster
    from supernode.estimate.model import estimate_plan
    from supernode.estimate.system import system_from_cluster
    from supernode.reliability.degraded import Job
    from supernode.spec.plan import ParallelPlan
    from supernode.workload import load_workload

    w = load_workload("deepseek-v3")
    plan = ParallelPlan(tp=tp, pp=4, dp=dp, ep=ep, etp=etp, global_batch_sequences=1152,
                        micro_batch=1)
    system = dataclasses.replace(system_from_cluster(load_cluster("gb200-nvl72-superpod")),
                                 gpus=tp * 4 * dp)
    return Job(w, plan, system, estimate_plan(w, plan, system))


def test_shrink_drops_whole_expert_groups_and_stays_legal():
    """EP 16 with ETP 1 over TP 2: each EP block joins 8 replicas of 2 GPUs, so one lost
    GPU takes 8 replicas out (dropping 1 would leave 71 replicas, and 16 does not divide
    the stage's 142 ranks: the estimate refused it and the shrink fell back to a guess).
    The throughput left is a real estimate."""
    from supernode.reliability.degraded import (
        expert_joined_replicas,
        replicas_hit,
        shrink_speed,
    )

    job = _moe_job(tp=2, dp=72, ep=16, etp=1)
    assert expert_joined_replicas(job.plan) == 8
    hits = replicas_hit(job, 1)
    assert hits == 8 and (job.plan.dp - hits) * 2 % 16 == 0
    assert replicas_hit(job, 20) == 16  # 10 replicas touched: two whole EP blocks
    speed = shrink_speed(job, hits)
    assert 0.0 < speed < 1.0
    # dense-only view of the same job: one replica per lost group of TP ranks
    dense = _moe_job(tp=2, dp=72, ep=1, etp=None)
    assert expert_joined_replicas(dense.plan) == 1 and replicas_hit(dense, 1) == 1


@pytest.mark.parametrize("spares", [0, 1, 3])
def test_analytic_goodput_waits_for_spares_like_the_monte_carlo(spares):
    """Hardware restarts that take a host out for a day, one every 3 days: with no spare
    the job waits for each repair. The analytic goodput adds the M/G/inf repair queue's
    expected wait (before, it ignored the spare pool: 0.9976 with 0 spares on the
    gb200-nvl72-superpod preset while the Monte Carlo gave 0.6579)."""
    from supernode.reliability.recovery import RecoveryTimes
    from supernode.reliability.scenario import analytic_figures

    cls = (FailureClass("gpu", 1 / (3 * DAY_S), RESTART, restart_s=180.0, resume_s=420.0,
                        hosts_out=1, repair_s=DAY_S),)
    a = analytic_figures(cls, RecoveryTimes(), 10.0, 0.0, None, 120 * DAY_S, spares)
    spec = MonteCarloSpec(120 * DAY_S, cls, (a.interval_s,), 10.0, spare_hosts=spares, seed=5)
    mc = simulate_runs(spec, 0, 100)[:, len(METRICS)].mean()
    assert a.goodput == pytest.approx(mc, abs=0.02), (a, mc)
    if spares == 0:
        assert a.goodput < 0.8  # a day lost per 3 days, not ~0.99


def test_the_failure_level_shows_both_meta_clusters_and_moves_the_answer():
    """The default level is the geometric mean of RSC-1 6.50 and RSC-2 2.34 failures per
    1,000 node-days (Kokolis et al., HPCA 2025, arXiv:2410.21680): the result names both
    and gives the interruptions and goodput at each (before: one undisclosed figure)."""
    from supernode.cluster.load import load_cluster
    from supernode.reliability.assess import ReliabilityOptions, assess_reliability
    from supernode.spec.plan import plan_from_data
    from supernode.workload.presets import load_workload

    d = assess_reliability(load_cluster("gb200-nvl72"), load_workload("llama3-8b"),
                           plan_from_data({"tp": 8, "pp": 1, "dp": 9,
                                           "global_batch_sequences": 72}),
                           ReliabilityOptions(days=5, runs=4, what_if=False, workers=1)
                           ).to_dict()
    lv = d["level"]
    assert lv["combined"] == "geometric mean"
    assert lv["failures_per_1000_node_days"] == pytest.approx(math.sqrt(6.50 * 2.34))
    at = {r["name"]: r for r in lv["at"]}
    assert set(at) == {"default", "RSC-1", "RSC-2"}
    assert at["default"]["interruptions_per_day"] == pytest.approx(
        d["interruptions"]["interruptions_per_day"])
    assert at["RSC-2"]["interruptions_per_day"] < at["default"]["interruptions_per_day"] \
        < at["RSC-1"]["interruptions_per_day"]
    assert at["RSC-1"]["factor"] == pytest.approx(6.50 / math.sqrt(6.50 * 2.34))
    assert at["RSC-1"]["analytic_goodput"] < at["RSC-2"]["analytic_goodput"]

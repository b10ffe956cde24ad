"""Planner search: differential against the step model, mapping closed forms, invariants."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from supernode.cluster.load import load_cluster_spec
from supernode.collectives import Fabric, make_tier
from supernode.estimate.calibration import default_calibration
from supernode.estimate.comm import factored_group_fabric, group_fabric, group_stride
from supernode.estimate.model import estimate_plan
from supernode.estimate.step import Overlap, step_arrays
from supernode.planner import MEGATRON_ORDER, Layout, PlanTarget, build_target, plan_job
from supernode.planner.evaluate import grid_shape, knob_index, memory_grid, score_grid
from supernode.planner.mapping import effective_orders, group_factors, rail_aligned
from supernode.planner.report import record_detail
from supernode.planner.search import search_layouts
from supernode.planner.space import SearchSpace, enumerate_layouts, knob_axes
from supernode.spec.plan import ParallelPlan, PlanArrays

REL = 1e-9


@pytest.fixture(scope="module")
def dense():
    target, _ = build_target("dgx-h100-superpod-su", "llama3-70b", global_batch=256)
    return target


@pytest.fixture(scope="module")
def moe():
    target, _ = build_target("dgx-h100-superpod-su", "mixtral-8x7b", global_batch=256)
    return target


def _flat_time(target: PlanTarget, layout: Layout, knobs: dict) -> float:
    a = PlanArrays.from_columns(
        tp=layout.tp, pp=layout.pp, dp=layout.dp, cp=layout.cp, ep=layout.ep,
        vpp=knobs["vpp"], micro_batch=knobs["micro_batch"],
        global_batch_sequences=target.global_batch_sequences, recompute=knobs["recompute"],
        sequence_parallel=knobs["sequence_parallel"], zero_stage=knobs["zero_stage"],
        distributed_optimizer=knobs["distributed_optimizer"], etp=layout.expert_tp,
        pp_layout=knobs["pp_layout"], moe_a2a_overlap=knobs["moe_a2a_overlap"])
    overlap = Overlap(tp=knobs["overlap_tp_comm"], dp=knobs["overlap_dp_comm"],
                      pp=knobs["overlap_pp_comm"])
    return float(step_arrays(target.workload, a, target.system, default_calibration(),
                             overlap).step_time_s)


@pytest.mark.parametrize("name", ["dense", "moe"])
def test_grid_equals_step_model(name, request):
    """Differential: a plan scored inside the grid equals the step model run on it alone."""
    target = request.getfixturevalue(name)
    w, gb = target.workload, target.global_batch_sequences
    space = SearchSpace(search_orders=False)
    layouts = enumerate_layouts(w, target.gpus, gb, space, 8)
    rng = np.random.default_rng(7)
    picked = [layouts[i] for i in rng.choice(len(layouts), 8, replace=False)]
    special = [x for x in layouts if x.ep > 1 or x.cp > 1]  # exercise EP and CP groups
    picked += [special[i] for i in rng.choice(len(special), 4, replace=False)]
    cal = default_calibration()
    for layout in picked:
        axes = knob_axes(w, layout, gb, space)
        memory, legal = memory_grid(w, [layout], axes, gb, target.gpus, "bf16")
        scores = score_grid(w, [layout], axes, gb, target.system, cal, "bf16", memory, legal)
        times = np.broadcast_to(scores.step_time_s, grid_shape(1, axes)).reshape(-1)
        for flat in rng.choice(axes.size, 6, replace=False):
            knobs = knob_index(axes, int(flat))
            if not np.isfinite(times[flat]):  # all-to-all overlap needs interleaving
                assert knobs["moe_a2a_overlap"] and layout.pp > 1 and knobs["vpp"] == 1
                continue
            assert times[flat] == pytest.approx(_flat_time(target, layout, knobs), rel=REL)


def test_megatron_order_groups_equal_group_stride(dense):
    """For Megatron's order every factored group is the step model's strided group."""
    fabric = dense.system.fabric
    strides = {"tp": 1}
    for tp, cp, dp, pp, ep in [(2, 2, 8, 8, 1), (8, 1, 32, 1, 1), (4, 4, 4, 4, 2),
                               (1, 2, 64, 2, 8)]:
        layout = Layout(tp, pp, dp, cp, ep, MEGATRON_ORDER)
        a = PlanArrays.from_columns(tp=tp, pp=pp, dp=dp, cp=cp, ep=ep,
                                    global_batch_sequences=1024)
        sizes = {"tp": tp, "cp": cp, "dp": dp * cp, "ep": ep, "dp_expert": dp * cp // ep,
                 "pp": 2}
        factors = group_factors(layout)
        for dim, size in sizes.items():
            stride = int(group_stride(dim, a)) if dim not in strides else strides[dim]
            expected = group_fabric(fabric, stride, size)
            assert factored_group_fabric(fabric, factors[dim]) == expected, dim


def _fabric() -> Fabric:
    return Fabric((make_tier("scale_up", 8, 450e9, "nvlink4"),
                   make_tier("scale_out_leaf", 256, 50e9, "infiniband_ndr"),
                   make_tier("scale_out", 2048, 50e9, "infiniband_ndr")))


@settings(max_examples=40, deadline=None)
@given(stride=st.sampled_from([1, 2, 4, 8, 16, 64, 256]), size=st.sampled_from([1, 2, 4, 8]))
def test_single_factor_is_group_fabric(stride, size):
    assert factored_group_fabric(_fabric(), ((stride, size),)) == group_fabric(
        _fabric(), stride, size)


def test_non_adjacent_factors_closed_form():
    """4 ranks at stride 1 and 8 at stride 32: 4 per NVLink domain, 32 per leaf group."""
    sub = factored_group_fabric(_fabric(), ((1, 4), (32, 8)))
    assert [t.group_size for t in sub.tiers] == [4, 32]
    assert [t.name for t in sub.tiers] == ["scale_up", "scale_out_leaf"]
    assert rail_aligned(((1, 4), (32, 8)), 8) and not rail_aligned(((4, 4),), 8)


def test_orders_are_distinct_and_megatron_first():
    orders = effective_orders(8, 2, 4, 2)
    assert len(orders) == 6 and orders[0] == MEGATRON_ORDER
    assert effective_orders(8, 1, 4, 1) == [("tp", "dp", "cp", "pp")]


def test_detail_matches_search_record(dense):
    outcome = search_layouts(dense)
    for record in outcome.ranked[:5]:
        detail = record_detail(dense, record, default_calibration())
        assert detail.step_time_s == pytest.approx(record.step_time_s, rel=1e-12)
        assert sum(detail.breakdown_s.values()) == pytest.approx(detail.step_time_s)


def test_top_plan_equals_public_estimate(dense):
    """Differential: the planner's winner, fully specified, through `estimate_plan`."""
    best = plan_job(dense, top=1).plans[0]
    x, k = best.layout, best.knobs
    plan = ParallelPlan(tp=x.tp, pp=x.pp, dp=x.dp, cp=x.cp, ep=x.ep, vpp=k["vpp"],
                        micro_batch=k["micro_batch"], recompute=k["recompute"],
                        sequence_parallel=k["sequence_parallel"], zero_stage=k["zero_stage"],
                        distributed_optimizer=k["distributed_optimizer"],
                        overlap_tp_comm=k["overlap_tp_comm"],
                        overlap_dp_comm=k["overlap_dp_comm"],
                        overlap_pp_comm=k["overlap_pp_comm"], pp_layout=k["pp_layout"],
                        moe_a2a_overlap=k["moe_a2a_overlap"], etp=x.expert_tp,
                        rank_order="-".join(x.order),
                        global_batch_sequences=dense.global_batch_sequences)
    ref = estimate_plan(dense.workload, plan, dense.system)  # any rank order: --rank-order
    assert ref.step_time_s == pytest.approx(best.step_time_s, rel=REL)
    assert ref.memory_per_gpu_bytes["total"] == pytest.approx(
        best.memory_per_gpu_bytes["total"], rel=REL)


def assert_ranked_by_class(plans) -> None:
    """By step time, straddling plans that do not win by the margin after the rest."""
    demoted = [bool(p.rank_note and p.rank_note.startswith("ranked after")) for p in plans]
    assert demoted == sorted(demoted)
    for part in (False, True):
        times = [p.step_time_s for p, d in zip(plans, demoted, strict=True) if d == part]
        assert times == sorted(times)


def test_ranked_plans_are_sorted_fit_and_inside_domain(moe):
    report = plan_job(moe, top=5)
    assert_ranked_by_class(report.plans)
    for p in report.plans:
        assert p.fits_in_memory and not p.tp_crosses_domain
    keys = {(p.layout.tp, p.layout.pp, p.layout.dp, p.layout.cp, p.layout.ep)
            for p in report.plans}
    assert len(keys) == len(report.plans)  # distinct layouts
    stats = report.outcome.stats
    assert stats.candidates_evaluated >= stats.legal_candidates > 0


def test_energy_objective_ranks_by_energy(dense):
    report = plan_job(dense, objective="energy", top=4)
    energy = [p.energy_per_token_j for p in report.plans]
    assert energy == sorted(energy)


def test_search_never_mutates_inputs():
    spec = load_cluster_spec("dgx-h100-superpod-su")
    before = spec.model_dump()
    target, _ = build_target(spec, "llama3-8b", gpus=512)
    system_before = target.system
    plan_job(target, top=1)
    assert spec.model_dump() == before and target.system == system_before
    assert spec.supernodes == 32


def _outcome_fields(outcome) -> list[tuple]:
    return [(r.layout, r.axes, r.tp_crosses_domain, r.least_memory_bytes,
             r.least_memory_index, r.best_index, r.objective, r.step_time_s)
            for r in outcome.records]


@pytest.mark.parametrize(("name", "objective"), [("dense", "time"), ("moe", "energy")])
def test_the_search_on_forked_workers_equals_the_search_in_one_process(name, objective,
                                                                      request):
    """Differential: 1, 2 and 3 processes give the same records (bit for bit), ranking
    and counts; the work is shared (several units, every worker used)."""
    target = request.getfixturevalue(name)
    one = search_layouts(target, objective, workers=1)
    assert one.stats.workers == 1
    for workers in (2, 3):
        many = search_layouts(target, objective, workers=workers)
        assert many.stats.workers == workers
        assert _outcome_fields(many) == _outcome_fields(one)
        assert [r.layout for r in many.ranked] == [r.layout for r in one.ranked]
        for count in ("layouts_considered", "layouts_pruned_by_memory",
                      "candidates_evaluated", "candidates_pruned_by_memory",
                      "legal_candidates"):
            assert getattr(many.stats, count) == getattr(one.stats, count), count


def test_search_workers_grow_with_the_grid_and_stop_at_the_cores(monkeypatch) -> None:
    from supernode.planner import work_shares as search

    monkeypatch.setattr(search.os, "sched_getaffinity", lambda _pid: {0, 1, 2, 3, 4, 5},
                        raising=False)
    per = search.POINTS_PER_WORKER
    assert search.search_workers(per - 1) == 1
    assert search.search_workers(2 * per) == 2
    assert search.search_workers(100 * per) == min(6, search.MAX_WORKERS)
    monkeypatch.setattr(search.os, "sched_getaffinity", lambda _pid: {0}, raising=False)
    assert search.search_workers(100 * per) == 1


def test_shares_balance_the_units_and_keep_search_order() -> None:
    from supernode.planner.space import KnobAxes
    from supernode.planner.work_shares import UNIT_COST_POINTS
    from supernode.planner.work_shares import shares_of as _shares

    axes = KnobAxes((1,), ("none",), (False,), (1,), ((0, False),), (True,))
    sizes = [50_000, 400_000, 10, 10, 300_000, 120_000, 80_000]
    units = [(axes, [None] * n) for n in sizes]
    shares = _shares(units, 2)
    assert sorted(i for share in shares for i in share) == list(range(len(sizes)))
    assert all(share == sorted(share) for share in shares)
    loads = [sum(sizes[i] + UNIT_COST_POINTS for i in share) for share in shares]
    assert max(loads) - min(loads) <= max(sizes) + UNIT_COST_POINTS
    assert _shares(units[:1], 3) == [[0]]  # workers without a unit are dropped


def test_a_search_that_cannot_fork_counts_one_process(dense) -> None:
    """Asked for 2 workers from a thread other than the main one (no fork there), the
    search runs here, says so, and gives the same records."""
    import threading

    box = {}
    thread = threading.Thread(target=lambda: box.setdefault(
        "outcome", search_layouts(dense, workers=2)))
    thread.start()
    thread.join()
    assert box["outcome"].stats.workers == 1
    assert _outcome_fields(box["outcome"]) == _outcome_fields(search_layouts(dense, workers=1))

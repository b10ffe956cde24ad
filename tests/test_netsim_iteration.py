"""One training iteration: against the analytic estimate, aggregation vs per-flow,
determinism, pipeline schedules, interference between jobs, and degraded fabrics."""

from __future__ import annotations

import numpy as np
import pytest
from test_netsim_support import domain_cluster, fat_tree_cluster

from supernode.netsim.scenario import JobInput, SimOptions, simulate_jobs
from supernode.netsim.schedule import device_order
from supernode.spec.plan import plan_from_data
from supernode.workload.presets import load_workload

CLUSTER = domain_cluster(8, gpus=4)  # 32 GPUs, 4 per NVSwitch domain, 4 rails
LLAMA = load_workload("llama3-8b")


def job(plan: dict, gpus: int = 32, name: str = "j", first: int = 0,
        workload=LLAMA) -> JobInput:
    return JobInput(name, workload, plan_from_data(plan), np.arange(first, first + gpus))


PLANS = [
    {"tp": 4, "pp": 2, "dp": 4, "global_batch_sequences": 16},
    {"tp": 4, "pp": 2, "dp": 4, "global_batch_sequences": 16, "vpp": 1, "micro_batch": 1},
    {"tp": 4, "pp": 1, "dp": 8, "global_batch_sequences": 16, "zero_stage": 1},
    {"tp": 2, "pp": 2, "dp": 4, "cp": 2, "global_batch_sequences": 8,
     "distributed_optimizer": True},
]


@pytest.mark.parametrize("plan", PLANS)
def test_idle_fabric_is_close_to_the_estimate(plan: dict) -> None:
    r = simulate_jobs(CLUSTER, [job(plan)])
    ratio = r.step_time_s / r.estimate_step_time_s
    assert 0.85 < ratio < 1.25, ratio


@pytest.mark.parametrize("plan", PLANS[:3])
def test_aggregated_equals_per_flow_on_a_symmetric_fabric(plan: dict) -> None:
    agg = simulate_jobs(CLUSTER, [job(plan)])
    flow = simulate_jobs(CLUSTER, [job(plan)], options=SimOptions(aggregate=False))
    assert agg.step_time_s == pytest.approx(flow.step_time_s, rel=1e-9)
    assert agg.tables.classes < flow.tables.classes
    step = simulate_jobs(CLUSTER, [job(plan)], options=SimOptions(aggregate=False,
                                                                   mode="step"))
    assert agg.step_time_s == pytest.approx(step.step_time_s, rel=0.01)


def test_results_identical_per_seed() -> None:
    a = simulate_jobs(CLUSTER, [job(PLANS[0])], options=SimOptions(seed=3)).to_dict()
    b = simulate_jobs(CLUSTER, [job(PLANS[0])], options=SimOptions(seed=3)).to_dict()
    a.pop("wall_time_s"), b.pop("wall_time_s")
    assert a == b


def test_one_f_one_b_order() -> None:
    order = device_order(0, 4, 1, 8)
    assert [op.kind for op in order[:5]] == ["F", "F", "F", "F", "B"]
    assert sum(op.kind == "F" for op in order) == 8
    last = device_order(3, 4, 1, 8)
    assert [op.kind for op in last[:4]] == ["F", "B", "F", "B"]
    interleaved = device_order(0, 2, 2, 4)
    assert {op.stage for op in interleaved} == {0, 2} and len(interleaved) == 16


def test_moe_all_to_all_suffers_from_oversubscription() -> None:
    mixtral = load_workload("mixtral-8x7b")
    plan = {"tp": 1, "pp": 1, "dp": 32, "ep": 8, "global_batch_sequences": 32,
            "micro_batch": 1, "recompute": "full"}
    times, a2a = {}, {}
    for over in (1.0, 2.0):  # 8-port leaves: 4 down / 4 up, or 5 down / 3 up at 2:1
        cluster = fat_tree_cluster(32, oversubscription=over, radix=8)
        r = simulate_jobs(cluster, [job(plan, workload=mixtral)])
        times[over] = r.step_time_s
        a2a[over] = r.tables.collectives["j: ep all_to_all"]["mean_s"]
    assert a2a[2.0] > 1.15 * a2a[1.0]
    assert times[2.0] > times[1.0] * 1.02


def test_two_jobs_interfere_on_shared_uplinks() -> None:
    cluster = fat_tree_cluster(32, oversubscription=2.0, radix=8)
    plan = {"tp": 1, "pp": 1, "dp": 16, "global_batch_sequences": 16, "micro_batch": 1,
            "recompute": "full", "zero_stage": 0, "grad_reduce_in_fp32": True}
    # interleaved placement: both jobs span every leaf
    a = JobInput("a", LLAMA, plan_from_data(plan), np.arange(0, 32, 2))
    b = JobInput("b", LLAMA, plan_from_data(plan), np.arange(1, 32, 2))
    alone = simulate_jobs(cluster, [a]).step_time_s
    both = simulate_jobs(cluster, [a, b])
    assert {j["name"] for j in both.jobs} == {"a", "b"}
    assert both.jobs[0]["step_time_s"] > alone * 1.01


def test_nvswitch_plane_down_slows_tensor_parallelism() -> None:
    plan = {"tp": 4, "pp": 1, "dp": 8, "global_batch_sequences": 16}
    healthy = simulate_jobs(CLUSTER, [job(plan)])
    degraded = simulate_jobs(CLUSTER, [job(plan)], failures=("switch:scale_up_l1/0/2",))
    assert degraded.step_time_s > healthy.step_time_s
    assert degraded.failures == ["switch:scale_up_l1/0/2"]


def test_leaf_down_reroutes_and_reports_hot_links() -> None:
    plan = {"tp": 4, "pp": 2, "dp": 4, "global_batch_sequences": 16}
    r = simulate_jobs(CLUSTER, [job(plan)], failures=("switch:leaf/1",))
    assert np.isfinite(r.step_time_s)
    assert all(not row["link"].startswith("leaf/1->") for row in r.tables.hot_links)
    d = r.to_dict()
    assert d["hot_links"] and {"tier", "utilization", "flows"} <= set(d["hot_links"][0])


def test_rank_order_of_a_planner_layout_is_honoured() -> None:
    from supernode.netsim.plans import reorder

    plan = plan_from_data({"tp": 2, "pp": 2, "dp": 2, "global_batch_sequences": 4})
    accs = np.arange(100, 108)
    assert np.array_equal(reorder(accs, plan, ("tp", "cp", "dp", "pp")), accs)
    # order tp -> pp -> dp: position t + 2 (s + 2 d); Megatron rank t + 2 (d + 2 s)
    out = reorder(accs, plan, ("tp", "pp", "dp", "cp"))
    assert out.tolist() == [100, 101, 104, 105, 102, 103, 106, 107]

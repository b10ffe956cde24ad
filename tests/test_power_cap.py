"""Power caps (DVFS): the clock curve against its cited measurements, the step and energy
invariants, and the cap's inputs (``--power-limit-w``, ``host.accelerator_power_limit_w``,
the validation format's ``system.power_limit_w``).

* golden: the generic DVFS curve's sustained clock at each measured power limit of the
  Zeus NSDI'23 trace (``data/catalog/power.yaml``) within 12 % (RMS within 6 %);
* a power cap never speeds a step; a higher cap never slows it; a cap at or above TDP
  changes nothing;
* a capped part running at clock f uses no more energy per token than the uncapped part
  locked at that clock f (same rates, so the same step; board power no higher).
"""

from __future__ import annotations

import json
import math
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_estimate_properties import CLUSTERS, legal_plans
from typer.testing import CliRunner

from supernode.catalog.power import (
    board_power_w,
    clock_at_cap,
    locked_clock_power_w,
    power_assumptions,
    sustained_clock_ratio,
)
from supernode.cluster.load import load_cluster, load_cluster_spec
from supernode.cluster.resolve import resolve_cluster
from supernode.commands import app, register_all
from supernode.errors import InputError
from supernode.estimate.energy import busy_seconds
from supernode.estimate.model import estimate_plan
from supernode.estimate.system import system_from_cluster, system_from_validation


@pytest.fixture(scope="module")
def systems():
    return {name: system_from_cluster(load_cluster(name)) for name in CLUSTERS}


def test_clock_curve_matches_the_cited_measurements() -> None:
    curve = power_assumptions().dvfs
    errors = [clock_at_cap(cap) / measured - 1
              for points in curve.measured.values() for cap, measured in points]
    assert len(errors) == 10
    assert max(abs(e) for e in errors) <= 0.12
    assert math.sqrt(sum(e * e for e in errors) / len(errors)) <= 0.06
    # the curve and its inverse agree, and the uncapped part runs at full clock
    for x in (0.55, 0.8, 0.95):
        busy, _ = locked_clock_power_w(700.0, x)
        assert clock_at_cap(busy / 700.0) == pytest.approx(x)
    assert sustained_clock_ratio(700.0, None) == sustained_clock_ratio(700.0, 700.0) == 1.0
    assert sustained_clock_ratio(700.0, 900.0) == 1.0


def test_cap_below_the_curve_is_refused() -> None:
    with pytest.raises(InputError) as e:
        sustained_clock_ratio(700.0, 300.0, "system.power_limit_w")
    assert e.value.path == "system.power_limit_w" and "350 W" in str(e.value)
    with pytest.raises(InputError, match="publishes no TDP"):
        sustained_clock_ratio(None, 150.0)


def _energy_per_token(system, est, busy_w: float, waiting_w: float) -> float:
    busy = busy_seconds(est.breakdown_s)
    tokens = est.tokens_per_s * est.step_time_s
    return system.gpus * (busy_w * busy + waiting_w * (est.step_time_s - busy)) / tokens


@settings(max_examples=25, deadline=None)
@given(case=legal_plans(), share=st.floats(0.5, 1.3), more=st.floats(0.0, 0.3))
def test_a_cap_never_speeds_a_step_nor_raises_energy_at_the_same_clock(
        systems, case, share: float, more: float) -> None:
    w, cluster, plan = case
    system = systems[cluster]
    tdp = float(system.tdp_w or 0)
    free = estimate_plan(w, plan, system)
    capped_system = system.at_power_limit(share * tdp)
    capped = estimate_plan(w, plan, capped_system)
    higher = estimate_plan(w, plan, system.at_power_limit(min(share + more, 1.3) * tdp))
    assert capped.step_time_s >= free.step_time_s * (1 - 1e-12)
    assert higher.step_time_s <= capped.step_time_s * (1 + 1e-12)
    # the uncapped part locked at the capped clock: the same rates, TDP-curve power
    x = capped_system.clock_ratio
    locked = estimate_plan(w, plan, replace(capped_system, power_limit_w=None))
    assert locked.step_time_s == pytest.approx(capped.step_time_s, rel=1e-12)
    locked_j = _energy_per_token(system, locked, *locked_clock_power_w(tdp, x))
    assert capped.energy_per_token_j <= locked_j * (1 + 1e-12)
    if share >= 1.0:  # at or above TDP nothing changes
        assert capped.step_time_s == free.step_time_s
        assert capped.energy_per_token_j == free.energy_per_token_j


def test_board_power_at_a_cap() -> None:
    assert board_power_w(700.0) == (700.0, 280.0)
    assert board_power_w(700.0, 500.0) == (500.0, 280.0)
    assert board_power_w(700.0, 1000.0) == (700.0, 280.0)


def test_cluster_file_cap(tmp_path) -> None:
    spec = load_cluster_spec("hgx-h100")
    host = spec.host.model_copy(update={"accelerator_power_limit_w": 500.0})
    system = system_from_cluster(resolve_cluster(spec.model_copy(update={"host": host})))
    assert system.power_limit_w == 500.0
    assert system.clock_ratio == pytest.approx(sustained_clock_ratio(700.0, 500.0))
    assert any(n.startswith("power cap 500 W") for n in system.notes)
    low = spec.host.model_copy(update={"accelerator_power_limit_w": 100.0})
    with pytest.raises(InputError) as e:
        resolve_cluster(spec.model_copy(update={"host": low}))
    assert e.value.path == "host.accelerator_power_limit_w"


def test_validation_system_cap() -> None:
    block = {"accelerator": "h100-sxm-80gb", "peak_dense_bf16_tflops": 989.0,
             "scale_up_gpus": 8, "scale_up_gigabytes_per_s": 450.0,
             "scale_out_gigabits_per_s": 400.0, "gpus": 8}
    free = system_from_validation(block)
    capped = system_from_validation({**block, "power_limit_w": 500})
    assert free.clock_ratio == 1.0 and capped.power_limit_w == 500.0
    assert capped.matmul_flops("bf16") == pytest.approx(
        free.matmul_flops("bf16") * sustained_clock_ratio(700.0, 500.0))
    assert capped.memory_bandwidth_bytes_per_s == free.memory_bandwidth_bytes_per_s
    assert capped.peak_flops == free.peak_flops  # the MFU denominator stays nominal
    for bad in ("500", True, 10):
        with pytest.raises(InputError) as e:
            system_from_validation({**block, "power_limit_w": bad})
        assert e.value.path == "system.power_limit_w"


def test_public_cases_state_no_cap() -> None:
    from importlib import resources

    text = (resources.files("supernode") / "data" / "validation" / "public.json").read_text()
    assert all("power_limit_w" not in c.get("system", {}) for c in json.loads(text)["cases"])


ESTIMATE = ["estimate", "--cluster", "hgx-h100", "--workload", "llama3-8b", "--gpus", "8",
            "--tp", "1", "--pp", "1", "--global-batch", "16", "--micro-batch", "1",
            "--recompute", "none", "--zero-stage", "1", "--vpp", "1"]


def _run(*args: str):
    register_all()
    return CliRunner().invoke(app, list(args))


def test_estimate_power_limit_option() -> None:
    free = json.loads(_run(*ESTIMATE, "--json").stdout)
    out = _run(*ESTIMATE, "--power-limit-w", "500", "--json")
    assert out.exit_code == 0, out.output
    capped = json.loads(out.stdout)
    p = capped["power"]
    assert p["capped"] and p["power_limit_w"] == 500 and p["busy_power_w"] == 500
    assert p["sustained_clock_ratio"] == pytest.approx(sustained_clock_ratio(700.0, 500.0))
    assert capped["step_time_s"] > free["step_time_s"]
    assert capped["energy_per_token_j"] < free["energy_per_token_j"]
    assert free["power"]["capped"] is False and free["power"]["busy_power_w"] == 700
    text = _run(*ESTIMATE, "--power-limit-w", "500").stdout
    assert "power cap" in text and "500 W (TDP 700 W)" in text


@pytest.mark.parametrize("value, fragment", [("100", "at least 350 W"), ("-5", "0..1,000,000"),
                                             ("nan", "finite"), ("abc", "valid number")])
def test_estimate_power_limit_bad_values(value: str, fragment: str) -> None:
    out = _run(*ESTIMATE, f"--power-limit-w={value}")
    assert out.exit_code == 2
    lines = [line for line in out.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: --power-limit-w")
    assert fragment in lines[0]


def test_design_trade_caps_instead_of_cutting_racks() -> None:
    from importlib import resources

    from supernode.design.power_cap import CAP_SHARES, power_cap_trade
    from supernode.spec.plan import ParallelPlan
    from supernode.topology.metrics import topology_report
    from supernode.workload import load_workload

    path = resources.files("supernode") / "data" / "design" / "h100-servers" / "cluster.yaml"
    spec = load_cluster_spec(str(path))
    facility = spec.facility.model_copy(update={"power_available_kw": 300.0})
    cluster = resolve_cluster(spec.model_copy(update={"facility": facility}))
    topo = topology_report(cluster)
    w = load_workload("llama3-70b")
    plan = ParallelPlan(tp=8, pp=4, dp=8, micro_batch=1, global_batch_sequences=256,
                        recompute="selective", zero_stage=1, vpp=1)
    trade = power_cap_trade(cluster, topo, w, plan, system_from_cluster(cluster))
    caps = trade["caps"]
    assert [c["power_limit_w"] for c in caps] == [round(s * 700.0, 1) for s in CAP_SHARES]
    assert trade["budget_short"] and not caps[0]["fits_budget"]
    steps = [c["step_time_s"] for c in caps]
    racks = [c["rack_w"] for c in caps]
    assert steps == sorted(steps) and racks == sorted(racks, reverse=True)
    assert all(c["energy_per_token_j"] < caps[0]["energy_per_token_j"] for c in caps[1:])
    fit = trade["fitting_cap"]
    assert fit["cluster_peak_w"] <= 300e3 < caps[0]["cluster_peak_w"]
    assert fit["cluster_peak_w"] > 300e3 * 0.99  # the highest cap that fits, to a watt
    fewer = trade["fewer_supernodes"]
    assert fewer["cluster_peak_w"] <= 300e3 and fewer["supernodes"] < cluster.supernodes
    assert trade["recommended"].startswith("cap at" if fit["tokens_per_s"] >=
                                           fewer["tokens_per_s"] else "fewer")


def test_a_part_without_a_published_tdp_is_reviewed_without_a_cap_ladder() -> None:
    """The review of a part whose catalog entry publishes no TDP (TPU v4) runs through
    every stage (the placement replay, which reads no power figure, switched off): no cap
    can be priced (catalog/power.py refuses one), so ``facility.power_cap`` is null
    instead of the run stopping there."""
    from supernode.design import DesignInput, run_design

    spec = load_cluster_spec("tpu-v4-pod")
    assert not resolve_cluster(spec).accelerator.tdp_w
    data = run_design(DesignInput("tpu-v4-pod", "llama3-8b", simulate=False, workers=1,
                                  schedule=False)).to_dict()
    assert data["facility"]["power_cap"] is None
    assert data["reviewed_plan"] is not None and data["facility"]["power"]

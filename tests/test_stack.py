"""The software stack input: framework defaults, overrides, and what each choice costs.

Properties: a stack without TP overlap, an eager stack and the alltoall dispatcher never
make a step faster than the default's; DeepEP's bytes match a Monte Carlo of the routing
(a differential test of the closed form); the case reader and ``--framework`` refuse
unknown frameworks with the field's path.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from supernode.cli import app
from supernode.cluster.load import load_cluster
from supernode.errors import InputError
from supernode.estimate.model import estimate_plan
from supernode.estimate.system import system_from_cluster
from supernode.spec.plan import ParallelPlan
from supernode.spec.stack import FRAMEWORK_NAMES, StackSpec, resolve_stack, stack_table
from supernode.spec.training_case import case_workload
from supernode.spec.workload import workload_from_data
from supernode.workload import load_workload
from supernode.workload.dispatch import deepep_byte_ratio, remote_part_copies
from supernode.workload.presets import with_framework


@pytest.fixture(scope="module")
def h100():
    return system_from_cluster(load_cluster("dgx-h100-superpod-su"))


def _on(w, **stack):
    return w.model_copy(update={"stack": StackSpec(**stack)})


def test_every_framework_has_sourced_defaults():
    table = stack_table()
    assert set(table.frameworks) == set(FRAMEWORK_NAMES)
    assert resolve_stack(None).framework == table.default == "megatron-core"
    for name, defaults in table.frameworks.items():
        assert len(defaults.source) > 20, name


def test_every_attention_kernel_of_a_stack_has_measured_curves():
    """The stack's kernel names are the attention tables' (one vocabulary), and the
    default stack runs the tables' default kernel."""
    from typing import get_args

    from supernode.estimate.attention_kernels import DEFAULT_KERNEL, kernel_tables
    from supernode.spec.stack import AttentionKernel

    assert set(get_args(AttentionKernel)) == set(kernel_tables())
    assert resolve_stack(None).attention_kernel == DEFAULT_KERNEL


def test_attention_kernel_of_the_stack_prices_the_core(h100):
    w = load_workload("llama3-8b").model_copy(update={"seq_len": 32768})
    plan = ParallelPlan(tp=1, cp=8, pp=1, dp=32, global_batch_sequences=32, micro_batch=1,
                        recompute="none")
    cudnn = estimate_plan(w, plan, h100).step_time_s
    fa2 = estimate_plan(_on(w, attention_kernel="fa2"), plan, h100)
    assert fa2.step_time_s > 1.1 * cudnn  # FA2 runs at ~2/3 of cuDNN's rate on H100
    assert fa2.stack["attention_kernel"] == "fa2"


def test_overrides_win_and_are_named():
    st_ = resolve_stack(StackSpec(framework="torchtitan", elementwise="eager",
                                  tp_comm_overlap=True))
    assert (st_.framework, st_.elementwise, st_.tp_comm_overlap) == ("torchtitan", "eager",
                                                                      True)
    assert st_.overridden == ("elementwise", "tp_comm_overlap")
    assert st_.attention_kernel == stack_table().frameworks["torchtitan"].attention_kernel
    assert "elementwise=eager*" in st_.describe()


def test_workload_stack_block_is_checked():
    base = load_workload("llama3-8b").model_dump(exclude_none=True)
    w = workload_from_data({**base, "stack": {"framework": "llm-foundry"}})
    assert w.software.elementwise == "eager"
    with pytest.raises(InputError) as err:
        workload_from_data({**base, "stack": {"framework": "jax"}})
    assert err.value.path == "stack.framework"


def test_case_framework_is_read_and_unknown_refused():
    case = {"id": "c", "model": {"layers": 2, "hidden": 256, "heads": 2, "ffn_hidden": 512,
                                 "vocab": 1000, "seq_len": 128},
            "training": {"framework": "torchtitan"}}
    assert case_workload(case).software.framework == "torchtitan"
    case["training"]["framework"] = "pax"
    with pytest.raises(InputError) as err:
        case_workload(case)
    assert err.value.path == "training.framework"


PLAN = ParallelPlan(tp=8, pp=4, dp=8, global_batch_sequences=256)


@settings(max_examples=6, deadline=None)
@given(name=st.sampled_from(["llama3-8b", "llama3-70b", "mixtral-8x7b"]),
       tp=st.sampled_from([2, 8]))
def test_no_tp_overlap_and_eager_kernels_never_speed_a_step(h100, name, tp):
    w = load_workload(name)
    plan = PLAN.model_copy(update={"tp": tp, "dp": 256 // (tp * 4), "micro_batch": 1,
                                   "recompute": "none"})
    fused = estimate_plan(w, plan, h100).step_time_s
    no_overlap = estimate_plan(_on(w, tp_comm_overlap=False), plan, h100)
    eager = estimate_plan(_on(w, elementwise="eager"), plan, h100).step_time_s
    assert no_overlap.step_time_s >= fused * (1 - 1e-12)
    assert eager > fused
    assert no_overlap.stack["tp_comm_overlap"] is False


def test_deepep_across_nodes_never_slower_than_alltoall(h100):
    w = load_workload("deepseek-v3")
    plan = ParallelPlan(tp=1, pp=8, dp=32, ep=32, global_batch_sequences=256, micro_batch=1,
                        recompute="full", moe_a2a_overlap=False)
    alltoall = estimate_plan(_on(w, moe_dispatcher="alltoall"), plan, h100)
    deepep = estimate_plan(_on(w, moe_dispatcher="deepep"), plan, h100)
    chosen = estimate_plan(w, plan, h100)
    assert deepep.breakdown_s["ep_comm"] < 0.8 * alltoall.breakdown_s["ep_comm"]
    assert chosen.stack["moe_dispatcher"] == "deepep"  # EP 32 leaves the 8-GPU hosts
    assert chosen.step_time_s == pytest.approx(deepep.step_time_s)


def _monte_carlo_remote_parts(experts, top_k, ranks, part, draws, seed=0):
    """Mean distinct remote parts per token, routing drawn uniformly (the reference)."""
    rng = np.random.default_rng(seed)
    picks = np.argsort(rng.random((draws, experts)), axis=1)[:, :top_k]
    part_of = picks // (experts // (ranks // part))
    hit = np.zeros((draws, ranks // part), dtype=bool)
    np.put_along_axis(hit, part_of, True, axis=1)
    return hit[:, 1:].sum(axis=1).mean()  # the sender sits in part 0


@pytest.mark.parametrize("experts,top_k,ranks,part", [(256, 8, 64, 8), (128, 8, 32, 8),
                                                      (128, 8, 8, 1), (64, 6, 16, 4)])
def test_deepep_copies_match_a_monte_carlo_of_the_routing(experts, top_k, ranks, part):
    expected = _monte_carlo_remote_parts(experts, top_k, ranks, part, draws=20_000)
    assert remote_part_copies(experts, top_k, ranks, part) == pytest.approx(expected, rel=0.02)


@settings(max_examples=40, deadline=None)
@given(experts=st.sampled_from([8, 16, 64, 128, 256]), top_k=st.integers(1, 8),
       ranks=st.sampled_from([2, 4, 8, 16, 64]), part=st.sampled_from([1, 2, 4, 8]))
def test_deepep_ratio_is_a_share_and_one_for_top_1(experts, top_k, ranks, part):
    top_k = min(top_k, experts)
    ratio = deepep_byte_ratio(experts, top_k, ranks, part)
    assert 0.0 < ratio <= 1.0 + 1e-12
    if top_k == 1:
        assert ratio == pytest.approx(1.0)
    if top_k > 1:
        assert deepep_byte_ratio(experts, top_k, ranks, part) <= \
            deepep_byte_ratio(experts, top_k - 1, ranks, part) + 1e-12


def test_framework_option(tmp_path):
    runner = CliRunner()
    args = ["estimate", "--cluster", "dgx-h100-superpod-su", "--workload", "llama3-8b",
            "--tp", "2", "--global-batch", "256", "--json"]
    good = runner.invoke(app, [*args, "--framework", "torchtitan"])
    assert good.exit_code == 0, good.output
    stack = json.loads(good.stdout)["stack"]
    assert stack["framework"] == "torchtitan" and stack["tp_comm_overlap"] is False
    bad = runner.invoke(app, [*args, "--framework", "[red]x"])
    assert bad.exit_code == 2
    assert bad.output.strip().splitlines() == [
        "error: --framework: unknown framework '[red]x'; known: " + ", ".join(FRAMEWORK_NAMES)]
    assert with_framework(load_workload("llama3-8b"), None).stack is None


def test_every_cross_entropy_of_a_stack_has_a_byte_count():
    """The stack's loss vocabulary is the byte table's (one vocabulary), each count
    positive, and the default stack runs Megatron-Core's unfused loss."""
    from typing import get_args

    from supernode.estimate.elementwise import CROSS_ENTROPY_BYTES_PER_VOCAB
    from supernode.spec.stack import CrossEntropy

    assert set(get_args(CrossEntropy)) == set(CROSS_ENTROPY_BYTES_PER_VOCAB)
    assert all(f > 0 and b > 0 for f, b in CROSS_ENTROPY_BYTES_PER_VOCAB.values())
    assert resolve_stack(None).cross_entropy == "unfused"
    assert resolve_stack(StackSpec(framework="nemo")).cross_entropy == "native"


@pytest.mark.parametrize("loss", ["native", "fused", "eager-fp32", "eager-bf16"])
def test_the_loss_costs_its_bytes_over_the_vocabulary(h100, loss):
    """Differential: the loss's implementation changes only the last stage's loss kernels,
    by (its bytes - unfused bytes) per vocabulary entry of the stage's tokens over one TP
    rank's slice, at the streaming bandwidth; the compute time moves by exactly that."""
    from supernode.estimate.calibration import default_calibration
    from supernode.estimate.compute import head_time
    from supernode.estimate.elementwise import CROSS_ENTROPY_BYTES_PER_VOCAB
    from supernode.spec.plan import as_plan_arrays
    from supernode.workload.shapes import local_tokens

    w = load_workload("llama3-8b")
    cal = default_calibration()
    a = as_plan_arrays(ParallelPlan(tp=2, pp=1, dp=4, micro_batch=1, global_batch_sequences=64,
                                    recompute="none"))
    base_f, base_b = head_time(_on(w, cross_entropy="unfused"), a, h100, cal)
    f, b = head_time(_on(w, cross_entropy=loss), a, h100, cal)
    entries = w.vocab * np.asarray(local_tokens(w, a), dtype=float) / 2.0
    stream = h100.memory_bandwidth_bytes_per_s * cal.memory_eta
    (uf, ub), (lf, lb) = (CROSS_ENTROPY_BYTES_PER_VOCAB[k] for k in ("unfused", loss))
    assert np.allclose(base_f - f, (uf - lf) * entries / stream, rtol=1e-12)
    assert np.allclose(base_b - b, (ub - lb) * entries / stream, rtol=1e-12)
    assert float(np.sum(f + b)) < float(np.sum(base_f + base_b))  # unfused moves the most

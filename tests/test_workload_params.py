"""Golden parameter counts of published models (tier b) and structural invariants (tier a)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from test_workload_strategies import workloads

from supernode.spec.workload import WorkloadSpec
from supernode.workload import active_params, count_params, load_workload, total_params
from supernode.workload.params import matmul_params_per_token

# (preset, published total, published active, relative tolerance); sources in the YAML files.
GOLDEN = [
    ("llama3-8b", 8.03e9, None, 0.005),  # Meta model card: 8.03B
    ("llama3-70b", 70.55e9, None, 0.005),  # 70.55B
    ("llama3-405b", 405.8e9, None, 0.005),  # 405.8B
    ("gpt3-175b", 174.6e9, None, 0.005),  # 12 l h^2 + embeddings = 174.6B
    ("mixtral-8x7b", 46.7e9, 12.9e9, 0.005),  # Mixtral paper: 46.7B total, 12.9B active
    ("deepseek-v3", 671e9, 37e9, 0.02),  # DeepSeek-V3 report: 671B total, 37B activated
]


@pytest.mark.parametrize(("preset", "total", "active", "tol"), GOLDEN)
def test_golden_counts(preset: str, total: float, active: float | None, tol: float) -> None:
    w = load_workload(preset)
    assert total_params(w) == pytest.approx(total, rel=tol)
    assert active_params(w) == pytest.approx(active or total, rel=tol)


def test_llama3_8b_exact() -> None:
    # 32 x (attention 4096*(4096+2*1024+4096) + MLP 3*4096*14336 + 2 norms) + 2 * 128256*4096
    # + final norm, from the released checkpoint's tensor shapes.
    assert total_params(load_workload("llama3-8b")) == 8_030_261_248


def test_gpt_closed_form() -> None:
    """GPT with biases and LayerNorm: 12 l h^2 + 13 l h + V h + s h + 2 h (tied)."""
    w = WorkloadSpec(name="gpt", layers=4, hidden=256, heads=4, ffn_hidden=1024, vocab=1000,
                     seq_len=128, tied_embeddings=True, position_embedding="learned",
                     norm="layernorm", linear_bias=True)
    n, h, v, s = 4, 256, 1000, 128
    assert total_params(w) == 12 * n * h * h + 13 * n * h + v * h + s * h + 2 * h


def test_deepseek_mla_layer() -> None:
    """MLA projections of one DeepSeek-V3 layer, from config.json shapes."""
    c = count_params(load_workload("deepseek-v3"))
    q = 7168 * 1536 + 1536 + 1536 * 128 * 192
    kv = 7168 * 576 + 512 + 512 * 128 * 256
    assert c.attention_per_layer == q + kv + 128 * 128 * 7168
    assert c.dense_layers == 3 and c.moe_layers == 58


@settings(max_examples=60, deadline=None)
@given(workloads())
def test_active_never_exceeds_total(w: WorkloadSpec) -> None:
    c = count_params(w)
    assert 0 < c.active <= c.total
    assert c.non_embedding < c.total
    assert c.dense_layers + c.moe_layers == w.layers
    if w.moe is None or w.moe.top_k == w.moe.experts:
        assert c.active == c.total
    # every matmul weight is a parameter (the output layer once even when tied)
    assert matmul_params_per_token(w) <= c.active + (w.vocab * w.hidden if w.tied_embeddings
                                                     else 0)

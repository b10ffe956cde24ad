"""Matmul shapes, attention variants and pipeline layouts: differential against the FLOP
counts, closed forms of the windowed key count, the presets' published sizes."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from supernode.spec.plan import PlanArrays
from supernode.spec.workload import WorkloadSpec
from supernode.workload import count_params, load_workload
from supernode.workload.flops import EXECUTED, layer_forward_flops_per_token
from supernode.workload.shapes import head_gemms, layer_gemms
from supernode.workload.stages import layers_per_gpu_max, stage_layer_count


@pytest.mark.parametrize("name", ["llama3-8b", "mixtral-8x7b", "deepseek-v3", "qwen3-235b",
                                  "gpt-oss-120b", "gpt3-175b"])
@pytest.mark.parametrize("tp", [1, 2])
def test_gemm_flops_equal_the_flop_count(name, tp):
    """Differential: the GEMMs one GPU runs, summed over the TP group, are the layer's
    matmul FLOPs (MLA's down-projections run on every TP rank: counted once)."""
    w = load_workload(name)
    a = PlanArrays.from_columns(tp=tp, etp=1 if w.moe else tp, ep=1, micro_batch=1,
                                global_batch_sequences=1)
    tokens = w.seq_len
    f = layer_forward_flops_per_token(w)
    for moe in ([False, True] if w.moe else [False]):
        gemms = layer_gemms(w, a, moe)
        replicated = sum(float(g.flops) for g in gemms if g.name in ("kv_down", "q_down"))
        total = sum(float(g.flops) for g in gemms) - replicated
        expected = (f["attention_projections"] + (f["moe_mlp"] if moe else f["dense_mlp"]))
        # per GPU x tp ranks (+ the replicated ones once) = the layer's FLOPs per token x s
        assert (total * tp + replicated) / tokens == pytest.approx(expected, rel=1e-9)
    head = sum(float(g.flops) for g in head_gemms(w, a)) * tp / tokens
    assert head == pytest.approx(2.0 * w.hidden * w.vocab, rel=1e-12)


@settings(max_examples=40, deadline=None)
@given(window=st.integers(1, 9000), seq=st.sampled_from([512, 4096, 8192]),
       every=st.integers(1, 4))
def test_windowed_key_count_closed_form(window, seq, every):
    w = WorkloadSpec(name="w", layers=8, hidden=256, heads=4, ffn_hidden=512, vocab=10,
                     seq_len=seq, sliding_window={"tokens": window, "every": every})
    shares = [share for share, _ in w.attention_key_mix()]
    brute = np.minimum(np.arange(1, seq + 1), window).mean()
    windowed = float(w.attention_key_mix()[-1][1])
    assert windowed == pytest.approx(min(brute, seq / 2), rel=1e-9)
    assert w.windowed_layer_share == pytest.approx(len(range(0, 8, every)) / 8)
    assert sum(shares) == pytest.approx(1.0)
    executed = layer_forward_flops_per_token(w, causal_attention_factor=EXECUTED)
    full = layer_forward_flops_per_token(w, causal_attention_factor=0.5)
    assert executed["attention_core"] <= full["attention_core"] * (1 + 1e-9)


def test_heads_null_and_explicit_head_dim():
    w = WorkloadSpec(name="w", layers=2, hidden=4096, heads=None, ffn_hidden=512, vocab=10,
                     seq_len=128)
    assert (w.heads, w.qk_head_dim) == (32, 128)
    qwen = load_workload("qwen3-235b")
    assert qwen.heads * qwen.qk_head_dim == 8192 != qwen.hidden
    assert round(count_params(qwen).total / 1e9, 1) == 235.1
    assert round(count_params(qwen).active / 1e9, 1) == 22.2
    oss = load_workload("gpt-oss-120b")
    assert round(count_params(oss).total / 1e9, 1) == 116.8  # model card: 116.83 B
    with pytest.raises(ValueError):
        WorkloadSpec(name="w", layers=2, hidden=4000, heads=None, ffn_hidden=8, vocab=1,
                     seq_len=8)


def test_heads_null_rounds_to_whole_kv_groups():
    """hidden 5,760 at 128-dim heads is 45 heads, not a multiple of 8 KV heads: 48 heads
    (6 per group) of 128, projections 6,144 wide; an exact fit is left alone."""
    w = WorkloadSpec(name="w", layers=2, hidden=5760, heads=None, kv_heads=8, ffn_hidden=64,
                     vocab=10, seq_len=128)
    assert (w.heads, w.qk_head_dim, w.heads % 8) == (48, 128, 0)
    same = WorkloadSpec(name="w", layers=2, hidden=4096, heads=None, kv_heads=8,
                        ffn_hidden=64, vocab=10, seq_len=128)
    assert (same.heads, same.qk_head_dim) == (32, 128)


def test_embedding_and_loss_as_layers_layout():
    """61 layers on pp 4 x vpp 4: 63 slots, chunks of 4; the first and last GPUs give one
    slot each to the embedding and the loss."""
    w = load_workload("deepseek-v3")
    assert int(layers_per_gpu_max(w, 4, 4, 0)) == 16
    assert int(stage_layer_count(w, 4, 4, 1, "first")) == 15
    assert int(stage_layer_count(w, 4, 4, 1, "last")) == 15
    assert int(stage_layer_count(w, 4, 4, 1, "middle")) == 16
    assert int(stage_layer_count(w, 1, 1, 1, "first")) == 61

"""Hypothesis strategies shared by the workload tests (no tests of its own)."""

from __future__ import annotations

from hypothesis import strategies as st

from supernode.spec.workload import MoESpec, WorkloadSpec


@st.composite
def workloads(draw: st.DrawFn, moe: bool | None = None) -> WorkloadSpec:
    """Small random decoder-only workloads: MHA/GQA, plain or gated MLP, dense or MoE."""
    heads = draw(st.sampled_from([1, 2, 4, 8, 16, 32]))
    kv_heads = draw(st.sampled_from([d for d in (1, 2, 4, 8, 16, 32) if heads % d == 0]))
    head_dim = draw(st.sampled_from([16, 32, 64, 128]))
    use_moe = draw(st.booleans()) if moe is None else moe
    spec = None
    if use_moe:
        experts = draw(st.sampled_from([2, 4, 8, 16]))
        spec = MoESpec(experts=experts, top_k=draw(st.integers(1, experts)),
                       shared_experts=draw(st.integers(0, 2)),
                       expert_ffn_hidden=draw(st.sampled_from([None, 64, 256])),
                       first_k_dense_layers=draw(st.integers(0, 1)))
    return WorkloadSpec(
        name="random", layers=draw(st.integers(2, 48)), hidden=heads * head_dim, heads=heads,
        kv_heads=kv_heads, ffn_hidden=draw(st.sampled_from([64, 256, 1024, 4096])),
        vocab=draw(st.integers(1, 200_000)), seq_len=draw(st.sampled_from([128, 1024, 4096])),
        gated_mlp=draw(st.booleans()), tied_embeddings=draw(st.booleans()),
        dropout=draw(st.booleans()), moe=spec)

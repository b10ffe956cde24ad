"""Bytes an MoE token dispatcher moves, by dispatcher: alltoall and DeepEP.

Megatron's ``alltoall`` dispatcher sends one copy of a token per routed (token, expert)
pair to the rank holding that expert: ``top_k`` copies per token, of which
``(n - r) / n`` leave the sender's part of ``r`` ranks in an EP group of ``n`` (uniform,
balanced routing). DeepEP (DeepSeek-AI, github.com/deepseek-ai/DeepEP, "normal kernels":
NVLink and RDMA forwarding; NVIDIA's HybridEP and Megatron-Core's ``flex`` dispatcher do
the same) sends a token **once per destination part** across the part boundary (to the
same-index GPU of the destination scale-up domain, which forwards it over NVLink), and
inside a domain once per destination rank, so the copies that cross a boundary are the
distinct remote parts the token's experts fall in. The combine reverses it (partial sums
reduced inside the part before crossing).

For ``E`` experts spread evenly over ``P`` parts and ``k`` distinct experts drawn
uniformly (balanced routing), a given part receives none with the hypergeometric
probability ``C(E - E/P, k) / C(E, k)``; the expected remote parts one token reaches are
``(P - 1) (1 - C(E - E/P, k) / C(E, k))``. Node-limited routing (DeepSeek-V3's "each token
to at most 4 nodes") would lower it further; a workload does not state it, so it is not
assumed.
"""

from __future__ import annotations


def miss_probability(experts: int, top_k: int, parts: float) -> float:
    """Probability that one of ``parts`` equal parts holds none of a token's ``top_k``
    distinct experts drawn uniformly from ``experts`` (hypergeometric; ``parts`` may be
    fractional: a group whose parts are uneven, read at its mean part)."""
    per_part = experts / parts
    if top_k > experts - per_part:
        return 0.0
    p = 1.0
    for i in range(top_k):
        p *= (experts - per_part - i) / (experts - i)
    return max(p, 0.0)


def remote_part_copies(experts: int, top_k: int, ranks: int, part_ranks: int) -> float:
    """Expected distinct parts of ``part_ranks`` ranks, other than the sender's, that one
    token's experts fall in, in an EP group of ``ranks`` (copies that cross the part
    boundary under DeepEP). Uneven parts (``ranks`` not a multiple of ``part_ranks``)
    count as ``ranks / part_ranks`` parts of the mean size."""
    parts = ranks / max(part_ranks, 1)
    if parts <= 1.0:
        return 0.0
    return (parts - 1) * (1.0 - miss_probability(experts, top_k, parts))


def deepep_byte_ratio(experts: int, top_k: int, ranks: int, part_ranks: int) -> float:
    """DeepEP's bytes across the boundary of parts of ``part_ranks`` ranks over the
    alltoall dispatcher's (``<= 1``): remote distinct parts over ``top_k (n - r) / n``.

    With the whole group inside one part (``part_ranks >= ranks``) the boundary is that of
    a rank: copies to distinct remote ranks over ``top_k (n - 1) / n``.
    """
    if ranks <= 1 or top_k <= 0:
        return 1.0
    part = part_ranks if 1 <= part_ranks < ranks else 1
    alltoall = top_k * (ranks - part) / ranks
    if alltoall <= 0.0:
        return 1.0
    return min(remote_part_copies(experts, top_k, ranks, part) / alltoall, 1.0)

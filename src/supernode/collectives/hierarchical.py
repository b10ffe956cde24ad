"""Hierarchical all-reduce and the all-to-all algorithms.

Hierarchical all-reduce (the two-level scheme of Thakur et al. 2005 §6, as in Horovod's
hierarchical mode and NCCL's NVLS_TREE/CollNet): reduce-scatter of ``S`` inside each
innermost group of ``g_0`` ranks, all-reduce of ``S/g_0`` across the ``m = n/g_0`` groups
(each of the ``g_0`` rails in parallel on its own links, by the best flat algorithm,
recursively), all-gather inside. The phases run one after the other.

All-to-all, direct (pairwise exchange; Thakur et al. 2005 §3.4; NCCL's grouped p2p): each
rank sends ``S/n`` to every peer, ``(n-1)/n · S`` in all; ``(n-1)`` message latencies
and, per tier, the bytes to peers reached only through it over that rank's link
(slowed by oversubscription), tiers working concurrently. Hierarchical all-to-all: an
all-to-all inside the innermost group (regrouping by destination rail), then one across
groups along each rail: fewer, larger messages; more bytes in series.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from supernode.collectives.algorithms import (
    as_arrays,
    best_protocol_s,
    halving_doubling_time_s,
    ring_time_s,
    tree_parts,
)
from supernode.collectives.efficiency import EfficiencyTable
from supernode.collectives.fabric import Fabric
from supernode.collectives.innetwork import nvls_time_s
from supernode.collectives.levels import bottleneck_s, job_levels


def hierarchical_time_s(op: str, message_bytes, ranks, fabric: Fabric,
                        tables: Mapping[str, EfficiencyTable]) -> np.ndarray:
    """Hierarchical all-reduce, seconds: RS inside + best all-reduce of S/g_0 across + AG.

    ``inf`` for other ops, single-tier fabrics, or jobs inside one innermost group.
    """
    s, n = as_arrays(message_bytes, ranks)
    if op != "all_reduce" or len(fabric.tiers) < 2:
        return np.full(s.shape, np.inf)
    g0 = fabric.tiers[0].group_size
    inner = fabric.innermost()
    local = np.full(n.shape, g0)
    phases = (ring_time_s("reduce_scatter", s, local, inner, tables)
              + ring_time_s("all_gather", s, local, inner, tables))
    m = -(-n // g0)
    outer = fabric.outer()
    across = np.minimum.reduce([
        fn("all_reduce", s / g0, m, outer, tables)
        for fn in (ring_time_s, _rail_tree_time_s, halving_doubling_time_s, nvls_time_s,
                   hierarchical_time_s)
    ])
    return np.where(n > g0, phases + across, np.inf)


def _rail_tree_time_s(op: str, s: np.ndarray, n: np.ndarray, fabric: Fabric,
                      tables: Mapping[str, EfficiencyTable]) -> np.ndarray:
    """Double binary tree across groups of a rail fabric (no intra-group chain), seconds."""
    levels = job_levels(fabric, n, tables)
    t = best_protocol_s(lambda p: sum(tree_parts(s, n, levels, p, chain_innermost=False)))
    return np.where(n > 1, t, 0.0)


def direct_all_to_all_time_s(op: str, message_bytes, ranks, fabric: Fabric,
                             tables: Mapping[str, EfficiencyTable]) -> np.ndarray:
    """Direct (pairwise-exchange) all-to-all, ``(n-1)α + (n-1)/n · S/B`` per tier, seconds.

    ``S`` is each rank's total send size. Peers reached through tier ``j``:
    ``p_j = min(n, g_j) - min(n, g_{j-1})`` (minus self at tier 0); latency
    ``Σ_j p_j α_j``; bandwidth ``max_j (S p_j/n + S_half_j) / B_j``.
    """
    s, n = as_arrays(message_bytes, ranks)
    if op != "all_to_all":
        return np.full(s.shape, np.inf)
    levels = job_levels(fabric, n, tables)
    peers = [levels[0].size - 1] + [lv.size - lv.inner for lv in levels[1:]]
    lat = sum(p * lv.alpha_s for p, lv in zip(peers, levels, strict=True))
    nf = np.maximum(n, 1).astype(float)

    def bandwidth(protocol: str) -> np.ndarray:
        by_level = dict(zip((lv.index for lv in levels), peers, strict=True))
        return bottleneck_s(levels, lambda lv: np.where(
            by_level[lv.index] > 0, lv.transfer_s(s * by_level[lv.index] / nf, protocol), 0.0))

    t = lat + best_protocol_s(bandwidth)
    return np.where(n > 1, t, 0.0)


def hierarchical_all_to_all_time_s(op: str, message_bytes, ranks, fabric: Fabric,
                                   tables: Mapping[str, EfficiencyTable]) -> np.ndarray:
    """Two-phase all-to-all: direct inside the innermost group, then direct across groups.

    Seconds; ``inf`` for other ops, single-tier fabrics or jobs inside one group.
    """
    s, n = as_arrays(message_bytes, ranks)
    if op != "all_to_all" or len(fabric.tiers) < 2:
        return np.full(s.shape, np.inf)
    g0 = fabric.tiers[0].group_size
    inside = direct_all_to_all_time_s(op, s, np.full(n.shape, g0), fabric.innermost(), tables)
    across = direct_all_to_all_time_s(op, s, -(-n // g0), fabric.outer(), tables)
    return np.where(n > g0, inside + across, np.inf)

"""In-switch reduction all-reduce: NVLink SHARP (NVLS) and InfiniBand SHARP.

With NVLS each rank's share is reduced by the NVSwitch (``multimem.ld_reduce``) and the
result multicast back (``multimem.st``): per rank and direction about ``S·(n+1)/n`` bytes
cross the link once, instead of the ring's ``2(n-1)/n · S`` in two passes, so the bus
bandwidth can exceed the per-GPU link rate (≈480 GB/s on H100/H200 with 450 GB/s links;
NCCL ``src/graph/tuning.cc`` NVLS model, ``nvlsEfficiency``). Time:
``2α + (S(n+1)/n + S_half) / (B · η_in)``, Simple protocol only (NCCL runs NVLS only
with Simple). Graham et al. 2016 describe SHARP, the InfiniBand equivalent.

``nvls_tree`` is NCCL's NVLS_TREE: NVLS inside each innermost group, a double binary
tree of ``S/g_0`` per rail across groups, the two pipelined.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from supernode.collectives.algorithms import as_arrays, tree_parts
from supernode.collectives.efficiency import EfficiencyTable
from supernode.collectives.fabric import Fabric
from supernode.collectives.levels import job_levels


def nvls_time_s(op: str, message_bytes, ranks, fabric: Fabric,
                tables: Mapping[str, EfficiencyTable]) -> np.ndarray:
    """In-switch all-reduce (NVLS/SHARP) within one tier that reduces, seconds.

    Applies only when every rank sits inside the tier the group crosses and that tier has
    ``in_network_reduction`` with an in-network efficiency in its table; else ``inf``.
    """
    s, n = as_arrays(message_bytes, ranks)
    if op != "all_reduce":
        return np.full(s.shape, np.inf)
    levels = job_levels(fabric, n, tables)
    top = np.asarray(fabric.tier_index_for_group(n))
    wire = s * (n + 1.0) / np.maximum(n, 1)
    t = np.choose(top, [2.0 * lv.alpha_s + lv.in_network_transfer_s(wire) for lv in levels])
    return np.where(n > 1, t, 0.0)


def nvls_tree_time_s(op: str, message_bytes, ranks, fabric: Fabric,
                     tables: Mapping[str, EfficiencyTable]) -> np.ndarray:
    """NVLS inside the innermost groups plus a tree across them (NCCL NVLS_TREE), seconds.

    ``2α_0 + tree latency + max(NVLS transfer of S, tree transfer of S/g_0 per rail)``;
    ``inf`` unless the job spans several innermost groups whose tier reduces in-switch.
    """
    s, n = as_arrays(message_bytes, ranks)
    g0 = fabric.tiers[0].group_size
    if op != "all_reduce" or len(fabric.tiers) < 2 or not fabric.tiers[0].in_network_reduction:
        return np.full(s.shape, np.inf)
    inner = job_levels(fabric.innermost(), np.full(n.shape, g0), tables)[0]
    m = -(-n // g0)
    outer_levels = job_levels(fabric.outer(), m, tables)
    in_bw = inner.in_network_transfer_s(s * (g0 + 1.0) / g0)
    out_lat, out_bw = tree_parts(s / g0, m, outer_levels, "simple", chain_innermost=False)
    t = 2.0 * inner.alpha_s + out_lat + np.maximum(in_bw, out_bw)
    return np.where(n > g0, t, np.inf)

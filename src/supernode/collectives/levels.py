"""Per-tier view of a job of ``n`` consecutive ranks, vectorised over ``n``.

For tier ``j`` with group size ``g_j`` (``g_-1 = 1``) and a job of ``n`` aligned ranks:

* ``inner = min(n, g_{j-1})``: job ranks in one tier-``(j-1)`` group, i.e. how many
  ranks (and NICs) sit behind one crossing of tier ``j``;
* ``size = min(n, g_j)``: job ranks in one tier-``j`` group;
* ``chain_hops = ceil(n / g_{j-1}) - ceil(n / g_j)``: hops of a chain through all ``n``
  ranks whose slowest link is tier ``j`` (summing to ``n - 1``; NCCL's ``nInterSteps``);
* ``used``: the job has ranks in more than one tier-``(j-1)`` group.

:meth:`Level.transfer_s` is the time to push ``W`` wire bytes per stream through the
tier under a protocol: ``(W + S_half) / (B · η / oversubscription)``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from supernode.collectives.efficiency import EfficiencyTable, get_table
from supernode.collectives.fabric import Fabric, FabricTier


@dataclass(frozen=True)
class Level:
    """One tier as used by a job (arrays broadcast with the job's rank count)."""

    index: int
    tier: FabricTier
    table: EfficiencyTable
    inner: np.ndarray
    size: np.ndarray
    chain_hops: np.ndarray
    used: np.ndarray

    @property
    def alpha_s(self) -> float:
        """Per-step latency of this tier, seconds."""
        return self.tier.latency_s

    def rate_bytes_per_s(self, protocol: str) -> float:
        """Large-message per-rank rate B·η/oversubscription (0 if protocol unavailable)."""
        eta = self.table.efficiency(protocol)
        if eta is None:
            return 0.0
        return self.tier.bandwidth_bytes_per_s * eta / self.tier.oversubscription

    def transfer_s(self, wire_bytes, protocol: str) -> np.ndarray:
        """Seconds to move ``wire_bytes`` per rank-stream: (W + S_half)/rate; inf if n/a."""
        rate = self.rate_bytes_per_s(protocol)
        w = np.asarray(wire_bytes, dtype=float)
        if rate <= 0:
            return np.full(w.shape, np.inf)
        half = self.table.half_bandwidth_bytes(protocol)
        return np.where(w > 0, (w + half) / rate, 0.0)

    def in_network_transfer_s(self, wire_bytes) -> np.ndarray:
        """Seconds for in-switch reduction traffic (NVLS/SHARP); inf if unavailable."""
        eta = self.table.in_network_efficiency
        w = np.asarray(wire_bytes, dtype=float)
        if not self.tier.in_network_reduction or eta is None:
            return np.full(w.shape, np.inf)
        rate = self.tier.bandwidth_bytes_per_s * eta / self.tier.oversubscription
        return np.where(w > 0, (w + self.table.simple_half_bandwidth_bytes) / rate, 0.0)


def job_levels(fabric: Fabric, ranks, tables: Mapping[str, EfficiencyTable]) -> list[Level]:
    """The :class:`Level` of every tier of ``fabric`` for jobs of ``ranks`` ranks."""
    n = np.asarray(ranks, dtype=np.int64)
    out: list[Level] = []
    previous = 1
    for j, tier in enumerate(fabric.tiers):
        g = tier.group_size
        hops = -(-n // previous) - (-(-n // g))
        out.append(Level(
            index=j,
            tier=tier,
            table=get_table(tables, tier.efficiency),
            inner=np.minimum(n, previous),
            size=np.minimum(n, g),
            chain_hops=hops,
            used=n > previous,
        ))
        previous = g
    return out


def bottleneck_s(levels: list[Level], per_level) -> np.ndarray:
    """Max over used levels of ``per_level(level)`` (0 where no level is used)."""
    result = None
    for level in levels:
        t = np.where(level.used, per_level(level), 0.0)
        result = t if result is None else np.maximum(result, t)
    return result

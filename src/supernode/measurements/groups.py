"""Measured collectives grouped for fitting: one group per (set, op, ranks) with its fabric.

The input ``calibrate`` needs (issue 8's fitting procedure, run on one cluster's own
measurements): like :class:`supernode.collectives.case_groups.CaseGroup`, but each group
carries the job's fabric on the cluster (:mod:`.placement`) instead of a validation
``system`` block.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from supernode.collectives.fabric import Fabric
from supernode.measurements.compare import PLACEMENTS, measured_busbw
from supernode.measurements.model import MeasurementSet
from supernode.measurements.placement import place_job
from supernode.spec.resolved import Cluster


@dataclass(frozen=True)
class MeasuredGroup:
    """Rows of one set that share op, ranks and fabric (bytes, bytes/s, seconds)."""

    source: str
    op: str
    ranks: int
    fabric: Fabric
    message_bytes: np.ndarray
    busbw_bytes_per_s: np.ndarray
    time_s: np.ndarray


def measured_groups(sets: Iterable[MeasurementSet], cluster: Cluster, *,
                    placement: str = "out_of_place", min_bytes: int = 1,
                    ranks_per_domain: int | None = None) -> list[MeasuredGroup]:
    """One :class:`MeasuredGroup` per collective set with a modelled op."""
    if placement not in PLACEMENTS:
        raise ValueError(f"placement must be one of {PLACEMENTS}")
    out = []
    for s in sets:
        if not s.collectives or s.op is None:
            continue
        job = place_job(cluster, s.job, ranks_per_domain=ranks_per_domain)
        timed = [(r.message_bytes, r.timing(placement)) for r in s.collectives
                 if r.message_bytes >= min_bytes]
        rows = [(size, t) for size, t in timed if t is not None and t.time_s > 0]
        if not rows:
            continue
        out.append(MeasuredGroup(
            source=s.source, op=s.op, ranks=job.ranks, fabric=job.fabric,
            message_bytes=np.array([size for size, _ in rows], dtype=float),
            busbw_bytes_per_s=np.array([measured_busbw(s.op, size, job.ranks, t)
                                        for size, t in rows]),
            time_s=np.array([t.time_s for _, t in rows])))
    return out

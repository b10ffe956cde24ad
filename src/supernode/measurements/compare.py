"""Measured against predicted: per collective and size, time, algbw and busbw, and the
share of each tier's theoretical bound the run reached.

The prediction is the public cost model's choice, :func:`supernode.collectives.choose`
(algorithm and protocol as NCCL's tuner picks them), on the job's group view
(:mod:`supernode.measurements.placement`), with the efficiency tables in force (packaged,
a calibration's, or the ``tables`` given). A tier's bound is the busbw the best algorithm
would reach if that tier alone limited it, at line rate: the tables' line-rate copies
(:func:`supernode.collectives.efficiency.ideal_tables`: η = 1, no ramp, no per-step or
base latency; the same protocols and in-network engines, the simulator's line-rate mode),
the other tiers made unlimited. The lowest bound is the binding tier; ``share`` =
measured busbw / bound. A tier's **line rate** is the same bound over the algorithms that
move every byte over the tier's links (ring, tree, direct ...: no switch reduces), or over
every algorithm where the model's own choice reduces in the switch (NVLS, CollNet): what
the path NCCL takes could reach at line rate. For a ring all-reduce over ``d`` domains of
``r`` ranks it is ``r · B_nic`` on the NICs (each ring crosses a domain's boundary once per
channel) and ``r/(r-1) · B`` on the scale-up links; the idealised bound can be twice that
(NVLS_TREE, CollNet), which NCCL does not run by default.

Measured algbw and busbw are derived from the measured time, as nccl-tests derives the
printed ones (``algbw = size / time``, busbw by the op's factor,
:mod:`supernode.collectives.busbw`): the printed rates are rounded to 0.01 GB/s, which at
small sizes is most of the figure (a printed 0.01 at 128 bytes may be 0.005 or 0.015),
while the time keeps 3-5 digits.

Each row also names the collective path the prediction took
(algorithm/protocol over the tiers, with their tables and routing) and the fabric effects
that drove it (:mod:`supernode.collectives.explain`), so a miss can be traced.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

import numpy as np

import supernode.collectives.innetwork as innetwork
from supernode.collectives import busbw_bytes_per_s, choose
from supernode.collectives.efficiency import EfficiencyTable, as_tables, ideal_tables
from supernode.collectives.efficiency_table import Tables
from supernode.collectives.explain import explain
from supernode.collectives.fabric import Fabric
from supernode.collectives.registry import candidates_for, get_algorithm
from supernode.errors import InputError
from supernode.measurements.model import MeasurementSet, Timing
from supernode.measurements.placement import JobPlacement, place_job
from supernode.spec.resolved import Cluster

#: A bandwidth no tier reaches: the "unlimited" tiers of a bound (bytes/s).
UNLIMITED_BYTES_PER_S = 1e30
PLACEMENTS = ("out_of_place", "in_place")
#: Most rows of one test compared (a full nccl-tests sweep has about 35).
MAX_ROWS = 100_000


@dataclass(frozen=True)
class TierBound:
    """One tier's line-rate bound on busbw (bytes/s) and the measured share of it."""

    tier: str
    bound_busbw_bytes_per_s: float
    share: float


@dataclass(frozen=True)
class RowComparison:
    """One size: measured and predicted (SI), their ratio, and the bounds per tier."""

    message_bytes: int
    measured_time_s: float
    measured_algbw_bytes_per_s: float
    measured_busbw_bytes_per_s: float
    predicted_time_s: float
    predicted_algbw_bytes_per_s: float
    predicted_busbw_bytes_per_s: float
    algorithm: str
    protocol: str
    model_binding: str
    bounds: tuple[TierBound, ...]
    line_rates: tuple[TierBound, ...]
    path: str
    effects: tuple[str, ...]
    wrong: int | None
    line: int | None

    @property
    def ratio(self) -> float:
        """Measured / predicted busbw (1 = as the model says; < 1 slower)."""
        return self.measured_busbw_bytes_per_s / self.predicted_busbw_bytes_per_s

    @property
    def binding(self) -> TierBound:
        """The tier with the lowest (idealised) bound."""
        return min(self.bounds, key=lambda b: b.bound_busbw_bytes_per_s)

    @property
    def binding_line_rate(self) -> TierBound:
        """The tier with the lowest line rate (in busbw) on the path the model takes."""
        return min(self.line_rates, key=lambda b: b.bound_busbw_bytes_per_s)


@dataclass(frozen=True)
class SetComparison:
    """A collective measurement set compared with the model on one cluster."""

    measurement: MeasurementSet
    op: str
    placement_kind: str
    job: JobPlacement
    rows: tuple[RowComparison, ...]


def _bound_fabric(fabric: Fabric, keep: int) -> Fabric:
    tiers = []
    for j, tier in enumerate(fabric.tiers):
        bandwidth = tier.bandwidth_bytes_per_s if j == keep else UNLIMITED_BYTES_PER_S
        tiers.append(replace(tier, latency_s=0.0, bandwidth_bytes_per_s=bandwidth))
    return Fabric(tuple(tiers))


def link_algorithms(op: str) -> tuple[str, ...]:
    """The automatic algorithms of ``op`` that move every byte over the links: none of the
    in-switch reductions of :mod:`supernode.collectives.innetwork` (NVLS, NVLS_TREE,
    CollNet)."""
    return tuple(a.name for a in candidates_for(op) if a.build.__module__ != innetwork.__name__)


def is_in_network(algorithm: str) -> bool:
    """True when ``algorithm`` reduces in the switches (:mod:`supernode.collectives.innetwork`)."""
    return get_algorithm(algorithm).build.__module__ == innetwork.__name__


def tier_bounds(op: str, message_bytes, ranks: int, fabric: Fabric, tables=None,
                candidates: tuple[str, ...] | None = None) -> list[tuple[str, np.ndarray]]:
    """``(tier, busbw bound in bytes/s per size)`` for every tier of ``fabric`` that the
    collective uses (vectorised over ``message_bytes``; see the module docstring).
    ``candidates``: the algorithms the bound may use (default: every automatic one)."""
    ideal = ideal_tables(as_tables(tables))
    sizes = np.atleast_1d(np.asarray(message_bytes, dtype=float))
    out = []
    for j, tier in enumerate(fabric.tiers):
        if j == 0 and tier.group_size < 2 and len(fabric.tiers) > 1:
            continue  # one member per domain: the scale-up tier carries nothing
        t = np.atleast_1d(choose(op, sizes, ranks, _bound_fabric(fabric, j), tables=ideal,
                                 candidates=candidates, explain=False).time_s)
        with np.errstate(divide="ignore"):
            bound = np.where(t > 0, busbw_bytes_per_s(op, sizes, ranks, np.where(t > 0, t, 1.0)),
                             np.inf)
        out.append((tier.name, np.asarray(bound, dtype=float)))
    return out


def compare_set(measurement: MeasurementSet, cluster: Cluster, *,
                tables: Tables | Mapping[str, EfficiencyTable] | None = None,
                placement: str = "out_of_place", ranks_per_domain: int | None = None
                ) -> SetComparison:
    """Compare every row of a collective ``measurement`` with the model on ``cluster``."""
    if placement not in PLACEMENTS:
        raise InputError("--placement", f"one of {', '.join(PLACEMENTS)}")
    if measurement.op is None:
        raise InputError("op", f"{measurement.source}: the model has no cost for "
                               f"{measurement.attributes.get('program')}")
    if len(measurement.collectives) > MAX_ROWS:
        raise InputError("RESULTS", f"{measurement.source}: {len(measurement.collectives):,} "
                                    f"rows; the limit is {MAX_ROWS:,} per test")
    job = place_job(cluster, measurement.job, ranks_per_domain=ranks_per_domain)
    if job.ranks < 2:
        raise InputError("--ranks", f"{measurement.source}: a collective of one rank moves "
                                    "nothing; nothing to compare")
    timed = [(row, row.timing(placement)) for row in measurement.collectives]
    kept = [(row, t) for row, t in timed
            if t is not None and t.time_s > 0 and row.message_bytes > 0]
    if not kept:
        raise InputError("RESULTS", f"{measurement.source}: no row with a {placement} time "
                                    "to compare")
    sizes = np.array([row.message_bytes for row, _ in kept], dtype=float)
    choice = choose(measurement.op, sizes, job.ranks, job.fabric, tables=tables)
    times = np.atleast_1d(choice.time_s)
    busbw = np.atleast_1d(busbw_bytes_per_s(measurement.op, sizes, job.ranks, times))
    bounds = tier_bounds(measurement.op, sizes, job.ranks, job.fabric, tables)
    algorithms = np.atleast_1d(choice.algorithm)
    links = tier_bounds(measurement.op, sizes, job.ranks, job.fabric, tables,
                        candidates=link_algorithms(measurement.op) or None)
    in_switch = np.array([is_in_network(str(a)) for a in algorithms])
    line_rates = [(name, np.where(in_switch, ideal, link))
                  for (name, ideal), (_, link) in zip(bounds, links, strict=True)]
    protocols = np.atleast_1d(choice.protocol)
    paths = {key: explain(measurement.op, job.ranks, job.fabric, key[0], key[1], tables=tables)
             for key in {(str(a), str(p)) for a, p in zip(algorithms, protocols, strict=True)}}
    rows = []
    for i, (row, timing) in enumerate(kept):
        path, found = paths[(str(algorithms[i]), str(protocols[i]))]
        busbw_i = measured_busbw(measurement.op, row.message_bytes, job.ranks, timing)
        rows.append(RowComparison(
            message_bytes=row.message_bytes, measured_time_s=timing.time_s,
            measured_algbw_bytes_per_s=row.message_bytes / timing.time_s,
            measured_busbw_bytes_per_s=busbw_i,
            predicted_time_s=float(times[i]),
            predicted_algbw_bytes_per_s=row.message_bytes / float(times[i]),
            predicted_busbw_bytes_per_s=float(busbw[i]),
            algorithm=str(algorithms[i]), protocol=str(protocols[i]),
            model_binding=str(np.atleast_1d(choice.binding)[i]),
            bounds=tuple(TierBound(name, float(b[i]), busbw_i / float(b[i]))
                         for name, b in bounds),
            line_rates=tuple(TierBound(name, float(b[i]), busbw_i / float(b[i]))
                             for name, b in line_rates),
            path=path, effects=found, wrong=timing.wrong, line=row.line))
    return SetComparison(measurement, measurement.op, placement, job, tuple(rows))


def measured_busbw(op: str, message_bytes: int, ranks: int, timing: Timing) -> float:
    """The measured busbw (bytes/s) from the measured time, as nccl-tests computes the
    printed one (``src/common.cu``: algbw = size / time, busbw = algbw x the op's factor);
    the print's 0.01 GB/s rounding is most of a small message's figure."""
    return float(busbw_bytes_per_s(op, float(message_bytes), ranks, timing.time_s))


"""Groups of collective measurements to fit, and the log errors a table set makes on them.

A :class:`CaseGroup` is the cases sharing one system, collective and rank count: their
sizes and measured bus bandwidths, the fabric and the schedules of every algorithm NCCL
could run there, predicted in one vectorised call. The calibration of the packaged tables
(:mod:`supernode.collectives.calibrate`), its leave-one-source-out check
(:mod:`supernode.collectives.loso`) and a cluster's own calibration
(:mod:`supernode.measurements.calibration`) all fit these.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from supernode.collectives.busbw import busbw_bytes_per_s
from supernode.collectives.efficiency import Tables
from supernode.collectives.efficiency_file import read_efficiency_file, tables_from_file_spec
from supernode.collectives.fabric import Fabric
from supernode.collectives.model import Option, _names, options
from supernode.collectives.schedule import schedule_time_s
from supernode.collectives.systems import fabric_from_validation_system
from supernode.collectives.validate import UnsupportedCase, collective_case_inputs
from supernode.spec.casefile import case_source
from supernode.units import GBYTE_PER_S


@dataclass(frozen=True)
class CaseGroup:
    """Cases sharing system, collective and ranks, predicted in one vectorised call."""

    system: dict[str, Any]
    op: str
    ranks: int
    message_bytes: np.ndarray
    measured_gbyte_per_s: np.ndarray
    sources: tuple[str, ...]
    fabric: Fabric
    runnable: tuple[Option, ...]


def case_group(op: str, ranks: int, fabric: Fabric, message_bytes: npt.ArrayLike,
               measured_gbyte_per_s: npt.ArrayLike, sources: Sequence[str], tables: Tables,
               system: dict[str, Any] | None = None
               ) -> CaseGroup:
    """One group of measurements to fit: ``op`` over ``ranks`` ranks of ``fabric`` (a
    validation system's, or a measured job's group view), busbw measured at each size
    (bytes, GB/s), with the schedules of every algorithm NCCL could run there."""
    runnable, _ = options(op, fabric, ranks, tables, _names(op, None, None))
    return CaseGroup(system or {}, op, int(ranks), np.asarray(message_bytes, dtype=float),
                     np.asarray(measured_gbyte_per_s, dtype=float), tuple(sources), fabric,
                     runnable)


def collective_groups(cases: Sequence[Mapping[str, Any]], tables: Tables | None = None
                      ) -> list[CaseGroup]:
    """Group the supported ``collective`` cases that carry a measured bus bandwidth."""
    tables = tables or tables_from_file_spec(read_efficiency_file())
    buckets: dict[tuple[str, str, int], list[tuple[float, float, dict[str, Any], str]]] = {}
    for case in cases:
        measured = (case.get("measured") or {}).get("busbw_gigabytes_per_s")
        if case.get("kind") != "collective" or not isinstance(measured, int | float):
            continue
        try:
            op, ranks, size, system = collective_case_inputs(case)
        except UnsupportedCase:
            continue
        key = (json.dumps(system, sort_keys=True), op, ranks)
        buckets.setdefault(key, []).append((size, float(measured), system,
                                            case_source(case)))
    out = []
    for (_, op, ranks), rows in buckets.items():
        system = rows[0][2]
        fabric = fabric_from_validation_system(system, ranks, tables=tables)
        out.append(case_group(op, ranks, fabric, [r[0] for r in rows], [r[1] for r in rows],
                              [r[3] for r in rows], tables, system))
    return out


def _times_s(group: CaseGroup, tables: Tables, softness: float) -> np.ndarray:
    times = np.stack([schedule_time_s(o.schedule, tables, group.message_bytes)
                      for o in group.runnable])
    if softness <= 0:
        fastest: np.ndarray = times.min(axis=0)
        return fastest
    z = -np.log(times) / softness
    top = z.max(axis=0)
    soft: np.ndarray = np.exp(-softness * (top + np.log(np.exp(z - top).sum(axis=0))))
    return soft


def log_errors(groups: Sequence[CaseGroup], tables: Tables, softness: float = 0.0
               ) -> np.ndarray:
    """ln(predicted / measured bus bandwidth) of every case, group after group.

    ``softness`` > 0 replaces the choice of the fastest option by a soft minimum
    ``exp(-s·logsumexp(-ln t / s))`` (used only on the way to the hard fit).
    """
    out = []
    for g in groups:
        busbw = busbw_bytes_per_s(g.op, g.message_bytes, g.ranks, _times_s(g, tables, softness))
        out.append(np.log(np.asarray(busbw) / GBYTE_PER_S / g.measured_gbyte_per_s))
    return np.concatenate(out) if out else np.zeros(0)



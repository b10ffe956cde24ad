"""Calibrate one cluster's collective efficiency tables from its own measurements.

The procedure is the shipped tables' (:func:`supernode.collectives.calibrate.fit`: robust
``soft_l1`` least squares of ``ln(busbw_pred / busbw_meas)`` over log-parameters within
physical bounds, a weak pull towards each prior, seeded multi-start, continuation from a
soft to the hard choice of algorithm, 95 % intervals from the Jacobian), run on the
cluster's measured collectives, each costed on its job's group view
(:mod:`.placement`). What differs is the question:

* the free parameters are those of the tables the cluster's tiers use (``nvlink5``,
  ``infiniband_xdr`` ...), each one a protocol or engine of that table has, and their
  priors are the packaged values (the public-set fit is this cluster's prior knowledge);
* a parameter is fitted only when the data identify it (:mod:`.identify`): first the
  parameters no row depends on are set aside, then the fit runs, then the parameters the
  rows cannot pin at the fitted point, or that end on a physical bound (a missing
  effect, not a result), are refused and the rest refitted, until every free parameter is
  identified. Refused parameters keep their packaged values and are reported with why.

Efficiencies and ratios live in (0, 1]: the fit keeps them there (bounded log
parameters), and the upper end of their 95 % intervals is taken in the logit of the value
(the delta method from the log-space Jacobian: ``d logit(p) / d ln p = 1 / (1 - p)``), so
no interval end passes 1; a fit whose log-space interval would have crossed 1 says so in its reason
(the rows cannot tell it from line rate).

The fit is checked out of sample: the same procedure run without the largest
``hold_out`` sizes of every test (of at least ``hold_out + 3`` sizes) predicts them, and
the relative busbw errors are reported (``held_out``). The parameters written are the fit
on every row.

Case ids and file names are never looked at.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from supernode.collectives.calibrate import BOUNDS, STARTS, Key, fit, with_values
from supernode.collectives.case_groups import CaseGroup, case_group, log_errors
from supernode.collectives.efficiency import FITTABLE
from supernode.collectives.efficiency_file import (
    EfficiencyFileSpec,
    read_efficiency_file,
    resolve_values,
    tables_from_file_spec,
)
from supernode.errors import InputError
from supernode.measurements.calibration_checks import HeldOutRow, bounded_interval
from supernode.measurements.compare import compare_set
from supernode.measurements.groups import MeasuredGroup, measured_groups
from supernode.measurements.identify import (
    data_jacobian,
    identify,
    insensitive,
    sensitivities,
)
from supernode.measurements.model import MeasurementSet
from supernode.spec.resolved import Cluster
from supernode.units import GBYTE_PER_S

#: Tables never calibrated: definitions, not links.
NOT_CALIBRATED = frozenset({"ideal"})
STATUSES = ("fitted", "not_identified", "on_bound")


@dataclass(frozen=True)
class ParameterResult:
    """One candidate parameter (file units): what the data said about it."""

    table: str
    parameter: str
    status: str
    value: float
    packaged: float
    ci95: tuple[float, float] | None
    sensitivity: float
    reason: str = ""

    @property
    def key(self) -> Key:
        """(table, parameter)."""
        return (self.table, self.parameter)


@dataclass(frozen=True)
class GroupResult:
    """One measured collective group: measured and predicted busbw per size (bytes/s)."""

    source: str
    op: str
    ranks: int
    tiers: tuple[str, ...]
    message_bytes: tuple[int, ...]
    measured_busbw_bytes_per_s: tuple[float, ...]
    packaged_busbw_bytes_per_s: tuple[float, ...]
    calibrated_busbw_bytes_per_s: tuple[float, ...]


@dataclass(frozen=True)
class ClusterCalibration:
    """The outcome of :func:`calibrate_cluster`."""

    cluster: str
    placement: str
    parameters: tuple[ParameterResult, ...]
    groups: tuple[GroupResult, ...]
    rms_log_error_packaged: float
    rms_log_error_calibrated: float
    held_out: tuple[HeldOutRow, ...] = ()

    @property
    def held_out_max_abs_error(self) -> float | None:
        """The largest |error| of the held-out rows (None: nothing held out)."""
        return max((abs(r.error) for r in self.held_out), default=None)

    @property
    def fitted(self) -> dict[Key, float]:
        """The fitted values (file units) a ``--calibration`` applies."""
        return {p.key: p.value for p in self.parameters if p.status == "fitted"}

    @property
    def rows(self) -> int:
        """Measured rows the fit used."""
        return sum(len(g.message_bytes) for g in self.groups)


def candidates(spec: EfficiencyFileSpec, groups: Sequence[CaseGroup]) -> dict[Key, float]:
    """Every parameter of the tables the groups' tiers use that the table runs (a protocol
    or engine it lacks is not calibrated into existence), with its packaged value (file
    units), in table then :data:`FITTABLE` order."""
    names = sorted({t.efficiency for g in groups for t in g.fabric.tiers} - NOT_CALIBRATED)
    out: dict[Key, float] = {}
    for name in names:
        values = resolve_values(name, spec.tables)
        for param in FITTABLE:
            gate = next((g for prefix, g in _NEEDS if param.startswith(prefix)), None)
            value = values.get(param)
            if value is None or (gate and values.get(gate) is None):
                continue
            out[(name, param)] = float(value)
    return out


#: Parameter prefix -> the value whose absence means the table does not run it.
_NEEDS = (("ll128_", "ll128_ratio"), ("ll_", "ll_ratio"),
          ("in_network_", "in_network_efficiency"))


def cluster_spec(spec: EfficiencyFileSpec, free: Sequence[Key], values: dict[Key, float]
                 ) -> EfficiencyFileSpec:
    """``spec`` set up for :func:`~supernode.collectives.calibrate.fit`: every candidate
    written on its own table (so a fit moves that table alone), ``free`` listed as fitted
    with their packaged values as priors, nothing else fitted."""
    tables = {}
    for name, table in spec.tables.items():
        mine = [p for t, p in free if t == name]
        tables[name] = table.model_copy(update={
            "fitted": mine, "prior": {p: values[(name, p)] for p in mine}})
    return with_values(spec.model_copy(update={"tables": tables}), values)


def fit_groups(sets: Iterable[MeasurementSet], cluster: Cluster, *, placement: str,
               ranks_per_domain: int | None, spec: EfficiencyFileSpec
               ) -> tuple[list[MeasuredGroup], list[CaseGroup]]:
    """The measured collectives of ``sets`` as fitting groups on their group views."""
    tables = tables_from_file_spec(spec)
    measured = [m for m in measured_groups(sets, cluster, placement=placement,
                                           ranks_per_domain=ranks_per_domain)
                if m.ranks > 1]
    groups = [case_group(m.op, m.ranks, m.fabric, m.message_bytes,
                         m.busbw_bytes_per_s / GBYTE_PER_S, [m.source] * len(m.message_bytes),
                         tables) for m in measured]
    if not groups:
        raise InputError("RESULTS", "no collective measurement with a modelled op and a "
                                    "positive time: nothing to calibrate")
    return measured, groups


def calibrate_cluster(cluster: Cluster, sets: Iterable[MeasurementSet], *,
                      placement: str = "out_of_place", ranks_per_domain: int | None = None,
                      starts: int = STARTS, hold_out: int = 1) -> ClusterCalibration:
    """Fit ``cluster``'s efficiency parameters from ``sets``, and check the fit on the
    largest ``hold_out`` sizes of each test held back from a second fit (module
    docstring; 0: no check)."""
    sets = list(sets)
    cal = _calibrate(cluster, sets, placement, ranks_per_domain, starts)
    if hold_out < 1:
        return cal
    kept, held = [], []
    for s in sets:
        rows = sorted(s.collectives, key=lambda r: r.message_bytes)
        if s.op is not None and len(rows) >= hold_out + 3:
            kept.append(dataclasses.replace(s, collectives=tuple(rows[:-hold_out])))
            held.append(dataclasses.replace(s, collectives=tuple(rows[-hold_out:])))
        else:
            kept.append(s)
    if not held:
        return cal
    check = _calibrate(cluster, kept, placement, ranks_per_domain, starts)
    tables = tables_from_file_spec(with_values(read_efficiency_file(), check.fitted))
    rows_out = [HeldOutRow(s.source, c.op, r.message_bytes, r.measured_busbw_bytes_per_s,
                           r.predicted_busbw_bytes_per_s)
                for s in held for c in [compare_set(s, cluster, tables=tables,
                                                    placement=placement,
                                                    ranks_per_domain=ranks_per_domain)]
                for r in c.rows]
    return dataclasses.replace(cal, held_out=tuple(rows_out))


def _calibrate(cluster: Cluster, sets: list[MeasurementSet], placement: str,
               ranks_per_domain: int | None, starts: int) -> ClusterCalibration:
    """One fit of every row of ``sets`` (:func:`calibrate_cluster` without the check)."""
    spec = read_efficiency_file()
    measured, groups = fit_groups(sets, cluster, placement=placement,
                                  ranks_per_domain=ranks_per_domain, spec=spec)
    packaged = candidates(spec, groups)
    keys = list(packaged)
    sensitivity = sensitivities(data_jacobian(cluster_spec(spec, [], packaged), groups, keys,
                                              packaged), keys)
    refused = {k: ("not_identified", why) for k, why in insensitive(sensitivity).items()}
    free = [k for k in keys if k not in refused]
    final: dict[Key, float] = {}
    intervals: dict[Key, tuple[float, float]] = {}
    while free:  # each round refuses at least one parameter or ends
        trial = cluster_spec(spec, free, packaged)
        result = fit(trial, groups, starts=starts)
        values = {**packaged, **result.values}
        found = identify(data_jacobian(trial, groups, free, values),
                         log_errors(groups, tables_from_file_spec(with_values(trial, values))),
                         free)
        sensitivity.update(found.sensitivity)
        drop = {k: ("not_identified", found.reasons[k]) for k in free if k in found.reasons}
        drop.update({k: ("on_bound", _on_bound(k, values[k])) for k in result.on_bound
                     if k not in drop})
        if not drop:
            final, intervals = result.values, result.intervals
            break
        refused.update(drop)
        free = [k for k in free if k not in drop]
    params = tuple(_parameter(k, packaged, final, intervals, sensitivity, refused)
                   for k in keys)
    calibrated = tables_from_file_spec(with_values(spec, {**packaged, **final}))
    before = log_errors(groups, tables_from_file_spec(spec))
    after = log_errors(groups, calibrated)
    return ClusterCalibration(
        cluster=cluster.name, placement=placement, parameters=params,
        groups=tuple(_group(m, g, spec, calibrated) for m, g in zip(measured, groups,
                                                                   strict=True)),
        rms_log_error_packaged=_rms(before), rms_log_error_calibrated=_rms(after))


def _on_bound(key: Key, value: float) -> str:
    low, high = BOUNDS[key[1]]
    side = "upper" if abs(np.log(value / high)) < abs(np.log(value / low)) else "lower"
    return (f"the fit ends on its {side} physical bound ({high if side == 'upper' else low:g}):"
            " a missing effect, not a result; kept at the packaged value")


def _parameter(key: Key, packaged: dict[Key, float], final: dict[Key, float],
               intervals: dict, sensitivity: dict[Key, float],
               refused: dict[Key, tuple[str, str]]) -> ParameterResult:
    if key in final:
        interval, reason = bounded_interval(key, final[key], intervals.get(key))
        return ParameterResult(key[0], key[1], "fitted", final[key], packaged[key],
                               interval, sensitivity.get(key, 0.0), reason)
    status, reason = refused.get(key, ("not_identified", "the fit did not settle"))
    return ParameterResult(key[0], key[1], status, packaged[key], packaged[key], None,
                           sensitivity.get(key, 0.0), reason)


def _group(m: MeasuredGroup, g: CaseGroup, spec: EfficiencyFileSpec, calibrated
           ) -> GroupResult:
    packaged = tables_from_file_spec(spec)
    ratio_before = np.exp(log_errors([g], packaged))
    ratio_after = np.exp(log_errors([g], calibrated))
    return GroupResult(
        source=m.source, op=m.op, ranks=m.ranks,
        tiers=tuple(t.name for t in m.fabric.tiers),
        message_bytes=tuple(int(s) for s in m.message_bytes),
        measured_busbw_bytes_per_s=tuple(float(b) for b in m.busbw_bytes_per_s),
        packaged_busbw_bytes_per_s=tuple(float(b) for b in m.busbw_bytes_per_s * ratio_before),
        calibrated_busbw_bytes_per_s=tuple(float(b) for b in m.busbw_bytes_per_s * ratio_after))


def _rms(errors: np.ndarray) -> float:
    return float(np.sqrt(np.mean(errors ** 2))) if errors.size else 0.0

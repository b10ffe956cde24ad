"""The calibration file (``schema: supernode-calibration/1``): one cluster's fitted
collective efficiency parameters, how they were found, and how to apply them.

``supernode calibrate`` writes it; ``--calibration FILE`` on every command that costs
collectives (``estimate``, ``plan``, ``simulate``, ``design``, ``compare`` and the others
:mod:`supernode.commands._plan_options` lists) applies it (:func:`calibration_in_force`): the
packaged efficiency tables with every ``fitted`` parameter replaced on its table, in force
for the whole command (:func:`supernode.collectives.efficiency.tables_in_force`).
Parameters that are ``not_identified`` or ``on_bound`` are reported only: their values are
the packaged ones and nothing applies them. File units (``*_us``, ``*_gbyte_per_s``,
``*_bytes``, fractions), as in ``data/collectives/efficiency.yaml``. The content is a
function of the inputs alone (no clock, no host): ``date`` is what the user gave.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, field_validator

from supernode.collectives.calibrate import BOUNDS, Key, with_values
from supernode.collectives.efficiency import FITTABLE, Tables, tables_in_force
from supernode.collectives.efficiency_file import (
    default_efficiency_path,
    read_efficiency_file,
    resolve_values,
    tables_from_file_spec,
)
from supernode.errors import InputError
from supernode.inputs import read_bytes_file
from supernode.measurements.calibration import STATUSES, ClusterCalibration
from supernode.spec.base import StrictModel
from supernode.spec.documents import dump_yaml
from supernode.spec.loader import read_document, validate_document
from supernode.units import GBYTE_PER_S

SCHEMA = "supernode-calibration/1"
#: Most parameters, sources and groups one file holds.
MAX_ENTRIES = 10_000
PROCEDURE = (
    "supernode.measurements.calibration: the shipped tables' fit (supernode.collectives."
    "calibrate.fit: robust soft_l1 least squares of ln(busbw_pred/busbw_meas) over "
    "log-parameters within physical bounds, a pull of weight 0.02 per log unit towards each "
    "prior, seeded multi-start, soft-to-hard algorithm continuation, 95 % intervals from the "
    "Jacobian) on this cluster's measured collectives, each costed on its job's group view; "
    "free parameters: those of the tables the cluster's tiers use, priors at the packaged "
    "values; a parameter no row depends on (sensitivity < 0.01), that the rows cannot pin "
    "(data-only 95 % interval wider than x/÷1.5, residual scale floored at 1 %) or that ends "
    "on a physical bound is refused, keeps its packaged value, and the rest are refitted.")


class SourceEntry(StrictModel):
    """One results file the fit read."""

    path: str = Field(description="The file as given on the command line.")
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$", description="SHA-256 of its bytes.")
    sets: int = Field(ge=0, description="Measurement sets read from it.")
    rows: int = Field(ge=0, description="Collective rows of it the fit used.")


class ParameterEntry(StrictModel):
    """One candidate parameter and what the data said about it (file units)."""

    table: str = Field(description="Efficiency table (data/collectives/efficiency.yaml).")
    parameter: str = Field(description="Parameter name (efficiency.yaml units).")
    status: Literal["fitted", "not_identified", "on_bound"] = Field(
        description="fitted: applied by --calibration; otherwise reported only.")
    value: float = Field(gt=0, description="The fitted value, or the packaged one kept.")
    packaged: float = Field(gt=0, description="The packaged value (the fit's prior).")
    ci95: list[float] | None = Field(None, min_length=2, max_length=2,
                                     description="95 % interval of a fitted value.")
    sensitivity: float = Field(ge=0, description="Largest |d ln busbw / d ln value| over "
                                                 "the rows.")
    reason: str = Field("", description="Why a parameter was not fitted.")


class GroupEntry(StrictModel):
    """One measured collective group: busbw per size, measured and predicted (GB/s; a
    small message's rate may be far under 1 MB/s)."""

    measured_figures = True

    source: str = Field(description="Results file of the group.")
    op: str = Field(description="Collective.")
    ranks: int = Field(ge=2, description="Ranks of one collective.")
    tiers: list[str] = Field(description="Tiers of the group's view, innermost first.")
    message_bytes: list[int] = Field(description="Sizes (nccl-tests size column), bytes.")
    measured_busbw_gbyte_per_s: list[float] = Field(description="Measured busbw, GB/s.")
    packaged_busbw_gbyte_per_s: list[float] = Field(description="Packaged tables' busbw.")
    calibrated_busbw_gbyte_per_s: list[float] = Field(description="Calibrated busbw.")


class HeldOutEntry(StrictModel):
    """One row held back from the check fit and predicted by it."""

    source: str = Field(description="Results file of the row.")
    op: str = Field(description="Collective.")
    message_bytes: int = Field(ge=0, description="nccl-tests size, bytes.")
    measured_busbw_gbyte_per_s: float = Field(ge=0, description="Measured busbw, GB/s.")
    predicted_busbw_gbyte_per_s: float = Field(ge=0, description="Check fit's busbw, GB/s.")
    error: float = Field(description="Predicted / measured - 1.")


class FitEntry(StrictModel):
    """How well the model describes the rows, before and after (in sample), and the
    held-out check (the largest sizes of each test predicted by a fit without them)."""

    rows: int = Field(ge=1, description="Collective rows fitted.")
    groups: int = Field(ge=1, description="Groups (set, op, ranks) fitted.")
    rms_log_error_packaged: float = Field(ge=0, description="RMS ln(pred/meas), packaged.")
    rms_log_error_calibrated: float = Field(ge=0, description="RMS ln(pred/meas), fitted.")
    held_out: list[HeldOutEntry] = Field(default_factory=list, max_length=MAX_ENTRIES,
                                         description="Rows held back from the check fit.")
    held_out_max_abs_error: float | None = Field(None, ge=0, description="Largest |error| "
                                                 "of the held-out rows (null: none).")


class CalibrationFile(StrictModel):
    """The whole file."""

    schema_: Literal["supernode-calibration/1"] = Field(alias="schema")
    cluster: str = Field(description="Name of the cluster the runs were placed on.")
    date: str | None = Field(None, description="When the runs were made (--date, ISO "
                                               "YYYY-MM-DD), or null.")
    efficiency_sha256: str = Field(pattern=r"^[0-9a-f]{64}$", description="SHA-256 of the "
                                   "packaged efficiency.yaml the fit started from.")
    placement: Literal["out_of_place", "in_place"] = Field(description="Timings fitted.")
    procedure: str = Field(description="How the values were found.")
    sources: list[SourceEntry] = Field(min_length=1, max_length=MAX_ENTRIES)
    fit: FitEntry
    parameters: list[ParameterEntry] = Field(max_length=MAX_ENTRIES)
    groups: list[GroupEntry] = Field(max_length=MAX_ENTRIES)

    @field_validator("date")
    @classmethod
    def _iso_date(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                dt.date.fromisoformat(value)
            except ValueError:
                raise ValueError(f"{value!r} is not an ISO date (YYYY-MM-DD)") from None
        return value

    @property
    def fitted(self) -> dict[Key, float]:
        """The (table, parameter) values ``--calibration`` applies."""
        return {(p.table, p.parameter): p.value for p in self.parameters
                if p.status == "fitted"}


def file_sha256(path: str | Path) -> str:
    """SHA-256 of a file's bytes (hex)."""
    return hashlib.sha256(read_bytes_file(path, "", 1 << 26)).hexdigest()


def _gb(values) -> list[float]:
    return [round(v / GBYTE_PER_S, 6) for v in values]


def calibration_document(cal: ClusterCalibration, sources: list[dict[str, Any]],
                         date: str | None = None) -> dict[str, Any]:
    """The file's content for ``cal`` (``sources``: path, sha256, sets, rows per file)."""
    doc = {
        "schema": SCHEMA, "cluster": cal.cluster, "date": date,
        "efficiency_sha256": file_sha256(default_efficiency_path()),
        "placement": cal.placement, "procedure": PROCEDURE, "sources": sources,
        "fit": {"rows": cal.rows, "groups": len(cal.groups),
                "rms_log_error_packaged": round(cal.rms_log_error_packaged, 6),
                "rms_log_error_calibrated": round(cal.rms_log_error_calibrated, 6),
                "held_out": [{"source": r.source, "op": r.op, "message_bytes": r.message_bytes,
                              "measured_busbw_gbyte_per_s": round(
                                  r.measured_busbw_bytes_per_s / GBYTE_PER_S, 6),
                              "predicted_busbw_gbyte_per_s": round(
                                  r.predicted_busbw_bytes_per_s / GBYTE_PER_S, 6),
                              "error": round(r.error, 6)} for r in cal.held_out],
                "held_out_max_abs_error": (None if cal.held_out_max_abs_error is None
                                           else round(cal.held_out_max_abs_error, 6))},
        "parameters": [{"table": p.table, "parameter": p.parameter, "status": p.status,
                        "value": p.value, "packaged": p.packaged,
                        "ci95": list(p.ci95) if p.ci95 else None,
                        "sensitivity": round(p.sensitivity, 6), "reason": p.reason}
                       for p in cal.parameters],
        "groups": [{"source": g.source, "op": g.op, "ranks": g.ranks, "tiers": list(g.tiers),
                    "message_bytes": list(g.message_bytes),
                    "measured_busbw_gbyte_per_s": _gb(g.measured_busbw_bytes_per_s),
                    "packaged_busbw_gbyte_per_s": _gb(g.packaged_busbw_bytes_per_s),
                    "calibrated_busbw_gbyte_per_s": _gb(g.calibrated_busbw_bytes_per_s)}
                   for g in cal.groups],
    }
    validate_document(doc, CalibrationFile, source="calibration")
    return doc


def render_yaml(doc: dict[str, Any]) -> str:
    """The file's YAML text, with a header line."""
    head = ("# Collective efficiency calibration of one cluster (docs/measurements.md); "
            "written by `supernode calibrate`.\n")
    return head + dump_yaml(doc)


def check_against_packaged(cal: CalibrationFile, source: str) -> None:
    """Refuse parameters the packaged tables do not have, or values out of bounds."""
    spec = read_efficiency_file()
    seen: set[Key] = set()
    for i, p in enumerate(cal.parameters):
        where = f"parameters[{i}]"
        if p.table not in spec.tables:
            raise InputError(f"{where}.table", f"unknown efficiency table {p.table!r}; known: "
                             f"{', '.join(sorted(spec.tables))}", source=source)
        if p.parameter not in FITTABLE:
            raise InputError(f"{where}.parameter", f"one of {', '.join(FITTABLE)}",
                             source=source)
        if (p.table, p.parameter) in seen:
            raise InputError(f"{where}", f"{p.table}.{p.parameter} is listed twice",
                             source=source)
        seen.add((p.table, p.parameter))
        if resolve_values(p.table, spec.tables).get(p.parameter) is None:
            raise InputError(f"{where}.parameter", f"{p.table} does not run "
                             f"{p.parameter} (null in the packaged tables): a calibration "
                             "cannot enable a protocol or engine", source=source)
        low, high = BOUNDS[p.parameter]
        if p.status == "fitted" and not low <= p.value <= high:
            raise InputError(f"{where}.value", f"{p.value:g} is outside {p.parameter}'s "
                             f"physical bounds [{low:g}, {high:g}]", source=source)


def read_calibration(path: str | Path, option: str = "--calibration") -> CalibrationFile:
    """Read and check a calibration file; bad content is one :class:`InputError`."""
    doc = read_document(path)
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        raise InputError(option, f"not a {SCHEMA} file (run supernode calibrate)",
                         source=str(path))
    cal = validate_document(doc, CalibrationFile, source=str(path))
    check_against_packaged(cal, str(path))
    return cal


def calibrated_tables_of(fitted: Mapping[Key, float]) -> Tables:
    """The packaged tables with ``fitted`` (table, parameter) values replaced (file units)."""
    return tables_from_file_spec(with_values(read_efficiency_file(), dict(fitted)))


def calibration_key(cal: CalibrationFile) -> str:
    """A short digest of what the calibration applies (memo keys)."""
    text = json.dumps(sorted((f"{t}.{p}", v) for (t, p), v in cal.fitted.items()))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def tables_changed(cal: CalibrationFile) -> bool:
    """True when the packaged efficiency tables differ from those the fit started from (the
    fitted values still apply; the rest are today's packaged values)."""
    return cal.efficiency_sha256 != file_sha256(default_efficiency_path())


def calibration_label(cal: CalibrationFile, path: str | Path) -> str:
    """One sentence for notes: which calibration is in force."""
    fitted = ", ".join(f"{t}.{p} {v:g}" for (t, p), v in cal.fitted.items()) or "none"
    when = f" ({cal.date})" if cal.date else ""
    stale = (" (fitted against other packaged tables than today's: rerun supernode "
             "calibrate)") if tables_changed(cal) else ""
    return (f"collective efficiencies calibrated on {cal.cluster}{when} from "
            f"{Path(str(path)).name}: {fitted}{stale}")


def calibration_record(cal: CalibrationFile | None, path: str | Path | None
                       ) -> dict[str, Any] | None:
    """What a result file records of the calibration in force (None without one)."""
    if cal is None or path is None:
        return None
    return {"path": str(path), "sha256": file_sha256(path), "cluster": cal.cluster,
            "date": cal.date, "packaged_tables_changed": tables_changed(cal),
            "fitted": [{"table": t, "parameter": p, "value": v}
                       for (t, p), v in cal.fitted.items()]}


@contextmanager
def calibration_in_force(path: str | Path | None, option: str = "--calibration"
                         ) -> Iterator[CalibrationFile | None]:
    """Apply the calibration file at ``path`` for the block (nothing when None)."""
    if path is None:
        yield None
        return
    cal = read_calibration(path, option)
    with tables_in_force(calibrated_tables_of(cal.fitted), calibration_key(cal),
                         calibration_label(cal, path)):
        yield cal


__all__ = ["SCHEMA", "STATUSES", "CalibrationFile", "calibrated_tables_of",
           "calibration_document", "calibration_in_force", "calibration_record",
           "read_calibration", "render_yaml"]

"""Job traces: the Philly trace, Alibaba pod lists and the toolkit's own CSV, row-checked.

A trace is read into arrays (submit time, run time, GPUs, priority, optional TP and
model) sorted by submit time. The format is told by the header:

* ``philly`` (columns ``timestamp,duration,num_gpus``): submit = ``timestamp``
  (``YYYY-MM-DD HH:MM:SS``) relative to the earliest; run time = ``duration`` (s);
  priority 1 for jobs of at least ``priority_min_gpus`` GPUs.
* ``alibaba-openb`` (``num_gpu,creation_time,scheduled_time,deletion_time``, and ``qos``):
  submit = ``creation_time``; run time = ``deletion_time - scheduled_time``; a fractional
  GPU (``gpu_milli`` < 1000) counts as one GPU; priority 1 for ``qos`` ``LS`` or
  ``Guaranteed``; pods with no GPU or never scheduled are not jobs (counted as ignored).
* ``supernode`` (``submit_s,duration_s,gpus``, and ``priority``, ``tp``, ``model``,
  ``name``): as named; ``tp`` and ``model`` fix the job's shape.

Every row is checked; a bad row is a :class:`RowError` naming its line (the header is line
1). By default the first bad row stops the load with an :class:`InputError` that says how
many rows are bad; with ``skip_bad_rows`` they are left out and reported.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import Literal, overload

import numpy as np

from supernode.bounds import MAX_TRACE_JOBS
from supernode.errors import InputError
from supernode.inputs import read_text_file
from supernode.scheduler.philly_columns import philly_rows

#: Largest trace file read, in bytes (64 MiB), and most rows.
MAX_TRACE_BYTES = 64 * 2**20
MAX_TRACE_ROWS = MAX_TRACE_JOBS
#: Bundled traces by name (``data/traces``).
BUNDLED = {"philly": "philly.csv", "alibaba-openb": "openb_pod_list_default.csv"}
FORMATS = {
    "supernode": ("submit_s", "duration_s", "gpus"),
    "philly": ("timestamp", "duration", "num_gpus"),
    "alibaba-openb": ("num_gpu", "creation_time", "scheduled_time", "deletion_time"),
}
#: Alibaba QoS classes that get priority 1.
HIGH_QOS = ("LS", "Guaranteed")


@dataclass(frozen=True)
class RowError:
    """One bad row: its line (header = 1), the column and what is wrong."""

    line: int
    column: str
    message: str

    def to_dict(self) -> dict:
        """``{"line", "column", "message"}``."""
        return {"line": self.line, "column": self.column, "message": self.message}


@dataclass(frozen=True)
class TraceRules:
    """What the rows are checked against: the cluster's GPUs and the shape rules."""

    max_gpus: int
    priority_min_gpus: int = 8
    tp_ok: Callable[[int, int], str | None] = field(default=lambda gpus, tp: None)
    model_index: Callable[[str], int | None] = field(default=lambda name: None)


@dataclass(frozen=True)
class Trace:
    """Jobs sorted by submit time (arrays), with what was skipped or ignored."""

    name: str
    format: str
    submit_s: np.ndarray
    duration_s: np.ndarray
    gpus: np.ndarray
    priority: np.ndarray
    tp: np.ndarray
    model: np.ndarray
    line: np.ndarray
    skipped: tuple[RowError, ...] = ()
    ignored_rows: int = 0

    def __len__(self) -> int:
        return len(self.submit_s)

    def head(self, jobs: int) -> Trace:
        """The first ``jobs`` jobs by submit time."""
        return replace(self, **{k: getattr(self, k)[:jobs] for k in
                                ("submit_s", "duration_s", "gpus", "priority", "tp", "model",
                                 "line")})

    def summary(self) -> dict:
        """Counts and spans for reports (SI units)."""
        span = float(self.submit_s[-1] - self.submit_s[0]) if len(self) else 0.0
        return {"name": self.name, "format": self.format, "jobs": len(self),
                "gpu_seconds": float((self.duration_s * self.gpus).sum()),
                "submit_span_s": span, "max_gpus": int(self.gpus.max()) if len(self) else 0,
                "skipped_rows": len(self.skipped), "ignored_rows": self.ignored_rows}


def trace_source(name_or_path: str) -> tuple[str, str]:
    """(display name, path) of a bundled trace name or a file path."""
    if name_or_path in BUNDLED and not Path(name_or_path).exists():
        path = resources.files("supernode") / "data" / "traces" / BUNDLED[name_or_path]
        return name_or_path, str(path)
    return Path(name_or_path).name, name_or_path


def load_trace(name_or_path: str, rules: TraceRules, skip_bad_rows: bool = False) -> Trace:
    """Read and check a trace (bundled name or CSV path); see the module doc."""
    name, path = trace_source(name_or_path)
    text = read_text_file(path, "--trace", MAX_TRACE_BYTES)
    return parse_trace(text, name, rules, skip_bad_rows, source=name_or_path)


def parse_trace(text: str, name: str, rules: TraceRules, skip_bad_rows: bool = False,
                source: str | None = None) -> Trace:
    """Parse CSV ``text`` (see :func:`load_trace`)."""
    reader = csv.reader(io.StringIO(text))
    header = [h.strip() for h in next(reader, [])]
    fmt = detect_format(header, source)
    col = {h: i for i, h in enumerate(header)}
    parse_row = _ROW_PARSERS[fmt]
    records = list(reader)
    if fmt == "philly" and len(records) <= MAX_TRACE_ROWS and (plain := philly_rows(
            records, header, rules.max_gpus, rules.priority_min_gpus)) is not None:
        return _assemble(name, fmt, plain, (), 0)  # every row plain: the same numbers
    rows, errors, ignored = [], [], 0
    for line, fields in enumerate(records, start=2):
        if not fields or all(not f.strip() for f in fields):
            continue
        if line - 1 > MAX_TRACE_ROWS:
            raise InputError("--trace", f"more than {MAX_TRACE_ROWS:,} rows; cut the trace",
                             source=source)
        if len(fields) != len(header):
            errors.append(RowError(line, "", f"has {len(fields)} fields, the header "
                                             f"{len(header)}"))
            continue
        try:
            row = parse_row(fields, col, rules)
        except _BadCell as bad:
            errors.append(RowError(line, bad.column, bad.message))
            continue
        if row is None:
            ignored += 1
            continue
        rows.append((*row, line))
    if errors and not skip_bad_rows:
        raise _stop(errors, source)
    return _assemble(name, fmt, rows, tuple(errors), ignored)


def detect_format(header: list[str], source: str | None) -> str:
    """The format whose required columns the header has; InputError naming what is
    missing otherwise."""
    names = set(header)
    for fmt, needed in FORMATS.items():
        if set(needed) <= names:
            return fmt
    best = max(FORMATS, key=lambda f: len(set(FORMATS[f]) & names))
    missing = [c for c in FORMATS[best] if c not in names]
    if not set(FORMATS[best]) & names:
        known = "; ".join(f"{f}: {','.join(c)}" for f, c in FORMATS.items())
        raise InputError("header", f"not a known trace format (columns needed — {known})",
                         source=source)
    raise InputError("header", f"missing column{'s' * (len(missing) > 1)} "
                               f"{', '.join(missing)} (the {best} format needs "
                               f"{', '.join(FORMATS[best])})", source=source)


def _stop(errors: list[RowError], source: str | None) -> InputError:
    first = errors[0]
    more = len(errors) - 1
    lines = ", ".join(str(e.line) for e in errors[1:6]) + (", ..." if more > 5 else "")
    tail = f" ({more} more bad row{'s' * (more > 1)}: line {lines})" if more else ""
    where = f"line {first.line}" + (f": {first.column}" if first.column else "")
    return InputError(where, f"{first.message}{tail}; --skip-bad-rows runs the rest",
                      source=source)


class _BadCell(Exception):
    def __init__(self, column: str, message: str) -> None:
        super().__init__(message)
        self.column, self.message = column, message


@overload
def _number(fields: list[str], col: dict[str, int], name: str,
            optional: Literal[False] = False) -> float: ...
@overload
def _number(fields: list[str], col: dict[str, int], name: str,
            optional: Literal[True]) -> float | None: ...


def _number(fields: list[str], col: dict[str, int], name: str,
            optional: bool = False) -> float | None:
    text = fields[col[name]].strip() if name in col else ""
    if not text:
        if optional:
            return None
        raise _BadCell(name, "is empty; a number is needed")
    try:
        value = float(text)
    except ValueError:
        raise _BadCell(name, f"{text!r} is not a number") from None
    if not math.isfinite(value):
        raise _BadCell(name, f"{text!r} is not a finite number")
    return value


def _gpus(value: float, column: str, rules: TraceRules) -> int:
    if value != int(value) or value < 1:
        raise _BadCell(column, f"must be a whole number of GPUs ≥ 1, got {value:g}")
    if value > rules.max_gpus:
        raise _BadCell(column, f"{int(value):,} GPUs is larger than the cluster "
                               f"({rules.max_gpus:,} GPUs)")
    return int(value)


def _duration(value: float, column: str) -> float:
    if value <= 0:
        raise _BadCell(column, f"must be a positive run time in seconds, got {value:g}")
    return value


def _philly(fields, col, rules):
    text = fields[col["timestamp"]].strip()
    try:
        when = dt.datetime.fromisoformat(text).replace(tzinfo=dt.UTC).timestamp()
    except ValueError:
        raise _BadCell("timestamp", f"{text!r} is not a time like 2017-10-07 01:11:39"
                       ) from None
    duration = _duration(_number(fields, col, "duration"), "duration")
    gpus = _gpus(_number(fields, col, "num_gpus"), "num_gpus", rules)
    return when, duration, gpus, int(gpus >= rules.priority_min_gpus), -1, -1


def _alibaba(fields, col, rules):
    count = _number(fields, col, "num_gpu")
    milli = _number(fields, col, "gpu_milli", optional=True)
    if count == 0 or (milli is not None and milli == 0):
        return None
    scheduled = _number(fields, col, "scheduled_time", optional=True)
    if scheduled is None:
        return None
    created = _number(fields, col, "creation_time")
    deleted = _number(fields, col, "deletion_time")
    if deleted - scheduled <= 0:
        raise _BadCell("deletion_time", f"deletion {deleted:g} s is not after scheduling "
                                        f"{scheduled:g} s (run time must be positive)")
    gpus = _gpus(max(count, 1.0), "num_gpu", rules)
    qos = fields[col["qos"]].strip() if "qos" in col else ""
    return created, deleted - scheduled, gpus, int(qos in HIGH_QOS), -1, -1


def _supernode(fields, col, rules):
    submit = _number(fields, col, "submit_s")
    if submit < 0:
        raise _BadCell("submit_s", f"must be ≥ 0 s, got {submit:g}")
    duration = _duration(_number(fields, col, "duration_s"), "duration_s")
    gpus = _gpus(_number(fields, col, "gpus"), "gpus", rules)
    priority = _number(fields, col, "priority", optional=True)
    if priority is not None and (priority != int(priority) or not 0 <= priority <= 1000):
        raise _BadCell("priority", f"must be a whole number in 0..1000, got {priority:g}")
    tp = _number(fields, col, "tp", optional=True)
    if tp is not None:
        problem = rules.tp_ok(gpus, int(tp)) if tp == int(tp) else "must be a whole number"
        if problem:
            raise _BadCell("tp", problem)
    model = fields[col["model"]].strip() if "model" in col else ""
    index = -1
    if model:
        found = rules.model_index(model)
        if found is None:
            raise _BadCell("model", f"unknown model {model!r} (see job-models.yaml)")
        index = found
    prio = int(priority) if priority is not None else int(gpus >= rules.priority_min_gpus)
    return submit, duration, gpus, prio, int(tp) if tp is not None else -1, index


_ROW_PARSERS = {"philly": _philly, "alibaba-openb": _alibaba, "supernode": _supernode}


def _assemble(name, fmt, rows, errors, ignored) -> Trace:
    data = np.asarray(rows, dtype=np.float64).reshape(-1, 7)
    order = np.lexsort((data[:, 6], data[:, 0]))
    data = data[order]
    submit = data[:, 0] - (data[0, 0] if len(data) and fmt == "philly" else 0.0)
    return Trace(name, fmt, submit, data[:, 1], data[:, 2].astype(np.int64),
                 data[:, 3].astype(np.int64), data[:, 4].astype(np.int64),
                 data[:, 5].astype(np.int64), data[:, 6].astype(np.int64), errors, ignored)

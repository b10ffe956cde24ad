"""The Philly trace's rows parsed column by column (numpy), when every row is plain.

:func:`supernode.scheduler.trace.parse_trace` checks a trace row by row in Python, which
for the bundled Philly trace (82,247 rows) cost ~0.33 CPU-s of every design review. A
trace whose rows are all plain (empty lines aside, each has the header's field count, its
``timestamp`` written exactly ``YYYY-MM-DD HH:MM:SS``, finite positive run times, whole
GPU counts within the cluster) is parsed here a column at a time to the very same numbers
(~0.19 CPU-s with the file's reading); any other trace (a bad row, a row of empty cells,
another spelling of the time) returns None and the row-by-row parser reads it, with its
checks and messages (``tests/test_scheduler_trace.py`` compares the two).
"""

from __future__ import annotations

import re

import numpy as np

#: The one spelling of ``timestamp`` parsed here (the bundled trace's): years 1000-9999,
#: hours 00-23.
PLAIN_TIME = r"[1-9]\d{3}-[01]\d-[0-3]\d (?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d"
_ALL_PLAIN = re.compile(rf"(?:{PLAIN_TIME}\n)*{PLAIN_TIME}")


def philly_rows(records: list[list[str]], header: list[str], max_gpus: int,
                priority_min_gpus: int) -> np.ndarray | None:
    """The rows of a Philly trace (``records``: the CSV records after the ``header``) as
    ``parse_trace`` assembles them (float64, one row per record:
    submit time in s since the epoch (UTC), run time in s, GPUs, priority, TP -1, model -1,
    line number), or None when some record is not plain (see the module doc)."""
    col = {h: i for i, h in enumerate(header)}
    lines = np.flatnonzero([bool(r) for r in records]) + 2  # an empty line is no row
    rows = [r for r in records if r] if len(lines) < len(records) else records
    if not rows or any(len(r) != len(header) for r in rows):
        return None
    columns = list(zip(*rows, strict=True))
    stamps = columns[col["timestamp"]]
    if not _ALL_PLAIN.fullmatch("\n".join(stamps)):
        return None
    try:  # the calendar: numpy refuses a day or month out of range, as datetime does
        when = np.array(stamps, dtype="datetime64[s]").astype(np.int64).astype(np.float64)
        duration = np.fromiter(map(float, columns[col["duration"]]), np.float64,
                               len(rows))
        gpus = np.fromiter(map(float, columns[col["num_gpus"]]), np.float64, len(rows))
    except ValueError:  # an empty cell or not a number: the row-by-row parser says which
        return None
    if not (np.all(np.isfinite(duration)) and np.all(duration > 0)
            and np.all(np.isfinite(gpus)) and np.all(gpus == np.floor(gpus))
            and np.all(gpus >= 1) and np.all(gpus <= max_gpus)):
        return None
    out = np.empty((len(rows), 7))
    out[:, 0], out[:, 1], out[:, 2] = when, duration, gpus
    out[:, 3] = gpus >= priority_min_gpus
    out[:, 4:6] = -1.0
    out[:, 6] = lines
    return out

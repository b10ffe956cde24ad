"""What a serving deployment is asked to do: lengths, load and latency targets (SI)."""

from __future__ import annotations

from dataclasses import dataclass

#: Phases a measurement or a pool may cover.
PHASES = ("both", "prefill", "decode")


@dataclass(frozen=True)
class Traffic:
    """Mean prompt (``isl``) and generated (``osl``) tokens per request; ``concurrency``
    (requests in flight in the whole system, closed loop) or ``request_rate`` (requests/s,
    open loop), both None for an offline run at saturation; latency targets in seconds
    (None: none); ``phase`` the side measured (``both`` end to end)."""

    isl: float
    osl: float | None
    concurrency: float | None = None
    request_rate: float | None = None
    ttft_s: float | None = None
    tpot_s: float | None = None
    phase: str = "both"

    @property
    def decode_context(self) -> float:
        """Mean cached tokens per sequence while it decodes: ``isl + osl / 2``."""
        return self.isl + (self.osl or 0.0) / 2.0

    @property
    def peak_context(self) -> float:
        """Cached tokens a sequence reaches (what a no-eviction scheduler reserves)."""
        return self.isl + (self.osl or 0.0)


#: Most rows a length trace may hold, and its largest file (bytes).
MAX_TRACE_ROWS = 10_000_000
MAX_TRACE_BYTES = 256 * 2**20


def trace_means(path: str) -> tuple[float, float, int]:
    """Mean (input, output) tokens of a CSV trace with columns ``input_tokens`` and
    ``output_tokens`` (one request a row), and its row count; InputError on bad rows or a
    file that is not a regular UTF-8 file of at most :data:`MAX_TRACE_BYTES`."""
    import csv
    import io
    import math

    from supernode.errors import InputError
    from supernode.inputs import read_text_file

    handle = io.StringIO(read_text_file(path, "trace_file", MAX_TRACE_BYTES), newline="")
    total_in = total_out = 0.0
    rows = 0
    with handle:
        reader = csv.DictReader(handle)
        names = reader.fieldnames or []
        for column in ("input_tokens", "output_tokens"):
            if column not in names:
                raise InputError("trace_file", f"needs a column {column!r}; found "
                                               f"{', '.join(names) or 'none'}")
        for index, line in enumerate(reader, start=2):
            values = []
            for column in ("input_tokens", "output_tokens"):
                try:
                    value = float(line[column] or "")
                except ValueError:
                    value = math.nan
                if not math.isfinite(value) or value <= 0:
                    raise InputError(f"trace_file[row {index}].{column}",
                                     f"a positive number of tokens, got {line[column]!r}")
                values.append(value)
            total_in, total_out, rows = total_in + values[0], total_out + values[1], rows + 1
            if rows > MAX_TRACE_ROWS:
                raise InputError("trace_file", f"more than {MAX_TRACE_ROWS:,} rows")
    if rows == 0:
        raise InputError("trace_file", "no requests (header only)")
    return total_in / rows, total_out / rows, rows

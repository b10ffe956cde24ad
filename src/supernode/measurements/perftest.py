"""Parse perftest output: ``ib_write_bw``, ``ib_write_lat`` and their read/send kin.

The format (linux-rdma/perftest ``src/perftest_parameters.h``): a dashed banner with the
test title (``RDMA_Write BW Test``, ``RDMA_Write Latency Test``) and ``key : value``
settings (Device, Number of qps, Link type, Mtu, Connection type — two per line at
times), addresses, then a header and rows. Bandwidth: ``#bytes #iterations BW
peak[Gb/sec] BW average[Gb/sec] MsgRate[Mpps]`` (``[MiB/sec]`` without
``--report_gbits``; older versions print ``[MB/sec]``, also 2^20 bytes). Latency:
``#bytes #iterations t_min[usec] t_max[usec] t_typical[usec] t_avg[usec] t_stdev[usec]
99% percentile[usec] 99.9% percentile[usec]``. With ``--run_infinitely`` BW peak is 0.00
(not measured). A row whose field count differs from its header is an error at its line.
"""

from __future__ import annotations

import math
import re

from supernode.errors import InputError
from supernode.measurements.benchtext import result_lines
from supernode.measurements.model import LinkResult, MeasurementSet
from supernode.units import GBIT_PER_S, US

_TITLE = re.compile(r"^\s*(RDMA_Write|RDMA_Read|Send|Atomic|RDMA_Write_imm)\s+(BW|Latency)\s+Test")
_SETTING = re.compile(r"([A-Za-z][A-Za-z .*]*?)\s*:\s*(\S+)")
_COLUMN = re.compile(r"#bytes|#iterations|BW peak\[[^\]]+\]|BW average\[[^\]]+\]|"
                     r"MsgRate\[Mpps\]|t_min\[usec\]|t_max\[usec\]|t_typical\[usec\]|"
                     r"t_avg\[usec\]|t_stdev\[usec\]|99% percentile\[usec\]|"
                     r"99\.9% percentile\[usec\]|tps average")
_BW_UNITS = {"Gb/sec": GBIT_PER_S, "MiB/sec": 2.0**20, "MB/sec": 2.0**20}
_TEST_NAMES = {("RDMA_Write", "BW"): "ib_write_bw", ("RDMA_Write", "Latency"): "ib_write_lat",
               ("RDMA_Read", "BW"): "ib_read_bw", ("RDMA_Read", "Latency"): "ib_read_lat",
               ("Send", "BW"): "ib_send_bw", ("Send", "Latency"): "ib_send_lat",
               ("Atomic", "BW"): "ib_atomic_bw", ("Atomic", "Latency"): "ib_atomic_lat",
               ("RDMA_Write_imm", "BW"): "ib_write_bw"}
_LAT_FIELDS = {"t_min[usec]": "t_min_s", "t_max[usec]": "t_max_s",
               "t_typical[usec]": "t_typical_s", "t_avg[usec]": "t_avg_s",
               "t_stdev[usec]": "t_stdev_s", "99% percentile[usec]": "t_p99_s",
               "99.9% percentile[usec]": "t_p999_s"}
_SETTINGS = {"Device": "device", "Number of qps": "qps", "Link type": "link_type",
             "Mtu": "mtu", "Connection type": "connection", "Transport type": "transport"}


def looks_like_perftest(text: str) -> bool:
    """True when ``text`` holds a perftest result header."""
    head = text[: 4 * 2**20]
    return "#bytes" in head and ("BW average[" in head or "t_min[usec]" in head)


def _row(tokens: list[str], columns: list[str], test: str, number: int,
         source: str) -> LinkResult:
    if len(tokens) != len(columns):
        raise InputError(f"line {number}", f"row has {len(tokens)} fields; the header names "
                                           f"{len(columns)} ({' '.join(columns)})",
                         source=source)
    values: dict = {}
    for token, column in zip(tokens, columns, strict=True):
        try:
            value = float(token)
        except ValueError:
            raise InputError(f"line {number}", f"{column} is {token!r}; a number is required",
                             source=source) from None
        if not math.isfinite(value) or value < 0:
            raise InputError(f"line {number}", f"{column} is {token}; a finite number >= 0 "
                                               "is required", source=source)
        values[column] = value
    fields: dict = {"message_bytes": int(values.pop("#bytes")),
                    "iterations": int(values.pop("#iterations"))}
    for column, value in values.items():
        if column.startswith("BW "):
            unit = _BW_UNITS.get(column.split("[")[1].rstrip("]"))
            if unit is None:
                raise InputError(f"line {number}", f"unknown bandwidth unit in {column!r}",
                                 source=source)
            key = "bw_peak_bytes_per_s" if "peak" in column else "bw_average_bytes_per_s"
            fields[key] = value * unit if value > 0 or "average" in column else None
        elif column == "MsgRate[Mpps]":
            fields["message_rate_per_s"] = value * 1e6
        elif column in _LAT_FIELDS:
            fields[_LAT_FIELDS[column]] = value * US
    return LinkResult(test=test, line=number, **fields)


def parse_perftest(text: str, source: str = "<input>") -> list[MeasurementSet]:
    """One :class:`MeasurementSet` per perftest run in ``text`` (tool ``perftest``)."""
    runs: list[dict] = []
    current: dict | None = None
    columns: list[str] | None = None
    for number, line in result_lines(text):
        stripped = line.strip()
        if (m := _TITLE.match(line)) is not None:
            current = {"test": _TEST_NAMES[(m.group(1), m.group(2))], "settings": {},
                       "rows": [], "line": number}
            runs.append(current)
            columns = None
        elif stripped.startswith("#bytes"):
            columns = _COLUMN.findall(stripped)
            if current is None:
                kind = "ib_write_lat" if "t_min[usec]" in columns else "ib_write_bw"
                current = {"test": kind, "settings": {}, "rows": [], "line": number,
                           "untitled": True}
                runs.append(current)
        elif stripped.startswith("---"):
            columns = None
        elif columns is not None and stripped[:1].isdigit():
            assert current is not None  # a header row opened a run (or the title did)
            current["rows"].append(_row(stripped.split(), columns, current["test"], number,
                                        source))
        elif current is not None and columns is None:
            for key, value in _SETTING.findall(line):
                if key.strip() in _SETTINGS:
                    current["settings"][_SETTINGS[key.strip()]] = value
    sets = [_as_set(run, source) for run in runs if run["rows"]]
    if not sets:
        raise InputError("", "no perftest result rows found (expected a '#bytes #iterations "
                             "...' header followed by rows)", source=source)
    return sets


def _as_set(run: dict, source: str) -> MeasurementSet:
    notes = []
    if run.get("untitled"):
        notes.append(f"no test title: taken as {run['test']} from its columns")
    if any(r.bw_peak_bytes_per_s is None for r in run["rows"]) and run["test"].endswith("bw"):
        notes.append("BW peak not measured (0.00, e.g. --run_infinitely): averages only")
    return MeasurementSet(source=source, tool="perftest", op=run["test"], op_source="title",
                          links=tuple(run["rows"]), attributes=dict(run["settings"]),
                          notes=tuple(notes))

"""Parse ``nvbandwidth`` output (NVIDIA/nvbandwidth ``output.cpp``, ``inline_common.h``).

Plain-text output: a preamble (``nvbandwidth Version:``, ``CUDA Runtime Version:``,
``Driver Version:``, the host name, ``Device 0: NVIDIA H100 ... (00000000:19:00)``),
then per test case ``Running <test>.``, a description (``memcpy CE GPU(row) <- GPU(column)
bandwidth (GB/s)``; latency cases end in ``(ns)``), a header of column labels, one row per
source (label then values, ``N/A`` on the diagonal of some cases), a blank line and
``SUM <test> <value>``. ``./nvbandwidth | grep SUM`` keeps only the SUM lines; both
forms are read. A matrix row with the wrong number of values is an error at its line.
"""

from __future__ import annotations

import math
import re

from supernode.errors import InputError
from supernode.measurements.benchtext import result_lines
from supernode.measurements.model import CopyResult, MeasurementSet
from supernode.units import GBYTE_PER_S, NS

_RUNNING = re.compile(r"^Running (\S+)\.$")
_SUM = re.compile(r"^(?:SUM|&&&& PERF) (\S+) ([-+0-9.eE]+|[-+]?(?:nan|inf))", re.IGNORECASE)
_DEVICE = re.compile(r"^Device (\d+): (.+?)\s*(?:\(([0-9a-fA-F:.]+)\))?$")
_VERSION = re.compile(r"^nvbandwidth Version:\s*(\S+)")
_DESCRIPTION = re.compile(r"\((GB/s|ns|us)\)\s*$")


def looks_like_nvbandwidth(text: str) -> bool:
    """True when ``text`` holds nvbandwidth test cases or SUM lines."""
    return any(_RUNNING.match(line.strip()) or _SUM.match(line.strip())
               for _, line in result_lines(text[: 4 * 2**20]))


def _scale(test: str, description: str | None) -> float:
    unit = _DESCRIPTION.search(description or "")
    if unit is not None:
        return {"GB/s": GBYTE_PER_S, "ns": NS, "us": 1e-6}[unit.group(1)]
    return NS if "latency" in test else GBYTE_PER_S


class _State:
    def __init__(self, source: str) -> None:
        self.source = source
        self.cases: dict[str, dict] = {}
        self.case: dict | None = None
        self.devices: list[str] = []
        self.version: str | None = None

    def matrix_line(self, number: int, line: str) -> None:
        """A line of the open case: its description, its header, or a matrix row."""
        case = self.case
        assert case is not None  # feed passes the lines of an open case only
        if case["description"] is None:
            case["description"] = line.strip()
        elif case["columns"] is None:
            case["columns"] = line.split()
        else:
            tokens = line.split()
            if len(tokens) != len(case["columns"]) + 1:
                raise InputError(f"line {number}", f"matrix row has {len(tokens) - 1} values; "
                                 f"the header has {len(case['columns'])} columns",
                                 source=self.source)
            scale = _scale(case["test"], case["description"])
            row: list[float | None] = []
            for token in tokens[1:]:
                if token.upper() == "N/A":
                    row.append(None)
                    continue
                try:
                    value = float(token)
                except ValueError:
                    value = math.nan
                if not math.isfinite(value):
                    raise InputError(f"line {number}", f"value {token!r} is not a finite number",
                                     source=self.source)
                row.append(value * scale)
            case["labels"].append(tokens[0])
            case["rows"].append(tuple(row))

    def feed(self, number: int, line: str) -> None:
        """Take one line of output."""
        stripped = line.strip()
        if (m := _RUNNING.match(stripped)) is not None:
            self.case = self.cases.setdefault(m.group(1), self._new(m.group(1), number))
        elif (m := _SUM.match(stripped)) is not None:
            case = self.cases.setdefault(m.group(1), self._new(m.group(1), number))
            value = float(m.group(2))
            if not math.isfinite(value):
                raise InputError(f"line {number}", "SUM is not a finite number",
                                 source=self.source)
            case["sum"] = value * _scale(m.group(1), case["description"])
            self.case = None
        elif (m := _DEVICE.match(stripped)) is not None and self.case is None:
            self.devices.append(m.group(2))
        elif (m := _VERSION.match(stripped)) is not None:
            self.version = m.group(1)
        elif not stripped:
            if self.case is not None and self.case["rows"]:
                self.case = None
        elif self.case is not None:
            self.matrix_line(number, stripped)

    @staticmethod
    def _new(test: str, number: int) -> dict:
        return {"test": test, "description": None, "columns": None, "labels": [], "rows": [],
                "sum": None, "line": number}


def parse_nvbandwidth(text: str, source: str = "<input>") -> MeasurementSet:
    """The test cases of one nvbandwidth run as a :class:`MeasurementSet` (tool nvbandwidth)."""
    state = _State(source)
    for number, line in result_lines(text):
        state.feed(number, line)
    copies = []
    for case in state.cases.values():
        if not case["rows"] and case["sum"] is None:
            continue
        copies.append(CopyResult(
            test=case["test"], description=case["description"],
            row_labels=tuple(case["labels"]), column_labels=tuple(case["columns"] or ()),
            values=tuple(case["rows"]), sum_value=case["sum"],
            unit="bytes_per_s" if _scale(case["test"], case["description"]) == GBYTE_PER_S
            else "s", line=case["line"]))
    if not copies:
        raise InputError("", "no nvbandwidth results found (expected 'Running <test>.' "
                             "matrices or 'SUM <test> <value>' lines)", source=source)
    return MeasurementSet(source=source, tool="nvbandwidth", tool_version=state.version,
                          copies=tuple(copies),
                          attributes={"devices": tuple(state.devices)})

"""Prometheus text exposition format 0.0.4: a bounded parser and a writer.

The parser checks the syntax of every line (``# HELP``/``# TYPE`` comments, samples
``name{label="value",...} value [timestamp_ms]``, an OpenMetrics ``# EOF``) and reports the
first malformed line as ``line N: what is wrong``. It keeps only the metrics a caller asks
for; other metrics are counted and skipped (documented in docs/monitor.md). Limits, each
refused with a clear error: :class:`Limits` (bytes per line, labels per series, bytes per
label value, kept series per snapshot). Label values are unescaped as Prometheus' text
parser does (``\\\\``, ``\\"``, ``\\n``; other backslashes kept).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from supernode.errors import InputError
from supernode.monitor.storage import NAME, Labels

_NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
_VALUE = (r"[+-]?(?:[iI][nN][fF](?:[iI][nN][iI][tT][yY])?|[nN][aA][nN]"
          r"|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)")
_LABEL = r'[ \t]*[a-zA-Z_][a-zA-Z0-9_]*[ \t]*=[ \t]*"(?:[^"\\\n]|\\.)*"[ \t]*'
SAMPLE = re.compile(rf"({_NAME})[ \t]*(\{{(?:{_LABEL},)*(?:{_LABEL})?\}})?[ \t]+({_VALUE})"
                    r"(?:[ \t]+(-?\d{1,19}))?[ \t]*")
LABEL_PAIR = re.compile(r'[ \t]*([a-zA-Z_][a-zA-Z0-9_]*)[ \t]*=[ \t]*"((?:[^"\\\n]|\\.)*)"')
TYPES = {"counter", "gauge", "histogram", "summary", "untyped", "info", "stateset",
         "gaugehistogram", "unknown"}
_ESCAPES = {"\\\\": "\\", '\\"': '"', "\\n": "\n"}
_UNESCAPE = re.compile(r'\\[\\"n]')


@dataclass(frozen=True)
class Limits:
    """What one snapshot may hold."""

    max_line_bytes: int = 65_536
    max_labels: int = 64
    max_label_value_bytes: int = 4_096
    max_series: int = 1_000_000
    max_skipped_names: int = 10_000


@dataclass
class Snapshot:
    """The kept samples of one exposition text, and what was skipped."""

    source: str
    samples: list[tuple[Labels, float, int | None]] = field(default_factory=list)
    skipped_samples: int = 0
    skipped_names: dict[str, int] = field(default_factory=dict)
    lines: int = 0

    @property
    def has_timestamps(self) -> bool:
        """True when any kept sample carries its own timestamp."""
        return any(ts is not None for _, _, ts in self.samples)


def _unescape(value: str) -> str:
    return _UNESCAPE.sub(lambda m: _ESCAPES[m.group(0)], value)


def _error(source: str, number: int, message: str) -> InputError:
    return InputError(f"line {number}", message, source=source)


def _comment(line: str, source: str, number: int) -> bool:
    """Check a ``#`` line; True when it is ``# EOF``."""
    parts = line[1:].split(None, 3)
    if parts[:1] == ["EOF"] and len(parts) == 1:
        return True
    if parts[:1] == ["TYPE"]:
        if len(parts) != 3 or not re.fullmatch(_NAME, parts[1]) or parts[2] not in TYPES:
            raise _error(source, number, "malformed '# TYPE name type' line (types: "
                         f"{', '.join(sorted(TYPES))})")
    elif parts[:1] == ["HELP"] and (len(parts) < 2 or not re.fullmatch(_NAME, parts[1])):
        raise _error(source, number, "malformed '# HELP name text' line")
    return False


def _labels(name: str, block: str | None, limits: Limits, source: str,
            number: int) -> Labels:
    pairs = [(NAME, name)]
    if block:
        seen = {NAME}
        for key, raw in LABEL_PAIR.findall(block):
            if key in seen:
                raise _error(source, number, f"label {key!r} given twice")
            value = _unescape(raw)
            if len(value.encode()) > limits.max_label_value_bytes:
                raise _error(source, number, f"label {key!r} is {len(value.encode()):,} bytes;"
                             f" the limit is {limits.max_label_value_bytes:,}")
            seen.add(key)
            pairs.append((key, value))
        if len(pairs) - 1 > limits.max_labels:
            raise _error(source, number, f"series has {len(pairs) - 1:,} labels; the limit "
                         f"is {limits.max_labels}")
    return tuple(sorted(p for p in pairs if p[1] != ""))


def _value(text: str) -> float:
    lowered = text.lower().lstrip("+")
    if lowered in ("inf", "infinity"):
        return math.inf
    if lowered in ("-inf", "-infinity"):
        return -math.inf
    return math.nan if lowered in ("nan", "-nan") else float(text)


def parse_exposition(text: str, source: str, keep: Callable[[str], bool] | None = None,
                     limits: Limits = Limits()) -> Snapshot:
    """Parse exposition ``text``; keep samples of metrics for which ``keep(name)`` is true."""
    snapshot = Snapshot(source)
    seen: dict[tuple[Labels, int | None], int] = {}
    for number, line in enumerate(text.split("\n"), start=1):
        snapshot.lines = number
        if len(line) > limits.max_line_bytes:
            raise _error(source, number, f"line is {len(line):,} characters; the limit is "
                         f"{limits.max_line_bytes:,}")
        stripped = line.strip(" \t\r")
        if not stripped:
            continue
        if stripped.startswith("#"):
            if _comment(stripped, source, number):
                break
            continue
        match = SAMPLE.fullmatch(stripped)
        if match is None:
            raise _error(source, number, "malformed sample; expected 'name{label=\"value\"} "
                         "value [timestamp_ms]' (text format 0.0.4)")
        name, block, raw_value, raw_ts = match.groups()
        if keep is not None and not keep(name):
            snapshot.skipped_samples += 1
            if name in snapshot.skipped_names or \
                    len(snapshot.skipped_names) < limits.max_skipped_names:
                snapshot.skipped_names[name] = snapshot.skipped_names.get(name, 0) + 1
            continue
        labels = _labels(name, block, limits, source, number)
        stamp = int(raw_ts) if raw_ts is not None else None
        if stamp is not None and abs(stamp) >= 2**63:
            raise _error(source, number, "timestamp out of the int64 millisecond range")
        first = seen.get((labels, stamp))
        if first is not None:
            raise _error(source, number, f"duplicate series (first at line {first})")
        seen[(labels, stamp)] = number
        if len(snapshot.samples) >= limits.max_series:
            raise _error(source, number, f"more than {limits.max_series:,} kept series in one "
                         "snapshot")
        snapshot.samples.append((labels, _value(raw_value), stamp))
    return snapshot


def escape_label_value(value: str) -> str:
    """A label value escaped for the text format."""
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def format_value(value: float) -> str:
    """A sample value in the text format (``+Inf``, ``NaN``, shortest round trip)."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return repr(float(value)) if value != int(value) or abs(value) >= 1e15 else str(int(value))


def exposition_text(families: Iterable[tuple[str, str, str, Iterable[dict[str, str]]]],
                    value: float = 1.0) -> str:
    """Text format of metric families ``(name, help, type, [labels, ...])``, each ``value``."""
    lines = []
    for name, help_text, kind, series in families:
        lines.append(f"# HELP {name} {help_text.replace(chr(92), chr(92) * 2)}")
        lines.append(f"# TYPE {name} {kind}")
        for labels in series:
            inner = ",".join(f'{k}="{escape_label_value(v)}"' for k, v in labels.items())
            lines.append(f"{name}{{{inner}}} {format_value(value)}")
    return "\n".join(lines) + "\n"

"""An in-memory series store with Prometheus' selection rules, for offline evaluation.

Series are keyed by their label set (a sorted tuple of ``(name, value)`` pairs, the metric
name under ``__name__``) and keep their creation order, as Prometheus' head block does.
Timestamps are integer milliseconds. A staleness marker (what Prometheus writes when a
recorded series disappears, or a ``stale`` value in a promtool test) hides the series from
selections at and after its time until a new sample arrives.

:class:`Semantics` holds the two boundary rules that changed in Prometheus 3.0: up to 2.x
the lookback window and range windows include their left edge (``[t - 5m, t]``); from 3.0
they exclude it (``(t - 5m, t]``).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator
from dataclasses import dataclass, field

Labels = tuple[tuple[str, str], ...]
NAME = "__name__"
#: Default lookback of an instant selector (Prometheus ``--query.lookback-delta``), ms.
LOOKBACK_MS = 5 * 60 * 1000


@dataclass(frozen=True)
class Semantics:
    """Window-boundary rules of the Prometheus version being mirrored."""

    left_open: bool = False  # Prometheus >= 3.0
    lookback_ms: int = LOOKBACK_MS

    @classmethod
    def for_version(cls, version: tuple[int, ...]) -> Semantics:
        """The rules of Prometheus ``version`` (major, minor, ...)."""
        return cls(left_open=version[0] >= 3)


def make_labels(mapping: dict[str, str]) -> Labels:
    """A label set from a mapping; empty values are dropped, as Prometheus does."""
    return tuple(sorted((k, v) for k, v in mapping.items() if v != ""))


def get(labels: Labels, name: str) -> str:
    """The value of label ``name`` ('' when absent)."""
    for key, value in labels:
        if key == name:
            return value
    return ""


def drop_name(labels: Labels) -> Labels:
    """``labels`` without the metric name."""
    for i, pair in enumerate(labels):
        if pair[0] == NAME:
            return labels[:i] + labels[i + 1:]
    return labels


def with_label(labels: Labels, name: str, value: str) -> Labels:
    """``labels`` with ``name`` set to ``value`` (removed when ``value`` is empty)."""
    rest = [p for p in labels if p[0] != name]
    if value != "":
        rest.append((name, value))
    return tuple(sorted(rest))


def with_name(labels: Labels, name: str) -> Labels:
    """``labels`` with the metric name set to ``name`` (kept sorted)."""
    rest = drop_name(labels)
    index = bisect.bisect_left([k for k, _ in rest], NAME)
    return rest[:index] + ((NAME, name),) + rest[index:]


def render_labels(labels: Labels) -> str:
    """``name{a="1", b="2"}`` as Prometheus prints a series."""
    name = get(labels, NAME)
    inner = ", ".join(f"{k}={_quoted(v)}" for k, v in labels if k != NAME)
    return f"{name}{{{inner}}}"


def _quoted(value: str) -> str:
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'


@dataclass
class Series:
    """One series: parallel lists of timestamps (ms), values and staleness flags."""

    labels: Labels
    times: list[int] = field(default_factory=list)
    values: list[float] = field(default_factory=list)
    stale: list[bool] = field(default_factory=list)

    def append(self, t_ms: int, value: float, stale: bool = False) -> None:
        """Add a sample; samples arrive in time order (a later one at the same time wins)."""
        if self.times and t_ms < self.times[-1]:
            index = bisect.bisect_left(self.times, t_ms)
            if index < len(self.times) and self.times[index] == t_ms:
                self.values[index], self.stale[index] = value, stale
                return
            self.times.insert(index, t_ms)
            self.values.insert(index, value)
            self.stale.insert(index, stale)
            return
        if self.times and t_ms == self.times[-1]:
            self.values[-1], self.stale[-1] = value, stale
            return
        self.times.append(t_ms)
        self.values.append(value)
        self.stale.append(stale)

    def instant(self, t_ms: int, semantics: Semantics) -> float | None:
        """The value an instant selector sees at ``t_ms``, or None."""
        index = bisect.bisect_right(self.times, t_ms) - 1
        if index < 0 or self.stale[index]:
            return None
        oldest = t_ms - semantics.lookback_ms
        seen = self.times[index]
        if seen < oldest or (semantics.left_open and seen == oldest):
            return None
        return self.values[index]

    def window(self, start_ms: int, end_ms: int, semantics: Semantics) -> list[tuple[int, float]]:
        """Non-stale samples with ``start < t <= end`` (``start <= t`` before Prometheus 3)."""
        lo = (bisect.bisect_right if semantics.left_open else bisect.bisect_left)(
            self.times, start_ms)
        hi = bisect.bisect_right(self.times, end_ms)
        return [(self.times[i], self.values[i]) for i in range(lo, hi) if not self.stale[i]]


class Storage:
    """Series by label set, in creation order, with an index by metric name."""

    def __init__(self) -> None:
        self._series: dict[Labels, Series] = {}
        self._by_name: dict[str, list[Series]] = {}

    def series(self, labels: Labels) -> Series:
        """The series of ``labels``, created when new."""
        found = self._series.get(labels)
        if found is None:
            found = Series(labels)
            self._series[labels] = found
            self._by_name.setdefault(get(labels, NAME), []).append(found)
        return found

    def add(self, labels: Labels, t_ms: int, value: float, stale: bool = False) -> None:
        """Append one sample to the series of ``labels``."""
        self.series(labels).append(t_ms, value, stale)

    def named(self, name: str) -> list[Series]:
        """Every series of metric ``name``, in creation order."""
        return self._by_name.get(name, [])

    def names(self) -> set[str]:
        """Metric names present."""
        return set(self._by_name)

    def __iter__(self) -> Iterator[Series]:
        return iter(self._series.values())

    def __len__(self) -> int:
        return len(self._series)

    def sample_count(self) -> int:
        """Samples stored (staleness markers included)."""
        return sum(len(s.times) for s in self._series.values())


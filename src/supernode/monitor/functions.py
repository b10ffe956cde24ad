"""PromQL's range functions and aggregations, written as Prometheus 2.42 computes them.

Each function follows ``promql/functions.go`` and ``promql/engine.go`` at v2.42.0 step for
step (same order of floating-point operations, Kahan-Neumaier sums where Prometheus uses
them), so the offline evaluator and ``promtool test rules`` agree to the last bit on the
series the tests use. Points are ``(t_ms, value)`` pairs in time order.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

Points = Sequence[tuple[int, float]]


def kahan_inc(inc: float, total: float, c: float) -> tuple[float, float]:
    """One Kahan-Neumaier summation step (``kahanSumInc``)."""
    t = total + inc
    if abs(total) >= abs(inc):
        c += (total - t) + inc
    else:
        c += (inc - t) + total
    return t, c


def extrapolated_rate(points: Points, start_ms: int, end_ms: int, range_s: float,
                      is_counter: bool, is_rate: bool) -> float | None:
    """``rate``/``increase``/``delta`` of ``points`` over the window ``[start, end]``.

    Counter resets add the value before the reset; the result is extrapolated to the window
    edges when the first/last sample lies within 1.1 average sample intervals of them, but
    never below a counter's zero point (``extrapolatedRate``). None with fewer than 2 points.
    """
    if len(points) < 2:
        return None
    result = points[-1][1] - points[0][1]
    if is_counter:
        previous = points[0][1]
        for _, value in points[1:]:
            if value < previous:
                result += previous
            previous = value
    to_start = (points[0][0] - start_ms) / 1000
    to_end = (end_ms - points[-1][0]) / 1000
    sampled = (points[-1][0] - points[0][0]) / 1000
    average = sampled / (len(points) - 1)
    if is_counter and result > 0 and points[0][1] >= 0:
        to_zero = sampled * (points[0][1] / result)
        if to_zero < to_start:
            to_start = to_zero
    threshold = average * 1.1
    interval = sampled
    interval += to_start if to_start < threshold else average / 2
    interval += to_end if to_end < threshold else average / 2
    factor = interval / sampled
    if is_rate:
        factor /= range_s
    return result * factor


def changes(points: Points) -> float:
    """Times the value changed (NaN to NaN is no change)."""
    count = 0
    previous = points[0][1]
    for _, value in points[1:]:
        if value != previous and not (math.isnan(value) and math.isnan(previous)):
            count += 1
        previous = value
    return float(count)


def resets(points: Points) -> float:
    """Times the value decreased (counter resets)."""
    count = 0
    previous = points[0][1]
    for _, value in points[1:]:
        if value < previous:
            count += 1
        previous = value
    return float(count)


def avg_over_time(points: Points) -> float:
    """Mean by the incremental Kahan form of ``funcAvgOverTime``."""
    mean = count = c = 0.0
    for _, value in points:
        count += 1
        if math.isinf(mean):
            if math.isinf(value) and (mean > 0) == (value > 0):
                continue
            if not math.isinf(value) and not math.isnan(value):
                continue
        mean, c = kahan_inc(value / count - mean / count, mean, c)
    return mean if math.isinf(mean) else mean + c


def sum_over_time(points: Points) -> float:
    """Kahan sum of the values."""
    total = c = 0.0
    for _, value in points:
        total, c = kahan_inc(value, total, c)
    return total if math.isinf(total) else total + c


def max_over_time(points: Points) -> float:
    """Largest value (a NaN is replaced by any later value)."""
    best = points[0][1]
    for _, value in points:
        if value > best or math.isnan(best):
            best = value
    return best


def min_over_time(points: Points) -> float:
    """Smallest value (a NaN is replaced by any later value)."""
    best = points[0][1]
    for _, value in points:
        if value < best or math.isnan(best):
            best = value
    return best


def stddev_over_time(points: Points) -> float:
    """Population standard deviation by Welford's method with Kahan sums."""
    count = mean = c_mean = aux = c_aux = 0.0
    for _, value in points:
        count += 1
        delta = value - (mean + c_mean)
        mean, c_mean = kahan_inc(delta / count, mean, c_mean)
        aux, c_aux = kahan_inc(delta * (value - (mean + c_mean)), aux, c_aux)
    return math.sqrt((aux + c_aux) / count)


#: Range functions that take only the points: name -> function.
OVER_TIME: dict[str, Callable[[Points], float]] = {
    "changes": changes,
    "resets": resets,
    "avg_over_time": avg_over_time,
    "sum_over_time": sum_over_time,
    "max_over_time": max_over_time,
    "min_over_time": min_over_time,
    "stddev_over_time": stddev_over_time,
    "count_over_time": lambda points: float(len(points)),
    "last_over_time": lambda points: points[-1][1],
}


class Group:
    """One group of an aggregation: its running value, mean and count (engine.go)."""

    __slots__ = ("value", "mean", "count")

    def __init__(self, value: float) -> None:
        self.value = value
        self.mean = value
        self.count = 1

    def add(self, op: str, value: float) -> None:
        """Fold one more sample in, as ``aggregation()`` does for ``op``."""
        if op == "sum":
            self.value += value
        elif op == "avg":
            self.count += 1
            if math.isinf(self.mean):
                if math.isinf(value) and (self.mean > 0) == (value > 0):
                    return
                if not math.isinf(value) and not math.isnan(value):
                    return
            self.mean += value / self.count - self.mean / self.count
        elif op == "max":
            if self.value < value or math.isnan(self.value):
                self.value = value
        elif op == "min":
            if self.value > value or math.isnan(self.value):
                self.value = value
        elif op == "count":
            self.count += 1

    def result(self, op: str) -> float:
        """The aggregate's value."""
        if op == "avg":
            return self.mean
        if op == "count":
            return float(self.count)
        if op == "group":
            return 1.0
        return self.value

"""Evaluate a :mod:`~supernode.monitor.promql` expression at one instant, offline.

The semantics are Prometheus 2.42's (``promql/engine.go``): instant selectors look back
5 minutes and stop at a staleness marker; range functions drop the metric name (except
``last_over_time``); arithmetic drops it, comparisons filter and keep it; vector matching
is one-to-one on all labels but the name unless ``on``/``ignoring`` say otherwise, with
``group_left`` for many-to-one; set operators match on signatures. Errors Prometheus
raises (many-to-many matches, duplicate output series) raise :class:`EvaluationError`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable

from supernode.monitor import functions as fn
from supernode.monitor.matching import (
    EvaluationError,
    Vector,
    scalar_binop,
    set_operation,
    vector_binop,
    vector_scalar_binop,
)
from supernode.monitor.promql import (
    Aggregate,
    Binary,
    Call,
    Expr,
    Matcher,
    Num,
    RangeCall,
    Selector,
)
from supernode.monitor.promql_syntax import ARITHMETIC, COMPARISONS
from supernode.monitor.storage import (
    NAME,
    Labels,
    Semantics,
    Storage,
    drop_name,
    get,
    with_label,
)

Value = Vector | float

__all__ = ["EvaluationError", "Evaluator", "Value", "Vector"]


def _matches(labels: Labels, matcher: Matcher) -> bool:
    value = get(labels, matcher.label)
    if matcher.op == "=":
        return value == matcher.value
    if matcher.op == "!=":
        return value != matcher.value
    found = re.fullmatch(matcher.value, value) is not None
    return found if matcher.op == "=~" else not found


class Evaluator:
    """Evaluates expressions against one :class:`Storage` (stateless between calls)."""

    def __init__(self, storage: Storage, semantics: Semantics | None = None) -> None:
        self.storage = storage
        self.semantics = semantics or Semantics()
        self._memo: dict[int, Value] = {}

    def evaluate(self, expr: Expr, t_ms: int) -> Value:
        """The value of ``expr`` at ``t_ms``: an instant vector, or a float for a scalar.

        A sub-expression object used twice in the tree (a topology join and its fallback)
        is evaluated once per call.
        """
        self._memo = {}
        return self._eval(expr, t_ms)

    def vector(self, expr: Expr, t_ms: int) -> Vector:
        """``expr`` at ``t_ms``, which must be an instant vector."""
        self._memo = {}
        return self._vector(expr, t_ms)

    def _eval(self, expr: Expr, t_ms: int) -> Value:
        key = id(expr)
        if key in self._memo:
            return self._memo[key]
        handler = _HANDLERS.get(type(expr))
        if handler is None:
            raise EvaluationError(f"cannot evaluate {type(expr).__name__}")
        result = handler(self, expr, t_ms)
        self._memo[key] = result
        return result

    def _vector(self, expr: Expr, t_ms: int) -> Vector:
        value = self._eval(expr, t_ms)
        if not isinstance(value, list):
            raise EvaluationError(f"expected an instant vector from {expr.render()}")
        return value

    def _selected(self, selector: Selector) -> list:
        return [s for s in self.storage.named(selector.metric)
                if all(_matches(s.labels, m) for m in selector.matchers)]

    def _selector(self, expr: Selector, t_ms: int) -> Vector:
        ref = t_ms - expr.offset_s * 1000
        out: Vector = []
        for series in self._selected(expr):
            value = series.instant(ref, self.semantics)
            if value is not None:
                out.append((series.labels, value))
        return out

    def _range_call(self, expr: RangeCall, t_ms: int) -> Vector:
        end = t_ms - expr.selector.offset_s * 1000
        start = end - expr.range_s * 1000
        out: Vector = []
        for series in self._selected(expr.selector):
            points = series.window(start, end, self.semantics)
            if not points:
                continue
            value = _range_value(expr.func, points, start, end, expr.range_s)
            if value is None:
                continue
            labels = series.labels if expr.func == "last_over_time" else drop_name(series.labels)
            out.append((labels, value))
        return out

    def _call(self, expr: Call, t_ms: int) -> Vector:
        vector = self._vector(expr.arg, t_ms)
        if expr.func == "label_replace":
            return _check_unique([(_label_replace(labels, expr.strings), v)
                                  for labels, v in vector])
        operation: Callable[[float], float] = {
            "abs": abs,
            "sqrt": lambda v: math.sqrt(v) if v >= 0 else math.nan,
            "clamp_min": lambda v: max(expr.params[0], v) if not math.isnan(v) else v,
            "clamp_max": lambda v: min(expr.params[0], v) if not math.isnan(v) else v,
        }[expr.func]
        return _check_unique([(drop_name(labels), operation(v)) for labels, v in vector])

    def _aggregate(self, expr: Aggregate, t_ms: int) -> Vector:
        groups: dict[Labels, fn.Group] = {}
        for labels, value in self._vector(expr.expr, t_ms):
            if expr.by is not None:
                key = tuple(p for p in labels if p[0] in expr.by)
            elif expr.without is not None:
                key = tuple(p for p in labels if p[0] not in expr.without and p[0] != NAME)
            else:
                key = ()
            group = groups.get(key)
            if group is None:
                groups[key] = fn.Group(value)
            else:
                group.add(expr.op, value)
        return [(key, group.result(expr.op)) for key, group in groups.items()]

    def _number(self, expr: Num, t_ms: int) -> float:
        return expr.value

    def _binary(self, expr: Binary, t_ms: int) -> Value:
        lhs = self._eval(expr.lhs, t_ms)
        rhs = self._eval(expr.rhs, t_ms)
        if isinstance(lhs, float) and isinstance(rhs, float):
            return scalar_binop(expr, lhs, rhs)
        if isinstance(lhs, float) or isinstance(rhs, float):
            if expr.op not in ARITHMETIC + COMPARISONS:
                raise EvaluationError(f"set operator {expr.op} needs two vectors")
            if isinstance(lhs, float):
                assert isinstance(rhs, list)
                return vector_scalar_binop(expr, rhs, lhs, swap=True)
            assert isinstance(rhs, float)  # one side is a scalar, and lhs is not
            return vector_scalar_binop(expr, lhs, rhs, swap=False)
        if expr.op in ("and", "or", "unless"):
            return set_operation(expr, lhs, rhs)
        return vector_binop(expr, lhs, rhs)


def _range_value(func: str, points: fn.Points, start: int, end: int,
                 range_s: int) -> float | None:
    if func == "rate":
        return fn.extrapolated_rate(points, start, end, range_s, True, True)
    if func == "increase":
        return fn.extrapolated_rate(points, start, end, range_s, True, False)
    if func == "delta":
        return fn.extrapolated_rate(points, start, end, range_s, False, False)
    return fn.OVER_TIME[func](points)


def _label_replace(labels: Labels, strings: tuple[str, ...]) -> Labels:
    """``label_replace``: set ``dst`` from ``replacement`` when ``src`` matches ``regex``."""
    dst, replacement, src, regex = strings
    found = re.fullmatch(regex, get(labels, src))
    if found is None:
        return labels
    value = re.sub(r"\$(\d+)", lambda m: found.group(int(m.group(1))) or "", replacement)
    return with_label(labels, dst, value)


def _check_unique(vector: Vector) -> Vector:
    """``vector``, or EvaluationError when two elements share a label set (a function
    that drops or sets labels can do that; selectors, aggregations and matching cannot)."""
    if len({labels for labels, _ in vector}) != len(vector):
        raise EvaluationError("vector cannot contain metrics with the same labelset")
    return vector


_HANDLERS: dict[type, Callable] = {
    Selector: Evaluator._selector,
    RangeCall: Evaluator._range_call,
    Call: Evaluator._call,
    Aggregate: Evaluator._aggregate,
    Num: Evaluator._number,
    Binary: Evaluator._binary,
}

"""Binary operators between instant vectors and scalars, with Prometheus' vector matching.

Follows ``VectorBinop``, ``VectorscalarBinop``, ``VectorAnd/Or/Unless``, ``resultMetric``
and ``signatureFunc`` of ``promql/engine.go`` (v2.42.0): the match signature is the ``on``
labels, or every label but the name and the ``ignoring`` ones; one-to-one matching with
``on`` keeps only the ``on`` labels; ``group_left`` copies the listed labels from the
"one" side; arithmetic drops the metric name; comparisons without ``bool`` filter and keep
the left-hand value.
"""

from __future__ import annotations

import math
import operator

from supernode.monitor.promql_expr import Binary
from supernode.monitor.promql_syntax import ARITHMETIC
from supernode.monitor.storage import NAME, Labels, drop_name

Vector = list[tuple[Labels, float]]


class EvaluationError(ValueError):
    """An expression Prometheus would refuse at evaluation time (e.g. many-to-many match)."""


_ARITH = {"+": operator.add, "-": operator.sub, "*": operator.mul, "^": math.pow}
_COMPARE = {"==": operator.eq, "!=": operator.ne, ">": operator.gt, "<": operator.lt,
            ">=": operator.ge, "<=": operator.le}


def _arith(op: str, lhs: float, rhs: float) -> float:
    """IEEE arithmetic as Go does it (x/0 is ±Inf or NaN, never an exception)."""
    if op == "/":
        if rhs == 0:
            if lhs == 0 or math.isnan(lhs):
                return math.nan
            return math.copysign(math.inf, lhs) * math.copysign(1.0, rhs)
        return lhs / rhs
    if op == "%":
        if rhs == 0 or math.isinf(lhs) or math.isnan(lhs) or math.isnan(rhs):
            return math.nan
        return math.fmod(lhs, rhs)
    try:
        return _ARITH[op](lhs, rhs)
    except OverflowError:
        return math.inf
    except ValueError:
        return math.nan


def element_binop(op: str, lhs: float, rhs: float) -> tuple[float, bool]:
    """``vectorElemBinop``: (value, keep) of one element pair."""
    if op in _COMPARE:
        return lhs, _COMPARE[op](lhs, rhs)
    return _arith(op, lhs, rhs), True


def scalar_binop(expr: Binary, lhs: float, rhs: float) -> float:
    """Scalar op scalar (comparisons need ``bool``, which yields 0 or 1)."""
    if expr.op in _COMPARE:
        if not expr.bool_:
            raise EvaluationError("comparisons between scalars must use bool")
        return 1.0 if _COMPARE[expr.op](lhs, rhs) else 0.0
    return _arith(expr.op, lhs, rhs)


def vector_scalar_binop(expr: Binary, vector: Vector, scalar: float, swap: bool) -> Vector:
    """Vector op scalar (``swap``: the scalar was on the left)."""
    out: Vector = []
    drop = expr.op in ARITHMETIC or expr.bool_
    for labels, value in vector:
        left, right = (scalar, value) if swap else (value, scalar)
        result, keep = element_binop(expr.op, left, right)
        if expr.op in _COMPARE and swap:
            result = right
        if expr.bool_:
            result, keep = (1.0 if keep else 0.0), True
        if keep:
            out.append((drop_name(labels) if drop else labels, result))
    return out


def signature(labels: Labels, on: tuple[str, ...] | None,
              ignoring: tuple[str, ...] | None) -> Labels:
    """The labels two elements must share to match."""
    if on is not None:
        return tuple([p for p in labels if p[0] in on])
    if not ignoring:
        return drop_name(labels)
    skip = {*ignoring, NAME}
    return tuple([p for p in labels if p[0] not in skip])


def set_operation(expr: Binary, lhs: Vector, rhs: Vector) -> Vector:
    """``and``, ``or``, ``unless`` (many-to-many, on signatures)."""
    def sig(labels: Labels) -> Labels:
        return signature(labels, expr.on, expr.ignoring)

    if expr.op == "and":
        if not lhs or not rhs:
            return []
        right = {sig(labels) for labels, _ in rhs}
        return [e for e in lhs if sig(e[0]) in right]
    if expr.op == "or":
        if not lhs or not rhs:
            return list(lhs or rhs)
        left = {sig(labels) for labels, _ in lhs}
        return list(lhs) + [e for e in rhs if sig(e[0]) not in left]
    if not lhs or not rhs:
        return list(lhs)
    right = {sig(labels) for labels, _ in rhs}
    return [e for e in lhs if sig(e[0]) not in right]


def _result_labels(expr: Binary, lhs: Labels, rhs: Labels) -> Labels:
    labels = drop_name(lhs) if expr.op in ARITHMETIC else lhs
    if expr.group_left is None:
        if expr.on is not None:
            labels = tuple(p for p in labels if p[0] in expr.on)
        elif expr.ignoring:
            labels = tuple(p for p in labels if p[0] not in expr.ignoring)
        return labels
    merged = dict(labels)
    one = dict(rhs)
    for name in expr.group_left:
        value = one.get(name, "")
        if value:
            merged[name] = value
        else:
            merged.pop(name, None)
    return tuple(sorted(merged.items()))


def vector_binop(expr: Binary, lhs: Vector, rhs: Vector) -> Vector:
    """Arithmetic or comparison between two vectors, one-to-one or ``group_left``."""
    if not lhs or not rhs:
        return []
    right: dict[Labels, tuple[Labels, float]] = {}
    for labels, value in rhs:
        key = signature(labels, expr.on, expr.ignoring)
        if key in right:
            raise EvaluationError(
                f"found duplicate series for the match group {dict(key)} on the right "
                "hand-side of the operation; many-to-many matching not allowed")
        right[key] = (labels, value)
    matched: dict[Labels, set[Labels]] = {}
    out: Vector = []
    for labels, value in lhs:
        key = signature(labels, expr.on, expr.ignoring)
        found = right.get(key)
        if found is None:
            continue
        result, keep = element_binop(expr.op, value, found[1])
        if expr.bool_:
            result, keep = (1.0 if keep else 0.0), True
        if not keep:
            continue
        metric = _result_labels(expr, labels, found[0])
        if expr.bool_:
            metric = drop_name(metric)
        if expr.group_left is None:
            if key in matched:
                raise EvaluationError("multiple matches for labels: many-to-one matching "
                                      "must be explicit (group_left/group_right)")
            matched[key] = set()
        else:
            seen = matched.setdefault(key, set())
            if metric in seen:
                raise EvaluationError("multiple matches for labels: grouping labels must "
                                      "ensure unique matches")
            seen.add(metric)
        out.append((metric, result))
    return out

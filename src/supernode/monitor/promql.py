"""A small PromQL expression tree: every generated rule is built once, as data.

The same tree is rendered to PromQL text (what Prometheus loads, :meth:`Expr.render`) and
evaluated offline by :mod:`supernode.monitor.engine`, so the rules Prometheus runs and the
rules ``supernode health`` runs cannot drift apart. Only the subset the rule pack needs is
modelled: instant selectors (with ``offset``), range functions over a selector, a few
instant functions, arithmetic, comparison and set operators with ``on``/``ignoring`` and
``group_left``, and the ``sum/avg/min/max/count/group`` aggregations.

Durations are whole seconds. Operator precedence follows the PromQL grammar
(prometheus/promql/parser/lex.go): ``or`` < ``and unless`` < comparisons < ``+ -`` <
``* / %`` < ``^``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from supernode.monitor.promql_syntax import (
    _PRECEDENCE,
    AGGREGATIONS,
    ATOM,
    COMPARISONS,
    INSTANT_FUNCTIONS,
    LABEL_NAME,
    METRIC_NAME,
    RANGE_FUNCTIONS,
    SET_OPERATORS,
    duration,
    number,
    quote,
)


class Expr:
    """Base of every expression node: rendering plus builder helpers."""

    @property
    def precedence(self) -> int:
        """Binding strength in PromQL's grammar (a node binds as an atom unless it says)."""
        return ATOM

    def render(self) -> str:  # pragma: no cover - every node overrides it
        """The expression as PromQL text."""
        raise NotImplementedError

    def metrics(self) -> set[str]:
        """Metric names the expression reads."""
        return set()

    def max_lookback_s(self) -> int:
        """The longest history (range plus offset, in s) the expression looks back over."""
        return 0

    # Arithmetic between expressions (numbers are lifted to literals).
    def __add__(self, other: Expr | float) -> Binary:
        return Binary("+", self, lift(other))

    def __sub__(self, other: Expr | float) -> Binary:
        return Binary("-", self, lift(other))

    def __mul__(self, other: Expr | float) -> Binary:
        return Binary("*", self, lift(other))

    def __truediv__(self, other: Expr | float) -> Binary:
        return Binary("/", self, lift(other))

    def __rmul__(self, other: float) -> Binary:
        return Binary("*", lift(other), self)

    def __radd__(self, other: float) -> Binary:
        return Binary("+", lift(other), self)

    def __rsub__(self, other: float) -> Binary:
        return Binary("-", lift(other), self)

    def gt(self, other: Expr | float, **match) -> Binary:
        """``self > other`` (a filter: keeps the left value where true)."""
        return Binary(">", self, lift(other), **match)

    def ge(self, other: Expr | float, **match) -> Binary:
        """``self >= other``."""
        return Binary(">=", self, lift(other), **match)

    def lt(self, other: Expr | float, **match) -> Binary:
        """``self < other``."""
        return Binary("<", self, lift(other), **match)

    def le(self, other: Expr | float, **match) -> Binary:
        """``self <= other``."""
        return Binary("<=", self, lift(other), **match)

    def and_(self, other: Expr, on: tuple[str, ...] | None = None) -> Binary:
        """``self and on(...) other``: elements of self that have a match in other."""
        return Binary("and", self, other, on=on)

    def or_(self, other: Expr, on: tuple[str, ...] | None = None) -> Binary:
        """``self or on(...) other``: self, plus other's elements without a match in self."""
        return Binary("or", self, other, on=on)

    def unless(self, other: Expr, on: tuple[str, ...] | None = None) -> Binary:
        """``self unless on(...) other``: elements of self without a match in other."""
        return Binary("unless", self, other, on=on)


def lift(value: Expr | float) -> Expr:
    """An expression for ``value`` (numbers become :class:`Num`)."""
    return value if isinstance(value, Expr) else Num(float(value))


@dataclass(frozen=True)
class Num(Expr):
    """A number literal (a scalar)."""

    value: float

    def render(self) -> str:
        return number(self.value)


@dataclass(frozen=True)
class Matcher:
    """A label matcher: ``label op "value"`` with op one of ``= != =~ !~``."""

    label: str
    op: str
    value: str

    def __post_init__(self) -> None:
        if self.op not in ("=", "!=", "=~", "!~"):
            raise ValueError(f"unknown matcher operator {self.op!r}")
        if not LABEL_NAME.fullmatch(self.label):
            raise ValueError(f"invalid label name {self.label!r}")
        if self.op in ("=~", "!~"):
            re.compile(self.value)

    def render(self) -> str:
        return f"{self.label}{self.op}{quote(self.value)}"


@dataclass(frozen=True)
class Selector(Expr):
    """An instant-vector selector ``metric{matchers} offset D``."""

    metric: str
    matchers: tuple[Matcher, ...] = ()
    offset_s: int = 0

    def __post_init__(self) -> None:
        if not METRIC_NAME.fullmatch(self.metric):
            raise ValueError(f"invalid metric name {self.metric!r}")

    def body(self) -> str:
        """``metric{matchers}`` without the offset."""
        inner = ",".join(m.render() for m in self.matchers)
        return f"{self.metric}{{{inner}}}" if inner else self.metric

    def render(self) -> str:
        tail = f" offset {duration(self.offset_s)}" if self.offset_s else ""
        return self.body() + tail

    def metrics(self) -> set[str]:
        return {self.metric}

    def max_lookback_s(self) -> int:
        return self.offset_s

    def where(self, **labels: str) -> Selector:
        """This selector with equality matchers added."""
        extra = tuple(Matcher(k, "=", v) for k, v in labels.items())
        return Selector(self.metric, self.matchers + extra, self.offset_s)

    def offset(self, seconds: int) -> Selector:
        """This selector shifted back by ``seconds``."""
        return Selector(self.metric, self.matchers, seconds)


@dataclass(frozen=True)
class RangeCall(Expr):
    """A range function over one selector: ``func(metric{...}[range] offset D)``."""

    func: str
    selector: Selector
    range_s: int

    def __post_init__(self) -> None:
        if self.func not in RANGE_FUNCTIONS:
            raise ValueError(f"unknown range function {self.func!r}")
        duration(self.range_s)

    def render(self) -> str:
        sel = self.selector
        tail = f" offset {duration(sel.offset_s)}" if sel.offset_s else ""
        return f"{self.func}({sel.body()}[{duration(self.range_s)}]{tail})"

    def metrics(self) -> set[str]:
        return {self.selector.metric}

    def max_lookback_s(self) -> int:
        return self.range_s + self.selector.offset_s


@dataclass(frozen=True)
class Call(Expr):
    """An instant function: ``abs``, ``clamp_min``, ``clamp_max``, ``sqrt``, or
    ``label_replace(v, dst, replacement, src, regex)`` (``strings`` holds its 4 strings)."""

    func: str
    arg: Expr
    params: tuple[float, ...] = ()
    strings: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.func == "label_replace":
            if len(self.strings) != 4 or self.params:
                raise ValueError("label_replace takes 4 strings")
            re.compile(self.strings[3])
        elif INSTANT_FUNCTIONS.get(self.func) != len(self.params) or self.strings:
            raise ValueError(f"unknown function or arity: {self.func}")

    def render(self) -> str:
        rest = [number(p) for p in self.params] + [quote(s) for s in self.strings]
        return f"{self.func}({', '.join([self.arg.render(), *rest])})"

    def metrics(self) -> set[str]:
        return self.arg.metrics()

    def max_lookback_s(self) -> int:
        return self.arg.max_lookback_s()


@dataclass(frozen=True)
class Aggregate(Expr):
    """``op by (labels) (expr)`` or ``op without (labels) (expr)``."""

    op: str
    expr: Expr
    by: tuple[str, ...] | None = None
    without: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        if self.op not in AGGREGATIONS:
            raise ValueError(f"unknown aggregation {self.op!r}")
        if self.by is not None and self.without is not None:
            raise ValueError("give by or without, not both")

    def render(self) -> str:
        if self.by is not None:
            grouping = f" by ({', '.join(self.by)})"
        elif self.without is not None:
            grouping = f" without ({', '.join(self.without)})"
        else:
            grouping = ""
        return f"{self.op}{grouping} ({self.expr.render()})"

    def metrics(self) -> set[str]:
        return self.expr.metrics()

    def max_lookback_s(self) -> int:
        return self.expr.max_lookback_s()


@dataclass(frozen=True)
class Binary(Expr):
    """``lhs op [bool] [on(...)|ignoring(...)] [group_left(...)] rhs``."""

    op: str
    lhs: Expr
    rhs: Expr
    bool_: bool = False
    on: tuple[str, ...] | None = None
    ignoring: tuple[str, ...] | None = None
    group_left: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        if self.op not in _PRECEDENCE:
            raise ValueError(f"unknown operator {self.op!r}")
        if self.on is not None and self.ignoring is not None:
            raise ValueError("give on or ignoring, not both")
        if self.bool_ and self.op not in COMPARISONS:
            raise ValueError("bool applies to comparisons only")
        if self.group_left is not None and (self.op in SET_OPERATORS):
            raise ValueError("group_left does not apply to set operators")

    @property
    def precedence(self) -> int:
        return _PRECEDENCE[self.op]

    def render(self) -> str:
        mine = self.precedence
        left = self.lhs.render()
        wrap_join = self.group_left is not None and isinstance(self.lhs, Binary)
        if wrap_join or self.lhs.precedence < mine or (
                self.op == "^" and self.lhs.precedence == mine):
            left = f"({left})"
        right = self.rhs.render()
        if self.rhs.precedence < mine or (self.op != "^" and self.rhs.precedence == mine):
            right = f"({right})"
        return f"{left} {self.modifiers()}{right}"

    def modifiers(self) -> str:
        """The operator with its ``bool``, matching and grouping modifiers and a space."""
        parts = [self.op]
        if self.bool_:
            parts.append("bool")
        if self.on is not None:
            parts.append(f"on({', '.join(self.on)})")
        if self.ignoring is not None:
            parts.append(f"ignoring({', '.join(self.ignoring)})")
        if self.group_left is not None:
            parts.append(f"group_left({', '.join(self.group_left)})")
        return " ".join(parts) + " "

    def metrics(self) -> set[str]:
        return self.lhs.metrics() | self.rhs.metrics()

    def max_lookback_s(self) -> int:
        return max(self.lhs.max_lookback_s(), self.rhs.max_lookback_s())


# Builders that read like PromQL.
def metric(name: str, **labels: str) -> Selector:
    """The selector ``name{label="value", ...}``."""
    return Selector(name, tuple(Matcher(k, "=", v) for k, v in labels.items()))


def join(lhs: Expr, info: Expr, on: tuple[str, ...], labels: tuple[str, ...]) -> Binary:
    """``lhs * on(on) group_left(labels) info``: copy ``labels`` from a 1-valued info series."""
    return Binary("*", lhs, info, on=tuple(on), group_left=tuple(labels))


def label_replace(expr: Expr, dst: str, replacement: str, src: str = "",
                  regex: str = "") -> Call:
    """``label_replace(expr, dst, replacement, src, regex)`` (defaults: set ``dst`` always)."""
    return Call("label_replace", expr, strings=(dst, replacement, src, regex))

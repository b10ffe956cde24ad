"""A small PromQL expression tree: every generated rule is built once, as data.

The same tree is rendered to PromQL text (what Prometheus loads, :meth:`Expr.render`) and
evaluated offline by :mod:`supernode.monitor.engine`, so the rules Prometheus runs and the
rules ``supernode health`` runs cannot drift apart. Only the subset the rule pack needs is
modelled: instant selectors (with ``offset``), range functions over a selector, a few
instant functions, arithmetic, comparison and set operators with ``on``/``ignoring`` and
``group_left``, and the ``sum/avg/min/max/count/group`` aggregations. The base
:class:`Expr`, number literals and the operators between nodes (:class:`Binary`) are in
:mod:`supernode.monitor.promql_expr`, re-exported here; this module holds the selectors,
function calls, aggregations and the builders.

Durations are whole seconds. Operator precedence follows the PromQL grammar
(prometheus/promql/parser/lex.go): ``or`` < ``and unless`` < comparisons < ``+ -`` <
``* / %`` < ``^``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from supernode.monitor.promql_expr import Binary, Expr, Num, lift
from supernode.monitor.promql_syntax import (
    AGGREGATIONS,
    INSTANT_FUNCTIONS,
    LABEL_NAME,
    METRIC_NAME,
    RANGE_FUNCTIONS,
    duration,
    number,
    quote,
)

__all__ = ["Aggregate", "Binary", "Call", "Expr", "Matcher", "Num", "RangeCall", "Selector",
           "join", "label_replace", "lift", "metric"]


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

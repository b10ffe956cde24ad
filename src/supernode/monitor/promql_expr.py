"""The base of the PromQL expression tree: :class:`Expr` and the operators between nodes.

Every node of :mod:`supernode.monitor.promql` is an :class:`Expr`: it renders itself to
PromQL text, names the metrics it reads and how far back it looks, and combines with
others through :class:`Binary` (arithmetic, comparison and set operators with
``on``/``ignoring`` and ``group_left``); numbers are lifted to :class:`Num` literals.
Operator precedence follows the PromQL grammar (prometheus/promql/parser/lex.go): ``or``
< ``and unless`` < comparisons < ``+ -`` < ``* / %`` < ``^``.
"""

from __future__ import annotations

from dataclasses import dataclass

from supernode.monitor.promql_syntax import _PRECEDENCE, ATOM, COMPARISONS, SET_OPERATORS, number


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

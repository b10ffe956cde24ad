"""The rule registry: one :class:`Rule` per id, refused when registered twice.

A rule's ``evaluate(facts, threshold)`` returns an :class:`Outcome`: ``pass``, ``fail``,
``not_applicable`` (the rule does not concern this design, e.g. experts on a dense model)
or ``not_evaluated`` (an input it needs is missing, e.g. no facility power stated, or no
simulation run), with the measured value, a one-line detail, and for a failure the fix
and its predicted effect.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from supernode.rules.facts import Facts

SEVERITIES = ("error", "warning", "info")
STATUSES = ("pass", "fail", "not_applicable", "not_evaluated")
Threshold = float | list[float] | None


@dataclass(frozen=True)
class Outcome:
    """What one rule found: status, measured value (in the rule's unit), detail, fix."""

    status: str
    measured: float | None = None
    detail: str = ""
    fix: str | None = None
    predicted_effect: str | None = None
    predicted_value: float | None = None
    limit: float | None = None
    #: A failure graded on its consequence: at most this severity (None: the pack's).
    severity: str | None = None
    #: The fix as a change to the cluster file, ((field path, value), ...), so that the
    #: review can apply it to a copy and run the rule again (None: not a file change).
    fix_patch: tuple[tuple[tuple[str, ...], Any], ...] | None = None

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"status {self.status!r} not in {STATUSES}")
        if self.severity is not None and self.severity not in SEVERITIES:
            raise ValueError(f"severity {self.severity!r} not in {SEVERITIES}")


@dataclass(frozen=True)
class Rule:
    """A design rule: id, title, seed section, unit, comparison, rationale, evaluation."""

    id: str
    title: str
    seed: str
    unit: str
    comparison: str
    rationale: str
    evaluate: Callable[[Facts, Threshold], Outcome]
    category: str

    def describe(self) -> dict[str, Any]:
        """The rule's static description (JSON-ready)."""
        return {"id": self.id, "title": self.title, "seed": self.seed, "unit": self.unit,
                "comparison": self.comparison, "category": self.category,
                "rationale": self.rationale}


#: Every rule by id, in registration order (the report's order).
RULES: dict[str, Rule] = {}


def rule(id: str, title: str, seed: str, unit: str, comparison: str, category: str,
         rationale: str) -> Callable[[Callable[[Facts, Threshold], Outcome]],
                                     Callable[[Facts, Threshold], Outcome]]:
    """Decorator registering ``evaluate`` as rule ``id`` (a duplicate id is a bug)."""
    def wrap(evaluate: Callable[[Facts, Threshold], Outcome]
             ) -> Callable[[Facts, Threshold], Outcome]:
        if id in RULES:
            raise ValueError(f"rule {id!r} is registered twice")
        RULES[id] = Rule(id, title, seed, unit, comparison, " ".join(rationale.split()),
                         evaluate, category)
        return evaluate
    return wrap


def number(threshold: Threshold) -> float:
    """The threshold of a one-number rule (the rule pack refuses any other shape there)."""
    if threshold is None or isinstance(threshold, list):
        raise TypeError(f"expected one number as the threshold, got {threshold!r}")
    return float(threshold)


def window(threshold: Threshold) -> tuple[float, float]:
    """The ``[low, high]`` threshold of a window rule (``rules.pack.WINDOW_RULES``)."""
    if not isinstance(threshold, list) or len(threshold) != 2:
        raise TypeError(f"expected a window [low, high] as the threshold, got {threshold!r}")
    low, high = threshold
    return float(low), float(high)


def check(ok: bool, measured: float | None, detail: str, fix: str | None = None,
          predicted: str | None = None, predicted_value: float | None = None,
          limit: float | None = None, severity: str | None = None,
          fix_patch: tuple[tuple[tuple[str, ...], Any], ...] | None = None) -> Outcome:
    """An outcome that passes when ``ok``; the fix is kept only for failures. ``limit``: the
    value compared against when the design states it (room air, floor rating);
    ``severity``: the most a failure is graded on its consequence; ``fix_patch``: the fix
    as a cluster-file change (:class:`Outcome`)."""
    if ok:
        return Outcome("pass", measured, detail, limit=limit)
    return Outcome("fail", measured, detail, fix, predicted, predicted_value, limit, severity,
                   fix_patch if fix is not None else None)

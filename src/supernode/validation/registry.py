"""The predictor registry of the validation harness: one predictor per case kind.

:mod:`supernode.validation.predictors` registers the built-in ones at import;
:mod:`supernode.validation.harness` imports that module before it dispatches a case, so
the registry never imports its registrants.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


class UnsupportedCase(Exception):
    """A predictor cannot handle this case's inputs; the message says why."""


@dataclass(frozen=True)
class Prediction:
    """What a predictor returns: the predicted figure and what it chose for unknown knobs;
    ``extra``: further predicted figures by measured-field name (compared where the case
    publishes them, beside the primary metric)."""

    value: float
    detail: str = ""
    extra: dict[str, float] = field(default_factory=dict)


Predictor = Callable[[dict[str, Any]], Prediction]
Measured = Callable[[dict[str, Any]], float | None]
MetricOf = Callable[[dict[str, Any]], str]

#: kind -> (measured metric name, predictor)
_PREDICTORS: dict[str, tuple[str, Predictor]] = {}
#: kind -> how to read the measured figure when it is not simply ``measured.<metric>``
_MEASURED: dict[str, Measured] = {}
#: kind -> the case's own primary metric, for kinds whose metric varies by case
_METRIC_OF: dict[str, MetricOf] = {}


def register_predictor(kind: str, metric: str, predictor: Predictor,
                       measured: Measured | None = None,
                       metric_of: MetricOf | None = None) -> None:
    """Register the predictor of one case kind; duplicate kinds are refused.

    ``measured`` reads the case's measured figure (default: ``measured.<metric>``);
    ``metric_of`` names a case's primary metric where it varies by case (``metric`` is
    then the default). Kinds with ``metric_of`` report ``secondary`` comparisons too.
    """
    if kind in _PREDICTORS:
        raise ValueError(f"a predictor for kind {kind!r} is already registered")
    _PREDICTORS[kind] = (metric, predictor)
    if measured is not None:
        _MEASURED[kind] = measured
    if metric_of is not None:
        _METRIC_OF[kind] = metric_of

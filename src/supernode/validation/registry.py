"""The predictor registry of the validation harness: one predictor per case kind.

:mod:`supernode.validation.predictors` registers the built-in ones at import;
:mod:`supernode.validation.harness` imports that module before it dispatches a case, so
the registry never imports its registrants.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


class UnsupportedCase(Exception):
    """A predictor cannot handle this case's inputs; the message says why."""


@dataclass(frozen=True)
class Prediction:
    """What a predictor returns: the predicted figure and what it chose for unknown knobs."""

    value: float
    detail: str = ""


Predictor = Callable[[dict[str, Any]], Prediction]
Measured = Callable[[dict[str, Any]], float | None]

#: kind -> (measured metric name, predictor)
_PREDICTORS: dict[str, tuple[str, Predictor]] = {}
#: kind -> how to read the measured figure when it is not simply ``measured.<metric>``
_MEASURED: dict[str, Measured] = {}


def register_predictor(kind: str, metric: str, predictor: Predictor,
                       measured: Measured | None = None) -> None:
    """Register the predictor of one case kind; duplicate kinds are refused.

    ``measured`` reads the case's measured figure (default: ``measured.<metric>``).
    """
    if kind in _PREDICTORS:
        raise ValueError(f"a predictor for kind {kind!r} is already registered")
    _PREDICTORS[kind] = (metric, predictor)
    if measured is not None:
        _MEASURED[kind] = measured

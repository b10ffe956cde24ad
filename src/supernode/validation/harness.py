"""Run a file of published measurements (``supernode-validation/1``) through the models.

Each case is dispatched by ``kind`` to the predictor registered for it
(:mod:`supernode.validation.registry`; the built-in ones in
:mod:`supernode.validation.predictors`); the harness compares the prediction with the
measured figure and reports the relative error per case and the mean absolute
percentage error (MAPE) per kind. A case whose inputs a predictor cannot handle is
reported ``unsupported`` with the reason, never skipped silently. No predictor sees a
case id: ids are only echoed back.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from supernode.errors import InputError
from supernode.spec.casefile import read_cases
from supernode.validation.registry import _MEASURED, _METRIC_OF, _PREDICTORS, UnsupportedCase
from supernode.validation.registry import Prediction as Prediction
from supernode.validation.registry import register_predictor as register_predictor


@dataclass(frozen=True)
class CaseResult:
    """One case's outcome, in the JSON shape of ``supernode validate --json``."""

    id: str
    kind: str
    metric: str
    measured: float | None
    predicted: float | None
    error_frac: float | None
    status: str
    detail: str
    #: Further published metrics compared (kinds with per-case metrics; None: not such a
    #: kind): each ``{metric, measured, predicted, error_frac}``.
    secondary: tuple[dict[str, Any], ...] | None = None

    def to_dict(self) -> dict[str, Any]:
        """The case as a JSON-ready dict with the fixed keys (and ``secondary`` for kinds
        with per-case metrics)."""
        extra = {} if self.secondary is None else {"secondary": list(self.secondary)}
        return extra | {
            "id": self.id,
            "kind": self.kind,
            "metric": self.metric,
            "measured": self.measured,
            "predicted": self.predicted,
            "error_frac": self.error_frac,
            "status": self.status,
            "detail": self.detail,
        }


def run_case(case: dict[str, Any]) -> CaseResult:
    """Predict one case and compare it with its measurement."""
    from supernode.validation import predictors  # noqa: F401  (registers the predictors)

    kind = str(case.get("kind"))
    case_id = str(case.get("id", "?"))
    if kind not in _PREDICTORS:
        return CaseResult(case_id, kind, "", None, None, None, "unsupported",
                          f"unsupported: no model for kind {kind!r}")
    metric, predictor = _PREDICTORS[kind]
    per_case = kind in _METRIC_OF
    secondary: tuple[dict[str, Any], ...] | None = () if per_case else None
    if per_case:
        metric = _METRIC_OF[kind](case)
    measured = _measured(case, metric)
    if measured is None and kind in _MEASURED:
        derived = _MEASURED[kind](case)
        measured = derived if derived is not None and math.isfinite(derived) else None
    try:
        prediction = predictor(case)
    except (UnsupportedCase, InputError, KeyError, TypeError, ValueError, AttributeError,
            OverflowError, ZeroDivisionError) as exc:
        reason = exc.render() if isinstance(exc, InputError) else str(exc)
        return CaseResult(case_id, kind, metric, measured, None, None, "unsupported",
                          f"unsupported: {reason or exc.__class__.__name__}", secondary)
    if not math.isfinite(prediction.value):
        return CaseResult(case_id, kind, metric, measured, None, None, "unsupported",
                          f"unsupported: the model gives a non-finite value for these inputs "
                          f"({prediction.value})", secondary)
    error = None
    if measured not in (None, 0):
        error = (prediction.value - measured) / measured
    if per_case:
        secondary = tuple(_compare(case, name, value)
                          for name, value in prediction.extra.items()
                          if name != metric and _measured(case, name) is not None)
    return CaseResult(case_id, kind, metric, measured, prediction.value, error, "ok",
                      prediction.detail, secondary)


def _compare(case: dict[str, Any], metric: str, predicted: float) -> dict[str, Any]:
    measured = _measured(case, metric)
    ok = measured not in (None, 0) and math.isfinite(predicted)
    return {"metric": metric, "measured": measured,
            "predicted": predicted if math.isfinite(predicted) else None,
            "error_frac": (predicted - measured) / measured if ok and measured else None}


def _measured(case: dict[str, Any], metric: str) -> float | None:
    block = case.get("measured")
    value = block.get(metric) if isinstance(block, dict) else None
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return None


def summarize(results: list[CaseResult]) -> dict[str, dict[str, float | int]]:
    """MAPE per kind over the cases with a measured value and a prediction."""
    out: dict[str, dict[str, float | int]] = {}
    for kind in sorted({r.kind for r in results}):
        errors = [abs(r.error_frac) for r in results if r.kind == kind and r.error_frac is not None]
        out[kind] = {"n": len(errors), "mape": sum(errors) / len(errors) if errors else math.nan}
    return out


def summarize_metrics(results: list[CaseResult]) -> dict[str, dict[str, dict[str, float | int]]]:
    """For kinds with per-case metrics: MAPE per metric, primary and secondary
    comparisons alike (``{kind: {metric: {n, mape}}}``)."""
    errors: dict[str, dict[str, list[float]]] = {}
    for r in results:
        if r.secondary is None:
            continue
        by = errors.setdefault(r.kind, {})
        rows = [(r.metric, r.error_frac)] + [(s["metric"], s["error_frac"]) for s in r.secondary]
        for metric, error in rows:
            if error is not None:
                by.setdefault(metric, []).append(abs(error))
    return {kind: {m: {"n": len(e), "mape": sum(e) / len(e)} for m, e in sorted(by.items())}
            for kind, by in sorted(errors.items())}


def validate_file(path: str | Path) -> tuple[list[CaseResult], dict[str, dict[str, float | int]]]:
    """Run every case of a validation file; return per-case results and the per-kind summary."""
    results = [run_case(case) for case in read_cases(path)]
    return results, summarize(results)

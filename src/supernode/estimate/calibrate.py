"""Refit the step-time model's ``fitted`` constants from the public training cases.

Usage::

    python -m supernode.estimate.calibrate            # refit, intervals, leave-one-source-out
    python -m supernode.estimate.calibrate --write    # rewrite data/estimate/calibration.yaml
                                                      # and data/estimate/interval.yaml
    python -m supernode.estimate.calibrate --check    # exit 1 if either drifts from a refit

The objective is the sum of squared log errors of the predicted step time over every
``training_step`` case (scipy ``least_squares``, trust-region reflective, within each
constant's bounds). The knobs a case leaves unpublished are chosen by the model itself,
exactly as ``supernode validate`` does; no case id or size is looked at.

Each fitted constant gets a 95 % confidence interval from the Jacobian at the optimum
(covariance ``s^2 (J^T J)^-1``, ``s^2`` the residual variance on ``n - p`` degrees of
freedom, Student t quantile); a constant that ends on one of its bounds is reported
(:attr:`Fit.on_bound`): it stands for a missing effect, and the tests refuse it.

Leave-one-source-out: a *source* is one publication, the case's ``source`` citation up to
its commit or section (:func:`supernode.spec.casefile.case_source`: the Megatron-LM README
is one source, the Megatron-Bridge performance archive another); every source's cases
are predicted by a refit on all the others.
"""

from __future__ import annotations

import argparse
import importlib.resources
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats
from scipy.optimize import least_squares

from supernode.errors import InputError
from supernode.estimate.calibration import (
    CALIBRATION_FILE,
    Calibration,
    default_calibration,
    read_calibration_document,
)
from supernode.estimate.interval import (
    INTERVAL_FILE,
    default_interval,
    prediction_bounds,
)
from supernode.estimate.model import estimate_plan
from supernode.estimate.system import system_from_validation
from supernode.spec.casefile import case_source, read_cases
from supernode.spec.training_case import case_plan, case_workload, measured_step_time_s

#: Relative tolerance of --check between committed and refitted constants.
CHECK_RTOL = 0.02
#: A fitted value within this share of its bound's span from the bound is "on the bound".
BOUND_TOLERANCE = 1e-3


def training_cases(path: str | Path | None = None) -> list[dict[str, Any]]:
    """The ``training_step`` cases of a validation file (default: the packaged public one)."""
    return read_cases(path, kind="training_step")


def log_errors(cal: Calibration, cases: Sequence[dict[str, Any]]) -> np.ndarray:
    """log(predicted / measured) step time per case under calibration ``cal``."""
    out = []
    for case in cases:
        plan = case_plan(case)
        result = estimate_plan(case_workload(case), plan,
                               system_from_validation(case["system"], plan.precision), cal)
        measured = measured_step_time_s(case)
        if measured is None:
            raise InputError(f"{case.get('id', 'case')}.measured",
                             "a training_step case to fit needs step_time_s or "
                             "tokens_per_s_per_gpu")
        out.append(np.log(result.step_time_s / measured))
    return np.asarray(out)


@dataclass(frozen=True)
class Fit:
    """A least-squares fit: values, 95 % intervals, bounds hit, the residuals (log), and
    the singular values of the Jacobian of log step time by log constant (unit-free: a
    value near 0 is a direction the data cannot pin)."""

    values: dict[str, float]
    intervals: dict[str, tuple[float, float]]
    on_bound: list[str]
    singular_values: list[float]
    residuals: np.ndarray

    @property
    def mape(self) -> float:
        """Mean absolute percentage error of the fitted cases (fraction)."""
        return float(np.mean(np.abs(np.expm1(self.residuals))))


def _fitted_names() -> tuple[list[str], np.ndarray, np.ndarray]:
    doc = read_calibration_document()["constants"]
    names = [n for n, e in doc.items() if e["kind"] == "fitted"]
    lower = np.array([doc[n]["bounds"][0] for n in names], dtype=float)
    upper = np.array([doc[n]["bounds"][1] for n in names], dtype=float)
    return names, lower, upper


def fit(cases: Sequence[dict[str, Any]] | None = None, start: Calibration | None = None) -> Fit:
    """Fit every ``fitted`` constant on ``cases`` (default: the public training cases)."""
    cases = list(cases if cases is not None else training_cases())
    names, lower, upper = _fitted_names()
    base = start or default_calibration()
    x0 = np.clip(np.array([getattr(base, n) for n in names]), lower, upper)

    def residuals(x: np.ndarray) -> np.ndarray:
        return log_errors(base.replace(**dict(zip(names, x, strict=True))), cases)

    # xtol: the values are kept to 3 significant digits, so steps below 1e-5 of x change
    # nothing reported (same values and intervals as the default 1e-8, a fifth fewer runs)
    result = least_squares(residuals, x0, bounds=(lower, upper), x_scale="jac",
                           diff_step=1e-3, xtol=1e-5)
    values = {n: float(f"{v:.3g}") for n, v in zip(names, result.x, strict=True)}
    span = upper - lower
    on_bound = [n for n, v, lo, hi, s in zip(names, result.x, lower, upper, span, strict=True)
                if min(v - lo, hi - v) <= BOUND_TOLERANCE * s]
    jac = result.jac
    dof = max(len(cases) - len(names), 1)
    s2 = float(np.sum(result.fun ** 2)) / dof
    t = float(stats.t.ppf(0.975, dof))
    cov = s2 * np.linalg.pinv(jac.T @ jac)
    half = t * np.sqrt(np.maximum(np.diag(cov), 0.0))
    intervals = {n: (float(f"{v - h:.3g}"), float(f"{v + h:.3g}"))
                 for n, v, h in zip(names, result.x, half, strict=True)}
    # sensitivity to relative changes (d log t / d log x): unit-free, comparable
    scaled = jac * np.where(result.x != 0, result.x, 1.0)
    singular = [float(f"{v:.3g}") for v in np.linalg.svd(scaled, compute_uv=False)]
    return Fit(values, intervals, on_bound, singular, result.fun)


def refit(cases: Sequence[dict[str, Any]] | None = None) -> dict[str, float]:
    """Fit every ``fitted`` constant; returns name -> value (rounded to 3 significant digits)."""
    return fit(cases).values


def source_and_system(case: dict[str, Any]) -> str:
    """A finer grouping for comparison: the source and the system's accelerator."""
    return f"{case_source(case)} / {(case.get('system') or {}).get('accelerator')}"


def leave_one_source_out(cases: Sequence[dict[str, Any]] | None = None,
                         group: Callable[[dict[str, Any]], str] = case_source
                         ) -> dict[str, list[tuple[str, float]]]:
    """Per source: (case id, relative error) of its cases under a refit on the others.

    ``group`` names each case's source (default :func:`case_source`; the finer
    :func:`source_and_system` is reported for comparison).
    """
    cases = list(cases if cases is not None else training_cases())
    out: dict[str, list[tuple[str, float]]] = {}
    base = default_calibration()
    for source in sorted({group(c) for c in cases}):
        held = [c for c in cases if group(c) == source]
        rest = [c for c in cases if group(c) != source]
        cal = base.replace(**fit(rest).values)
        errors = np.expm1(log_errors(cal, held))
        out[source] = [(str(c.get("id")), float(e)) for c, e in zip(held, errors, strict=True)]
    return out


def interval_bounds(per_source: dict[str, list[tuple[str, float]]], level: float = 0.8
                    ) -> tuple[float, float]:
    """Log-error bounds at ``level`` of the leave-one-source-out errors ``per_source``
    (:func:`leave_one_source_out`): the random-effects prediction interval of a run from
    a new source (:mod:`supernode.estimate.interval`), t on ``sources - 1`` degrees of
    freedom."""
    groups = [[float(np.log1p(e)) for _, e in rows] for rows in per_source.values()]
    t = float(stats.t.ppf(0.5 + level / 2.0, len(groups) - 1))
    return prediction_bounds(groups, level, t)


def interval_drift(per_source: dict[str, list[tuple[str, float]]]) -> list[str]:
    """What differs between the committed interval and the one ``per_source`` gives."""
    committed = default_interval()
    low, high = interval_bounds(per_source, committed.level)
    runs = sum(len(rows) for rows in per_source.values())
    out = [f"interval {name}: committed {c}, refit {r:.3g}" for name, c, r in
           (("log_error_low", committed.low, low), ("log_error_high", committed.high, high))
           if abs(c - r) > CHECK_RTOL * max(abs(r), 0.01)]
    if (committed.runs, committed.sources) != (runs, len(per_source)):
        out.append(f"interval: committed {committed.runs} runs of {committed.sources} "
                   f"sources, refit {runs} of {len(per_source)}")
    return out


def write_interval(per_source: dict[str, list[tuple[str, float]]]) -> Path:
    """Rewrite the committed interval file's bounds and counts (keeps its comments)."""
    path = Path(str(importlib.resources.files("supernode") / "data" / INTERVAL_FILE))
    low, high = interval_bounds(per_source, default_interval().level)
    values = {"log_error_low": f"{low:.3g}", "log_error_high": f"{high:.3g}",
              "runs": str(sum(len(r) for r in per_source.values())),
              "sources": str(len(per_source))}
    lines = [next((f"{k}: {v}" for k, v in values.items() if line.startswith(f"{k}:")), line)
             for line in path.read_text("utf-8").splitlines()]
    path.write_text("\n".join(lines) + "\n", "utf-8")
    return path


def drift(refitted: dict[str, float]) -> list[str]:
    """Constants whose committed value differs from the refit by more than CHECK_RTOL."""
    committed = default_calibration()
    return [f"{n}: committed {getattr(committed, n)}, refit {v}" for n, v in refitted.items()
            if abs(getattr(committed, n) - v) > CHECK_RTOL * max(abs(v), 1e-12)]


def write(refitted: dict[str, float]) -> Path:
    """Rewrite the committed calibration file's fitted values in place (keeps comments)."""
    return write_constant_values(
        Path(str(importlib.resources.files("supernode") / "data" / CALIBRATION_FILE)), refitted)


def write_constant_values(path: Path, refitted: dict[str, float]) -> Path:
    """Rewrite the ``value:`` of each constant of ``refitted`` in the calibration file at
    ``path`` (a ``constants:`` mapping of name -> {value, ...}), keeping everything else."""
    lines = path.read_text("utf-8").splitlines()
    current = None
    for i, line in enumerate(lines):
        stripped = line.strip()
        if line.startswith("  ") and not line.startswith("    ") and stripped.endswith(":"):
            current = stripped[:-1]
        elif current in refitted and stripped.startswith("value:"):
            lines[i] = line[: line.index("value:")] + f"value: {refitted[current]}"
    path.write_text("\n".join(lines) + "\n", "utf-8")
    return path


def print_fit(result: Fit, cases: int) -> None:
    """Print a refit: its MAPE, each constant with its 95 % interval (flagged on a bound)
    and the Jacobian's singular values."""
    print(f"refit over {cases} cases: MAPE {100 * result.mape:.2f}%")
    for name, value in result.values.items():
        lo, hi = result.intervals[name]
        flag = "  ON BOUND" if name in result.on_bound else ""
        print(f"  {name} = {value}  (95% CI {lo} .. {hi}){flag}")
    print(f"  Jacobian singular values {result.singular_values}")


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point (see module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="rewrite the calibration file")
    parser.add_argument("--check", action="store_true", help="fail if the file drifts")
    parser.add_argument("--no-loso", action="store_true", help="skip leave-one-source-out")
    parser.add_argument("--by-system", action="store_true",
                        help="leave-one-out by source and accelerator")
    args = parser.parse_args(argv)
    cases = training_cases()
    result = fit(cases)
    print_fit(result, len(cases))
    per_source = None
    if not args.no_loso:
        errors = []
        group = source_and_system if args.by_system else case_source
        per_source = leave_one_source_out(cases, group)
        for source, rows in per_source.items():
            mape = np.mean([abs(e) for _, e in rows])
            errors += [abs(e) for _, e in rows]
            print(f"LOSO {source[:70]}: MAPE {100 * mape:.1f}% "
                  + ", ".join(f"{i} {100 * e:+.1f}%" for i, e in rows))
        print(f"LOSO MAPE {100 * np.mean(errors):.2f}%")
        low, high = interval_bounds(per_source, default_interval().level)
        print(f"interval ({default_interval().level:.0%}): log error {low:.3g} .. {high:.3g}: "
              f"measured step within predicted x [{np.exp(-high):.3f}, {np.exp(-low):.3f}]")
    by_source = None if args.by_system else per_source  # the interval's grouping
    if args.write:
        print(f"wrote {write(result.values)}")
        if by_source is not None:
            print(f"wrote {write_interval(by_source)}")
    if args.check:
        problems = drift(result.values) + [f"{n} on its bound" for n in result.on_bound]
        if by_source is not None:
            problems += interval_drift(by_source)
        for problem in problems:
            print(f"drift: {problem}")
        return 1 if problems else 0
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

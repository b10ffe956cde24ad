"""Fit the serving constants on the public serving cases, and leave each source out.

    python -m supernode.serve.fit            # refit, 95 % intervals, leave-one-source-out
    python -m supernode.serve.fit --write    # rewrite data/serve/calibration.yaml's values

Robust least squares (soft-L1, :data:`ROBUST_SCALE`) on ``log(predicted / measured)``
of each supported ``inference`` case's primary metric
(:func:`supernode.serve.case.primary_metric`) of the packaged ``public_inference.json``
alone, over the ``fitted`` constants of ``data/serve/calibration.yaml`` within their
bounds (the step model's method, :class:`supernode.estimate.calibrate.Fit`: intervals from
the Jacobian, constants on a bound flagged). Leave-one-source-out: each publication
(:func:`supernode.spec.casefile.case_source`) predicted by a refit on the others.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats
from scipy.optimize import least_squares

from supernode.estimate.calibrate import Fit, print_fit, write_constant_values
from supernode.serve.calibration import (
    SERVE_CALIBRATION_FILE,
    ServeConstants,
    default_serve_constants,
    read_serve_calibration_document,
)
from supernode.serve.case import UnsupportedServingCase, predict_serving_case, primary_metric
from supernode.spec.casefile import case_source, read_cases

#: Scale of the soft-L1 loss in log error (~35 %): one case far off (a stack the catalog's
#: part figures do not describe) cannot drag the constants every other case shares.
ROBUST_SCALE = 0.3
#: A constant this close to a bound (share of its range) counts as on it.
BOUND_TOLERANCE = 1e-3


def inference_cases_path() -> Path:
    """The packaged public serving cases (the calibration set)."""
    return Path(str(resources.files("supernode") / "data" / "validation" /
                    "public_inference.json"))


def supported_cases(path: str | Path | None = None) -> list[dict[str, Any]]:
    """The ``inference`` cases of a file (default: the packaged public set) that the model
    supports with its committed constants."""
    out = []
    for case in read_cases(path or inference_cases_path(), kind="inference"):
        try:
            predict_serving_case(case)
        except UnsupportedServingCase:
            continue
        out.append(case)
    return out


def log_errors(c: ServeConstants, cases: Sequence[dict[str, Any]]) -> np.ndarray:
    """log(predicted / measured) primary metric per case under constants ``c``."""
    out = []
    for case in cases:
        metric = primary_metric(case)
        figures, _ = predict_serving_case(case, c)
        out.append(np.log(figures[metric] / float(case["measured"][metric])))
    return np.asarray(out)


def fitted_names() -> tuple[list[str], np.ndarray, np.ndarray]:
    """Names of the ``fitted`` constants and their lower and upper bounds."""
    doc = read_serve_calibration_document()["constants"]
    names = [n for n, e in doc.items() if e["kind"] == "fitted"]
    lower = np.array([doc[n]["bounds"][0] for n in names], dtype=float)
    upper = np.array([doc[n]["bounds"][1] for n in names], dtype=float)
    return names, lower, upper


def _value(c: ServeConstants, name: str) -> float:
    return float(getattr(c, name) if hasattr(c, name) else getattr(c.kernel, name))


def fit(cases: Sequence[dict[str, Any]] | None = None) -> Fit:
    """Fit every ``fitted`` constant on ``cases`` (default: the supported public cases)."""
    cases = list(cases if cases is not None else supported_cases())
    names, lower, upper = fitted_names()
    base = default_serve_constants()
    x0 = np.clip(np.array([_value(base, n) for n in names]), lower, upper)

    def residuals(x: np.ndarray) -> np.ndarray:
        return log_errors(base.replace(**dict(zip(names, x, strict=True))), cases)

    result = least_squares(residuals, x0, bounds=(lower, upper), x_scale="jac",
                           diff_step=1e-3, loss="soft_l1", f_scale=ROBUST_SCALE)
    values = {n: float(f"{v:.3g}") for n, v in zip(names, result.x, strict=True)}
    span = upper - lower
    on_bound = [n for n, v, lo, hi, s in zip(names, result.x, lower, upper, span, strict=True)
                if min(v - lo, hi - v) <= BOUND_TOLERANCE * s]
    dof = max(len(cases) - len(names), 1)
    s2 = float(np.sum(result.fun ** 2)) / dof
    cov = s2 * np.linalg.pinv(result.jac.T @ result.jac)
    half = float(stats.t.ppf(0.975, dof)) * np.sqrt(np.maximum(np.diag(cov), 0.0))
    intervals = {n: (float(f"{v - h:.3g}"), float(f"{v + h:.3g}"))
                 for n, v, h in zip(names, result.x, half, strict=True)}
    scaled = result.jac * np.where(result.x != 0, result.x, 1.0)
    singular = [float(f"{v:.3g}") for v in np.linalg.svd(scaled, compute_uv=False)]
    return Fit(values, intervals, on_bound, singular, result.fun)


def leave_one_source_out(cases: Sequence[dict[str, Any]] | None = None
                         ) -> dict[str, list[tuple[str, float]]]:
    """Per source: (case id, relative error) of its cases under a refit on the others."""
    cases = list(cases if cases is not None else supported_cases())
    base = default_serve_constants()
    out: dict[str, list[tuple[str, float]]] = {}
    for source in sorted({case_source(c) for c in cases}):
        held = [c for c in cases if case_source(c) == source]
        rest = [c for c in cases if case_source(c) != source]
        constants = base.replace(**fit(rest).values)
        errors = np.expm1(log_errors(constants, held))
        out[source] = [(str(c.get("id")), float(e)) for c, e in zip(held, errors, strict=True)]
    return out


def write(values: dict[str, float]) -> Path:
    """Rewrite the committed serving calibration's fitted values in place (keeps comments)."""
    return write_constant_values(
        Path(str(resources.files("supernode") / "data" / SERVE_CALIBRATION_FILE)), values)


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point (see the module docstring)."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--write", action="store_true", help="rewrite the calibration file")
    parser.add_argument("--no-loso", action="store_true", help="skip leave-one-source-out")
    args = parser.parse_args(argv)
    cases = supported_cases()
    result = fit(cases)
    print_fit(result, len(cases))
    if not args.no_loso:
        errors: list[float] = []
        for source, rows in leave_one_source_out(cases).items():
            errors += [abs(e) for _, e in rows]
            mape = np.mean([abs(e) for _, e in rows])
            print(f"LOSO {source[:72]}: MAPE {100 * mape:.1f}% "
                  + ", ".join(f"{i} {100 * e:+.1f}%" for i, e in rows))
        print(f"LOSO MAPE {100 * np.mean(errors):.2f}%")
    if args.write:
        print(f"wrote {write(result.values)}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

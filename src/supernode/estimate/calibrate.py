"""Refit the step-time model's ``fitted`` constants from the public training cases.

Usage::

    python -m supernode.estimate.calibrate            # print the refit next to the file
    python -m supernode.estimate.calibrate --write    # rewrite data/estimate/calibration.yaml
    python -m supernode.estimate.calibrate --check    # exit 1 if the file drifts from a refit

The objective is the sum of squared log errors of the predicted step time over every
``training_step`` case (scipy ``least_squares``, trust-region reflective, within each
constant's bounds). The knobs a case leaves unpublished are chosen by the model itself,
exactly as ``supernode validate`` does; no case id or size is looked at.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
from scipy.optimize import least_squares

from supernode.estimate.calibration import (
    CALIBRATION_FILE,
    Calibration,
    default_calibration,
    read_calibration_document,
)
from supernode.estimate.model import estimate_plan
from supernode.estimate.system import system_from_validation
from supernode.spec.loader import read_document
from supernode.validation.training_case import case_plan, case_workload

#: Relative tolerance of --check between committed and refitted constants.
CHECK_RTOL = 0.02


def training_cases(path: str | Path | None = None) -> list[dict[str, Any]]:
    """The ``training_step`` cases of a validation file (default: the packaged public one)."""
    if path is None:
        path = Path(str(resources.files("supernode") / "data/validation/public.json"))
    return [c for c in read_document(path)["cases"] if c.get("kind") == "training_step"]


def log_errors(cal: Calibration, cases: Sequence[dict[str, Any]]) -> np.ndarray:
    """log(predicted / measured) step time per case under calibration ``cal``."""
    out = []
    for case in cases:
        result = estimate_plan(case_workload(case), case_plan(case),
                               system_from_validation(case["system"]), cal)
        out.append(np.log(result.step_time_s / case["measured"]["step_time_s"]))
    return np.asarray(out)


def refit(cases: Sequence[dict[str, Any]] | None = None) -> dict[str, float]:
    """Fit every ``fitted`` constant; returns name -> value (rounded to 3 significant digits)."""
    cases = list(cases if cases is not None else training_cases())
    doc = read_calibration_document()["constants"]
    names = [n for n, e in doc.items() if e["kind"] == "fitted"]
    lower = np.array([doc[n]["bounds"][0] for n in names], dtype=float)
    upper = np.array([doc[n]["bounds"][1] for n in names], dtype=float)
    base = default_calibration()
    start = np.clip(np.array([getattr(base, n) for n in names]), lower, upper)

    def residuals(x: np.ndarray) -> np.ndarray:
        return log_errors(base.replace(**dict(zip(names, x, strict=True))), cases)

    fit = least_squares(residuals, start, bounds=(lower, upper), x_scale="jac",
                        diff_step=1e-3)
    return {n: float(f"{v:.3g}") for n, v in zip(names, fit.x, strict=True)}


def drift(refitted: dict[str, float]) -> list[str]:
    """Constants whose committed value differs from the refit by more than CHECK_RTOL."""
    committed = default_calibration()
    return [f"{n}: committed {getattr(committed, n)}, refit {v}" for n, v in refitted.items()
            if abs(getattr(committed, n) - v) > CHECK_RTOL * abs(v)]


def write(refitted: dict[str, float]) -> Path:
    """Rewrite the committed calibration file's fitted values in place (keeps comments)."""
    path = Path(str(resources.files("supernode") / "data" / CALIBRATION_FILE))
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


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point (see module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="rewrite the calibration file")
    parser.add_argument("--check", action="store_true", help="fail if the file drifts")
    args = parser.parse_args(argv)
    cases = training_cases()
    refitted = refit(cases)
    errors = log_errors(default_calibration().replace(**refitted), cases)
    mape = float(np.mean(np.abs(np.expm1(errors))))
    print(f"refit over {len(cases)} cases: {refitted}; MAPE {100 * mape:.2f}%")
    if args.write:
        print(f"wrote {write(refitted)}")
    if args.check:
        problems = drift(refitted)
        for problem in problems:
            print(f"drift: {problem}")
        return 1 if problems else 0
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

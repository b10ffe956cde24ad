"""Which efficiency parameters a set of measurements can identify.

A parameter is fitted only when the data pin it; otherwise it is reported and left at the
packaged value. From the data alone (no prior), at the fitted point:

* **sensitivity**: the largest ``|∂ ln busbw / ∂ ln θ|`` over the measured rows (central
  differences in log space). Below :data:`SENSITIVITY_MIN` no measured row depends on
  the parameter (doubling it moves no prediction by 0.7 %): e.g. LL latencies when only
  large messages were run, S_half far above its ramp;
* **interval**: the 95 % interval of ``ln θ`` from the rows alone,
  ``1.96 σ sqrt([(JᵀJ)⁻¹]_kk)``, with ``σ`` the robust residual scale (1.4826 × the median
  absolute log error) but at least :data:`NOISE_FLOOR` (the run-to-run spread of
  nccl-tests: a perfect fit of few rows proves nothing). Parameters whose interval spans
  more than ×/÷ :data:`IDENTIFIED_FACTOR` are dropped one at a time, widest first, and the
  rest re-examined: of two parameters the rows cannot tell apart, one goes (the report
  names its partner).

Eigen-decomposition, not a pseudo-inverse: a singular direction gets a huge variance
instead of the minimum-norm answer that would hide it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from supernode.collectives.calibrate import BOUNDS, Key, with_values
from supernode.collectives.case_groups import CaseGroup, log_errors
from supernode.collectives.efficiency_file import EfficiencyFileSpec, tables_from_file_spec

SENSITIVITY_MIN = 0.01
NOISE_FLOOR = 0.01
IDENTIFIED_FACTOR = 1.5
#: Log step of the central differences.
LOG_STEP = 1e-3
#: Correlation above which a dropped parameter's partner is named.
CONFOUNDED = 0.9


@dataclass(frozen=True)
class Identification:
    """Per parameter: sensitivity, the data-only 95 % half-width of ``ln θ`` (inf when
    not examined), and why it is not identified (empty when it is)."""

    sensitivity: dict[Key, float]
    half_width: dict[Key, float]
    reasons: dict[Key, str]

    @property
    def identified(self) -> list[Key]:
        """Parameters the data pin, in the order examined."""
        return [k for k in self.sensitivity if k not in self.reasons]


def data_jacobian(spec: EfficiencyFileSpec, groups: Sequence[CaseGroup], keys: Sequence[Key],
                  values: Mapping[Key, float]) -> np.ndarray:
    """``∂ ln(busbw_pred / busbw_meas) / ∂ ln θ`` per row (rows) and parameter (columns),
    at ``values`` (file units), by central differences kept inside :data:`BOUNDS`."""
    base = with_values(spec, values)
    columns = []
    for key in keys:
        value = float(values[key])
        low, high = BOUNDS[key[1]]
        up, down = min(value * math.exp(LOG_STEP), high), max(value * math.exp(-LOG_STEP), low)
        if up <= down:
            columns.append(np.zeros(sum(len(g.message_bytes) for g in groups)))
            continue
        e_up = log_errors(groups, tables_from_file_spec(with_values(base, {key: up})))
        e_down = log_errors(groups, tables_from_file_spec(with_values(base, {key: down})))
        columns.append((e_up - e_down) / (math.log(up) - math.log(down)))
    return np.stack(columns, axis=1) if columns else np.zeros((0, 0))


def residual_scale(errors: np.ndarray) -> float:
    """Robust residual scale of log errors, floored at :data:`NOISE_FLOOR`."""
    if errors.size == 0:
        return NOISE_FLOOR
    return max(1.4826 * float(np.median(np.abs(errors))), NOISE_FLOOR)


def _covariance(jac: np.ndarray, sigma: float) -> np.ndarray:
    """σ² (JᵀJ)⁻¹ by eigen-decomposition; eigenvalues below 1e-14 of the largest are
    floored there, so a singular direction gets a huge (not a minimum-norm) variance."""
    w, v = np.linalg.eigh(jac.T @ jac)
    scale = max(float(np.max(np.abs(w))), 1e-300)
    inv = 1.0 / np.maximum(w, 1e-14 * scale)
    return (v * inv) @ v.T * sigma ** 2


def sensitivities(jac: np.ndarray, keys: Sequence[Key]) -> dict[Key, float]:
    """Largest ``|∂ ln busbw / ∂ ln θ|`` over the rows, per parameter."""
    return {k: float(np.max(np.abs(jac[:, i]))) if jac.size else 0.0
            for i, k in enumerate(keys)}


def insensitive(sensitivity: Mapping[Key, float]) -> dict[Key, str]:
    """Why each parameter below :data:`SENSITIVITY_MIN` is not identified."""
    return {k: f"no measured row depends on it (sensitivity {s:.2g} < {SENSITIVITY_MIN:g}: "
               "run the sizes and ranks where it matters)"
            for k, s in sensitivity.items() if s < SENSITIVITY_MIN}


def identify(jac: np.ndarray, errors: np.ndarray, keys: Sequence[Key]) -> Identification:
    """Which of ``keys`` (columns of ``jac``) the rows identify (module docstring)."""
    sensitivity = sensitivities(jac, keys)
    reasons = insensitive(sensitivity)
    keep = [k for k in keys if k not in reasons]
    half = {k: math.inf for k in keys}
    sigma = residual_scale(errors)
    limit = math.log(IDENTIFIED_FACTOR)
    while keep:
        index = [list(keys).index(k) for k in keep]
        cov = _covariance(jac[:, index], sigma)
        widths = 1.96 * np.sqrt(np.maximum(np.diag(cov), 0.0))
        for k, h in zip(keep, widths, strict=True):
            half[k] = float(h)
        worst = int(np.argmax(widths))
        if widths[worst] <= limit:
            break
        reasons[keep[worst]] = _why_wide(keep, worst, cov, float(widths[worst]))
        keep.pop(worst)
    return Identification(sensitivity, half, reasons)


def _why_wide(keep: Sequence[Key], worst: int, cov: np.ndarray, width: float) -> str:
    span = "unbounded" if not width < 700 else f"x/÷{math.exp(width):.3g}"
    text = (f"the rows cannot pin it: its 95 % interval from the data alone is {span}, "
            f"wider than x/÷{IDENTIFIED_FACTOR:g}")
    partner = _partner(keep, worst, cov)
    return f"{text}; confounded with {partner}" if partner else text


def _partner(keep: Sequence[Key], worst: int, cov: np.ndarray) -> str:
    """The parameter most correlated with ``keep[worst]`` when the correlation is high."""
    if len(keep) < 2:
        return ""
    diag = np.diag(cov)
    best, best_r = "", 0.0
    for j, k in enumerate(keep):
        if j == worst or not (math.isfinite(diag[j]) and math.isfinite(diag[worst])):
            continue
        r = abs(cov[worst, j]) / math.sqrt(max(diag[j] * diag[worst], 1e-300))
        if math.isfinite(r) and r > best_r:
            best, best_r = f"{k[0]}.{k[1]} (correlation {r:.2f})", r
    return best if best_r >= CONFOUNDED else ""

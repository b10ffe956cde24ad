"""Refit the collective efficiency tables from published measurements.

Usage::

    python -m supernode.collectives.calibrate            # refit, rewrite efficiency.yaml
    python -m supernode.collectives.calibrate --check    # refit, compare, exit 1 on drift

Procedure. Every ``collective`` case of the validation file (default: the packaged
``data/validation/public.json``) is predicted with trial tables. The free parameters are
those listed under ``fitted`` in tables some case uses (following ``derived_from``). They
minimise, by :func:`scipy.optimize.least_squares` over their logarithms within physical
bounds (:data:`BOUNDS`), the robust (``soft_l1``, scale 0.3) sum of the cases' log
errors of bus bandwidth ``ln(busbw_pred / busbw_meas)``, plus a weak pull
(:data:`PRIOR_WEIGHT` per log unit) towards each parameter's prior: the sourced value a
root table states under ``prior``, or for a derived table the value of the table it
derives from. A parameter the cases do not constrain therefore stays at its prior
instead of wandering, and one anomalous case cannot drag a shared constant far. Each fit
starts from the priors and a seeded Sobol sample of the box, never from the committed
values (so ``--check`` is a genuine refit), and follows a continuation from a soft to the
hard choice of the fastest algorithm (:data:`SOFTNESS_SCHEDULE`); the best end point
wins. Case ids and message sizes are never looked at. Values are rounded to four
significant figures; ``--check`` accepts a 3 % difference. 95 % confidence intervals come
from the Jacobian at the optimum and a robust residual scale.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from scipy.optimize import least_squares
from scipy.stats import qmc

from supernode.collectives.case_groups import CaseGroup, collective_groups, log_errors
from supernode.collectives.efficiency_file import (
    EfficiencyFileSpec,
    default_efficiency_path,
    read_efficiency_file,
    resolve_values,
    tables_from_file_spec,
)
from supernode.spec.casefile import read_cases
from supernode.spec.documents import dump_yaml

#: name -> (lower bound, upper bound), in file units.
BOUNDS: dict[str, tuple[float, float]] = {
    "simple_efficiency": (0.2, 1.0),
    "simple_half_bandwidth_bytes": (1e5, 3e8),
    "ll128_ratio": (0.3, 1.0),
    "ll_ratio": (0.1, 1.0),
    "ll_max_gbyte_per_s": (5.0, 2000.0),
    "ll128_max_gbyte_per_s": (10.0, 4000.0),
    "ll_latency_us": (0.05, 30.0),
    "ll128_latency_us": (0.05, 30.0),
    "simple_latency_us": (0.1, 60.0),
    "in_network_efficiency": (0.2, 1.0),
    "in_network_latency_us": (0.1, 200.0),
    "in_network_half_bandwidth_bytes": (1e5, 3e8),
}
PRIOR_WEIGHT = 0.02
LOSS, LOSS_SCALE = "soft_l1", 0.3
STARTS = 2
SEED = 20240601
SOFTNESS_SCHEDULE: tuple[float, ...] = (0.1, 0.0)
REL_TOLERANCE = 0.03
SIGNIFICANT = 4
HEADER = ("# Collective efficiency tables per link generation and vendor (see "
          "docs/collectives.md).\n"
          "# Fitted values are rewritten by `python -m supernode.collectives.calibrate`.\n")
PROCEDURE = (
    f"Parameters listed under `fitted` minimise a robust ({LOSS}, scale {LOSS_SCALE}) sum of "
    "ln(busbw_pred/busbw_meas) over the `collective` cases of data/validation/public.json, "
    f"plus a pull of weight {PRIOR_WEIGHT} per log unit towards each parameter's prior (a root "
    "table's `prior`, a derived table's base value), by scipy least_squares over "
    "log-parameters within physical bounds, from the priors and a seeded Sobol sample, "
    "each run continued from a soft to the hard minimum over algorithms; rounded to 4 "
    "significant figures. Other values are sourced (each table's source).")

Key = tuple[str, str]


def tables_used(spec: EfficiencyFileSpec, groups: Sequence[CaseGroup]) -> set[str]:
    """Tables some case's fabric uses, with every table they derive from."""
    used: set[str] = set()
    for group in groups:
        for tier in group.fabric.tiers:
            name: str | None = tier.efficiency
            while name is not None and name not in used:
                used.add(name)
                name = spec.tables[name].derived_from
    return used


def free_parameters(spec: EfficiencyFileSpec, groups: Sequence[CaseGroup]) -> list[Key]:
    """(table, parameter) pairs the cases constrain, in file order."""
    used = tables_used(spec, groups)
    return [(n, p) for n, t in spec.tables.items() if n in used for p in t.fitted]


def prior_value(spec: EfficiencyFileSpec, name: str, param: str) -> float:
    """A fitted parameter's prior (file units): the table's own ``prior``, else the value
    it would take from its base without its own override (the base's prior when the base
    fits it too), times the table's ``scale``; never the committed fit."""
    table = spec.tables[name]
    if param in table.prior:
        return float(table.prior[param])
    if table.derived_from is None:
        raise ValueError(f"tables.{name}: fitted {param} needs a prior")
    base: str | None = table.derived_from
    while base is not None and param not in spec.tables[base].model_fields_set:
        base = spec.tables[base].derived_from
    if base is not None and param in spec.tables[base].fitted:
        value: float | None = prior_value(spec, base, param)
    else:
        value = resolve_values(table.derived_from, spec.tables)[param]
    if value is None:
        raise ValueError(f"tables.{name}.{param}: its base gives no value to start from")
    return float(value) * table.scale.get(param, 1.0)


def with_values(spec: EfficiencyFileSpec, values: Mapping[Key, float]) -> EfficiencyFileSpec:
    """A copy of ``spec`` with the given (table, parameter) values replaced."""
    tables = dict(spec.tables)
    for (name, param), value in values.items():
        table = tables[name]
        tables[name] = table.model_copy(update={param: float(value)})
        tables[name].model_fields_set.add(param)
    return spec.model_copy(update={"tables": tables})


def at_priors(spec: EfficiencyFileSpec, keys: Sequence[Key]) -> EfficiencyFileSpec:
    """``spec`` with the given fitted parameters set to their priors."""
    return with_values(spec, {k: prior_value(spec, *k) for k in keys})


@dataclass(frozen=True)
class FitResult:
    """Refit values (rounded, file units), their 95 % intervals and the residuals."""

    values: dict[Key, float]
    intervals: dict[Key, tuple[float, float]]
    rms_log_error: float
    on_bound: tuple[Key, ...]


def fit(spec: EfficiencyFileSpec, groups: Sequence[CaseGroup], *,
        starts: int = STARTS) -> FitResult:
    """Robust, prior-regularised least squares of every free parameter (module doc)."""
    free = free_parameters(spec, groups)
    if not free:
        return FitResult({}, {}, 0.0, ())
    priors = np.log([prior_value(spec, *k) for k in free])
    lo = np.log([BOUNDS[p][0] for _, p in free])
    hi = np.log([BOUNDS[p][1] for _, p in free])
    base = at_priors(spec, free)

    def residuals(x: np.ndarray, softness: float) -> np.ndarray:
        trial = tables_from_file_spec(with_values(base, dict(zip(free, np.exp(x),
                                                                 strict=True))))
        return np.concatenate([log_errors(groups, trial, softness),
                               PRIOR_WEIGHT * (x - priors)])

    unit = qmc.Sobol(d=len(free), scramble=True, seed=SEED).random_base2(
        max(0, math.ceil(math.log2(max(starts - 1, 1)))))
    best = None
    for x0 in [priors, *(lo + (hi - lo) * unit[: max(starts - 1, 0)])]:
        x = np.clip(x0, lo + 1e-6, hi - 1e-6)
        for softness in SOFTNESS_SCHEDULE:
            result = least_squares(residuals, x, args=(softness,), bounds=(lo, hi),
                                   method="trf", loss=LOSS, f_scale=LOSS_SCALE,
                                   diff_step=1e-4, xtol=1e-8, ftol=1e-9, max_nfev=200)
            x = result.x
        if best is None or result.cost < best.cost - 1e-12:
            best = result
    assert best is not None
    values = {k: _round(v) for k, v in zip(free, np.exp(best.x), strict=True)}
    return FitResult(values, _intervals(best, free), _rms(best.fun[: -len(free)]),
                     tuple(k for k, x, a, b in zip(free, best.x, lo, hi, strict=True)
                           if min(x - a, b - x) < 1e-3))


def _rms(errors: np.ndarray) -> float:
    return float(np.sqrt(np.mean(errors ** 2))) if errors.size else 0.0


def _intervals(result: Any, free: Sequence[Key]) -> dict[Key, tuple[float, float]]:
    """95 % intervals from the Jacobian at the optimum, with the residual scale taken
    robustly (1.4826 x the median absolute case error: an outlier the loss discounts
    does not widen every interval)."""
    jac = result.jac
    cases = result.fun[: -len(free)] if len(free) else result.fun
    sigma = max(1.4826 * float(np.median(np.abs(cases))), 1e-6)
    try:
        cov = np.linalg.pinv(jac.T @ jac) * sigma ** 2
    except np.linalg.LinAlgError:
        cov = np.full((len(free), len(free)), np.inf)
    half = 1.96 * np.sqrt(np.maximum(np.diag(cov), 0.0))
    return {k: (_round(math.exp(x - h)), _round(math.exp(x + h)))
            for k, x, h in zip(free, result.x, half, strict=True)}


def _round(value: float) -> float:
    if value == 0 or not math.isfinite(value):
        return float(value)
    digits = SIGNIFICANT - 1 - math.floor(math.log10(abs(value)))
    return float(round(value, digits))


def drift(spec: EfficiencyFileSpec, refit: Mapping[Key, float]) -> list[str]:
    """Parameters whose committed value differs from the refit by more than the tolerance."""
    problems = []
    for (name, param), value in refit.items():
        committed = getattr(spec.tables[name], param)
        if committed is None or abs(committed - value) > REL_TOLERANCE * abs(value):
            problems.append(f"{name}.{param}: committed {committed}, refit {value}")
    return problems


def _clean(table: dict[str, Any], given: set[str]) -> dict[str, Any]:
    out = {}
    for key, value in table.items():
        empty = value is None or value == {} or value == []
        if empty and key not in given:
            continue
        out[key] = value
    return out


def write(spec: EfficiencyFileSpec, refit: Mapping[Key, float], path: Path) -> None:
    """Write ``spec`` with the refitted values (and the procedure note) to ``path`` as YAML."""
    updated = with_values(spec, refit).model_copy(update={"procedure": PROCEDURE})
    data = updated.model_dump(by_alias=True)
    data["tables"] = {name: _clean(t, set(updated.tables[name].model_fields_set))
                      for name, t in data["tables"].items()}
    text = dump_yaml(data)
    path.write_text(HEADER + text, encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point; returns the exit status."""
    parser = argparse.ArgumentParser(prog="python -m supernode.collectives.calibrate",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="refit and compare with the committed values; do not write")
    parser.add_argument("--cases", type=Path, default=None, help="validation JSON file")
    parser.add_argument("--tables", type=Path, default=None, help="efficiency YAML file")
    args = parser.parse_args(argv)
    path = args.tables or default_efficiency_path()
    spec = read_efficiency_file(path)
    groups = collective_groups(read_cases(args.cases), tables_from_file_spec(spec))
    result = fit(spec, groups)
    for key, value in result.values.items():
        low, high = result.intervals[key]
        print(f"{key[0]}.{key[1]} = {value:g}  (95% {low:g} .. {high:g})")
    for key in result.on_bound:
        print(f"ON BOUND {key[0]}.{key[1]}: a missing effect, not a result", file=sys.stderr)
    print(f"rms log error {result.rms_log_error:.4f} over "
          f"{sum(len(g.message_bytes) for g in groups)} cases")
    if args.check:
        problems = drift(spec, result.values)
        for line in problems:
            print(f"DRIFT {line}", file=sys.stderr)
        return 1 if problems else 0
    write(spec, result.values, path)
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

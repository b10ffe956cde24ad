"""Refit the collective efficiency tables from published measurements.

Usage::

    python -m supernode.collectives.calibrate            # refit, rewrite efficiency.yaml
    python -m supernode.collectives.calibrate --check    # refit, compare, exit 1 on drift

Procedure. Every ``collective`` case of the validation file (default: the packaged
``data/validation/public.json``) is predicted with trial tables; the parameters each
table lists under ``fitted`` (only tables some case uses) minimise the sum of squared
log errors of bus bandwidth, ``Σ ln(busbw_pred / busbw_meas)²``, by
:func:`scipy.optimize.least_squares` over the parameters' logarithms, within physical
bounds (:data:`BOUNDS`). Tables that share no case are fitted separately. Each fit
starts from a neutral point and a seeded Sobol sample of the box, never from the
committed values (so ``--check`` is a genuine refit), and follows a continuation from a
soft to the hard choice of the fastest algorithm (:data:`SOFTNESS_SCHEDULE`); the best
end point wins. Case ids and message sizes are never looked at. Fitted values are
rounded to four significant figures; ``--check`` accepts a 3 % difference.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import yaml
from scipy.optimize import least_squares
from scipy.special import logsumexp
from scipy.stats import qmc

from supernode.collectives.busbw import busbw_bytes_per_s
from supernode.collectives.efficiency import (
    EfficiencyFileSpec,
    EfficiencyTable,
    default_efficiency_path,
    read_efficiency_file,
    tables_from_file_spec,
)
from supernode.collectives.fabric import fabric_from_validation_system
from supernode.collectives.model import collective_time_s
from supernode.collectives.registry import candidates_for
from supernode.collectives.validate import UnsupportedCase, collective_case_inputs
from supernode.units import GBYTE_PER_S

#: name -> (lower bound, upper bound, neutral start), in file units.
BOUNDS: dict[str, tuple[float, float, float]] = {
    "step_latency_us": (0.3, 30.0, 3.0),
    "simple_efficiency": (0.4, 1.0, 0.8),
    "simple_half_bandwidth_bytes": (1e5, 3e8, 8e6),
    "ll128_efficiency": (0.1, 1.0, 0.5),
    "in_network_efficiency": (0.3, 1.0, 0.6),
}
#: Local least-squares runs start from the neutral point and from a scrambled Sobol
#: sample of the log-box. Choosing the fastest algorithm makes the objective piecewise
#: smooth with several basins, so each run follows a continuation: a soft minimum over
#: algorithms first (softness in log-time units), then the hard minimum the model uses.
STARTS = 8
SEED = 20240601
SOFTNESS_SCHEDULE: tuple[float, ...] = (1.0, 0.1, 0.0)
REL_TOLERANCE = 0.03
HEADER = ("# Collective message-size efficiency tables (see docs/collectives.md).\n"
          "# Fitted values are rewritten by `python -m supernode.collectives.calibrate`.\n")
PROCEDURE = (
    "Parameters listed under `fitted` minimise sum(ln(busbw_pred/busbw_meas)^2) over the "
    "`collective` cases of data/validation/public.json (nccl-tests all-reduce on Azure ND "
    "H200 v5 with NVLS and ND A100 v4, 8 ranks, 1 MiB-8 GiB), by scipy least_squares over "
    "log-parameters within physical bounds, from a neutral start and a seeded Sobol sample, "
    "each run continued from a soft to the hard minimum over algorithms; rounded to 4 "
    "significant figures. Other values are documented defaults (see each table's source).")
SIGNIFICANT = 4


@dataclass(frozen=True)
class CaseGroup:
    """Cases sharing system, collective and ranks, predicted in one vectorised call."""

    system: dict
    op: str
    ranks: int
    message_bytes: np.ndarray
    measured_gbyte_per_s: np.ndarray


def default_cases_path() -> Path:
    """The packaged public validation file."""
    return Path(str(resources.files("supernode") / "data" / "validation" / "public.json"))


def collective_groups(cases: Sequence[Mapping[str, Any]]) -> list[CaseGroup]:
    """Group the supported ``collective`` cases that carry a measured bus bandwidth."""
    buckets: dict[tuple[str, str, int], list[tuple[float, float, dict]]] = {}
    for case in cases:
        measured = (case.get("measured") or {}).get("busbw_gigabytes_per_s")
        if case.get("kind") != "collective" or not isinstance(measured, int | float):
            continue
        try:
            op, ranks, size, system = collective_case_inputs(case)
        except UnsupportedCase:
            continue
        key = (json.dumps(system, sort_keys=True), op, ranks)
        buckets.setdefault(key, []).append((size, float(measured), system))
    return [CaseGroup(rows[0][2], op, ranks, np.array([r[0] for r in rows]),
                      np.array([r[1] for r in rows]))
            for (_, op, ranks), rows in buckets.items()]


def _times_s(group: CaseGroup, tables: Mapping[str, EfficiencyTable],
             softness: float) -> np.ndarray:
    fabric = fabric_from_validation_system(group.system, group.ranks, tables=tables)
    if softness <= 0:
        return np.asarray(collective_time_s(group.op, group.message_bytes, group.ranks, fabric,
                                            tables=tables)[0])
    ranks = np.full(group.message_bytes.shape, group.ranks)
    times = np.stack([a.fn(group.op, group.message_bytes, ranks, fabric, tables)
                      for a in candidates_for(group.op)])
    with np.errstate(divide="ignore"):
        return np.exp(-softness * logsumexp(-np.log(times) / softness, axis=0))


def log_errors(groups: Sequence[CaseGroup], tables: Mapping[str, EfficiencyTable],
               softness: float = 0.0) -> np.ndarray:
    """ln(predicted / measured bus bandwidth) of every case, group after group.

    ``softness`` > 0 replaces the choice of the fastest algorithm by a soft minimum
    ``exp(-s·logsumexp(-ln t / s))`` (used only on the way to the hard fit).
    """
    out = []
    for g in groups:
        busbw = busbw_bytes_per_s(g.op, g.message_bytes, g.ranks, _times_s(g, tables, softness))
        out.append(np.log(np.asarray(busbw) / GBYTE_PER_S / g.measured_gbyte_per_s))
    return np.concatenate(out) if out else np.zeros(0)


def _tables_used(spec: EfficiencyFileSpec, group: CaseGroup) -> set[str]:
    tables = tables_from_file_spec(spec)
    used: set[str] = set()
    for tier in fabric_from_validation_system(group.system, group.ranks, tables=tables).tiers:
        name: str | None = tier.efficiency
        while name is not None and name not in used:
            used.add(name)
            name = spec.tables[name].derived_from
    return used


def fit_blocks(spec: EfficiencyFileSpec, groups: Sequence[CaseGroup]
               ) -> list[tuple[list[tuple[str, str]], list[CaseGroup]]]:
    """Independent sub-problems: fitted parameters and the case groups that depend on them.

    Tables that share no case are fitted separately (fewer dimensions, same optimum).
    """
    blocks: list[tuple[set[str], list[CaseGroup]]] = []
    for group in groups:
        names = {n for n in _tables_used(spec, group) if spec.tables[n].fitted}
        if not names:
            continue
        joined = [b for b in blocks if b[0] & names]
        blocks = [b for b in blocks if not b[0] & names]
        for b in joined:
            names |= b[0]
        blocks.append((names, [g for b in joined for g in b[1]] + [group]))
    return [([(n, p) for n in spec.tables if n in names for p in spec.tables[n].fitted], gs)
            for names, gs in blocks]


def with_values(spec: EfficiencyFileSpec, values: Mapping[tuple[str, str], float]
                ) -> EfficiencyFileSpec:
    """A copy of ``spec`` with the given (table, parameter) values replaced."""
    tables = dict(spec.tables)
    for (name, param), value in values.items():
        tables[name] = tables[name].model_copy(update={param: float(value)})
    return spec.model_copy(update={"tables": tables})


def fit_block(spec: EfficiencyFileSpec, free: list[tuple[str, str]],
              groups: Sequence[CaseGroup]) -> dict[tuple[str, str], float]:
    """Multi-start least squares of one block (file units, unrounded)."""
    lo = np.log([BOUNDS[p][0] for _, p in free])
    hi = np.log([BOUNDS[p][1] for _, p in free])

    def residuals(x: np.ndarray, softness: float) -> np.ndarray:
        trial = with_values(spec, dict(zip(free, np.exp(x), strict=True)))
        return log_errors(groups, tables_from_file_spec(trial), softness)

    unit = qmc.Sobol(d=len(free), scramble=True, seed=SEED).random(STARTS)
    best = None
    for x0 in [np.log([BOUNDS[p][2] for _, p in free]), *(lo + (hi - lo) * unit)]:
        x = np.clip(x0, lo + 1e-6, hi - 1e-6)
        for softness in SOFTNESS_SCHEDULE:
            result = least_squares(residuals, x, args=(softness,), bounds=(lo, hi),
                                   method="trf", diff_step=1e-4, xtol=1e-10, ftol=1e-12,
                                   max_nfev=200)
            x = result.x
        if best is None or result.cost < best.cost - 1e-12:
            best = result
    return dict(zip(free, np.exp(best.x), strict=True))


def fit(spec: EfficiencyFileSpec, groups: Sequence[CaseGroup]) -> dict[tuple[str, str], float]:
    """Least-squares refit of every fitted parameter the cases depend on (rounded)."""
    values: dict[tuple[str, str], float] = {}
    for free, block_groups in fit_blocks(spec, groups):
        values.update(fit_block(spec, free, block_groups))
    return {key: _round(v) for key, v in values.items()}


def _round(value: float) -> float:
    if value == 0:
        return 0.0
    digits = SIGNIFICANT - 1 - math.floor(math.log10(abs(value)))
    return float(round(value, digits))


def drift(spec: EfficiencyFileSpec, refit: Mapping[tuple[str, str], float]) -> list[str]:
    """Parameters whose committed value differs from the refit by more than the tolerance."""
    problems = []
    for (name, param), value in refit.items():
        committed = getattr(spec.tables[name], param)
        if committed is None or abs(committed - value) > REL_TOLERANCE * abs(value):
            problems.append(f"{name}.{param}: committed {committed}, refit {value}")
    return problems


def _clean(table: dict[str, Any]) -> dict[str, Any]:
    derived = table.get("derived_from") is not None
    optional = ("ll128_efficiency", "in_network_efficiency")
    out = {}
    for key, value in table.items():
        empty = value is None or value == {} or value == []
        if empty and (derived or key in ("derived_from", "scale", "fitted")
                      or key not in optional):
            continue
        out[key] = value
    return out


def write(spec: EfficiencyFileSpec, refit: Mapping[tuple[str, str], float], path: Path) -> None:
    """Write ``spec`` with the refitted values (and the procedure note) to ``path`` as YAML."""
    updated = with_values(spec, refit).model_copy(update={"procedure": PROCEDURE})
    data = updated.model_dump(by_alias=True)
    data["tables"] = {name: _clean(t) for name, t in data["tables"].items()}
    text = yaml.safe_dump(data, sort_keys=False, width=92, allow_unicode=True)
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
    cases_path = args.cases or default_cases_path()
    cases = json.loads(cases_path.read_text(encoding="utf-8"))["cases"]
    groups = collective_groups(cases)
    refit = fit(spec, groups)
    rms = float(np.sqrt(np.mean(log_errors(groups, tables_from_file_spec(
        with_values(spec, refit))) ** 2))) if groups else 0.0
    for (name, param), value in refit.items():
        print(f"{name}.{param} = {value:g}")
    print(f"rms log error {rms:.4f} over {sum(len(g.message_bytes) for g in groups)} cases")
    if args.check:
        problems = drift(spec, refit)
        for line in problems:
            print(f"DRIFT {line}", file=sys.stderr)
        return 1 if problems else 0
    write(spec, refit, path)
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

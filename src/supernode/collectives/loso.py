"""Leave-one-source-out validation of the collective tables: the figure to quote.

Usage::

    python -m supernode.collectives.loso            # table of MAPE per source
    python -m supernode.collectives.loso --json

A *source* is one benchmark page (one cloud's one machine type): a case's ``source`` up
to its section (:func:`~supernode.spec.casefile.case_source`). For each source,
the tables are refitted by :func:`~supernode.collectives.calibrate.fit` on every other
source's cases, parameters no remaining case constrains falling back to their priors
(their base table's value, or the sourced prior), and the held-out source's cases are
predicted. Reported per source: the MAPE over all its cases, and over its cases less
the in-sample *outliers* (cases the full fit misses by more than
:data:`OUTLIER_ERROR`, at most :data:`MAX_OUTLIERS` of them, each explained in
docs/collectives.md from the system's own figures).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from supernode.collectives.calibrate import fit, with_values
from supernode.collectives.case_groups import CaseGroup, collective_groups, log_errors
from supernode.collectives.efficiency_file import (
    EfficiencyFileSpec,
    read_efficiency_file,
    tables_from_file_spec,
)
from supernode.spec.casefile import read_cases

OUTLIER_ERROR = 0.25
MAX_OUTLIERS = 2
#: Starts of each fold's fit (the priors, then one Sobol point).
FOLD_STARTS = 2


@dataclass(frozen=True)
class SourceResult:
    """Held-out errors of one source (relative busbw errors, signed)."""

    source: str
    errors: tuple[float, ...]
    outlier: tuple[bool, ...]

    @property
    def mape(self) -> float:
        """Mean absolute error over every case of the source."""
        return float(np.mean(np.abs(self.errors)))

    @property
    def mape_without_outliers(self) -> float:
        """Mean absolute error over the source's cases that are not in-sample outliers."""
        kept = [abs(e) for e, o in zip(self.errors, self.outlier, strict=True) if not o]
        return float(np.mean(kept)) if kept else 0.0


def _split(groups: Sequence[CaseGroup], source: str) -> tuple[list[CaseGroup], list[CaseGroup]]:
    """Groups restricted to ``source``'s cases, and to every other source's."""
    held: list[CaseGroup] = []
    kept: list[CaseGroup] = []
    for g in groups:
        mask = np.array([s == source for s in g.sources])
        for part, take in ((held, mask), (kept, ~mask)):
            if take.any():
                part.append(CaseGroup(g.system, g.op, g.ranks, g.message_bytes[take],
                                      g.measured_gbyte_per_s[take],
                                      tuple(s for s, t in zip(g.sources, take, strict=True)
                                            if t), g.fabric, g.runnable))
    return held, kept


def outliers(errors: np.ndarray) -> np.ndarray:
    """Mask of the in-sample outliers: errors beyond :data:`OUTLIER_ERROR`."""
    mask: np.ndarray = np.abs(errors) > OUTLIER_ERROR
    return mask


def leave_one_source_out(spec: EfficiencyFileSpec | None = None,
                         cases: Sequence[dict[str, Any]] | None = None) -> list[SourceResult]:
    """Refit without each source and predict it (see the module docstring)."""
    spec = spec or read_efficiency_file()
    committed = tables_from_file_spec(spec)
    groups = collective_groups(cases if cases is not None else read_cases(), committed)
    results = []
    for source in sorted({s for g in groups for s in g.sources}):
        held, kept = _split(groups, source)
        refit = fit(spec, kept, starts=FOLD_STARTS)
        trial = tables_from_file_spec(with_values(_without_fit(spec, kept), refit.values))
        errors = np.exp(log_errors(held, trial)) - 1.0
        marks = outliers(np.exp(log_errors(held, committed)) - 1.0)
        results.append(SourceResult(source, tuple(float(e) for e in errors),
                                    tuple(bool(m) for m in marks)))
    return results


def _without_fit(spec: EfficiencyFileSpec, kept: Sequence[CaseGroup]) -> EfficiencyFileSpec:
    """``spec`` with every fitted parameter the kept cases do not constrain at its prior."""
    from supernode.collectives.calibrate import at_priors, free_parameters

    constrained = set(free_parameters(spec, kept))
    every = [(n, p) for n, t in spec.tables.items() for p in t.fitted]
    return at_priors(spec, [k for k in every if k not in constrained])


def main(argv: Sequence[str] | None = None) -> int:
    """Print the leave-one-source-out table (or JSON); exit status 0."""
    parser = argparse.ArgumentParser(prog="python -m supernode.collectives.loso",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print JSON only")
    args = parser.parse_args(argv)
    results = leave_one_source_out()
    rows = [{"source": r.source, "cases": len(r.errors), "mape": r.mape,
             "mape_without_outliers": r.mape_without_outliers,
             "outliers": int(sum(r.outlier)), "errors": list(r.errors)} for r in results]
    if args.json:
        json.dump({"sources": rows}, sys.stdout, indent=2)
        print()
        return 0
    for row in rows:
        print(f"{row['source']:<70} {row['cases']:>3} {row['mape']:7.1%} "
              f"{row['mape_without_outliers']:7.1%}  outliers {row['outliers']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

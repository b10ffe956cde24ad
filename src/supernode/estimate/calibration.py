"""Calibrated constants of the step-time model, held as data with how they were fitted.

The values live in ``data/estimate/calibration.yaml``; ``fitted`` constants are refitted
from the public validation file by :mod:`supernode.estimate.calibrate` (a test re-runs the
fit and checks the committed numbers), ``fixed`` ones carry their source.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from functools import lru_cache
from importlib import resources
from typing import Any

from supernode.spec.loader import parse_text

CALIBRATION_FILE = "estimate/calibration.yaml"


@dataclass(frozen=True)
class Calibration:
    """Efficiencies and overlap fractions (dimensionless), sizes (elements), times (s)."""

    gemm_sustained: float
    gemm_operand_passes: float
    memory_eta: float
    tp_overlap: float
    dp_overlap: float
    pp_overlap: float
    a2a_overlap: float
    step_overhead_s: float

    def replace(self, **changes: float) -> Calibration:
        """A copy with some constants changed (used by the fitter)."""
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        values.update(changes)
        return Calibration(**values)


def read_calibration_document() -> dict[str, Any]:
    """The raw calibration document (values, bounds, provenance)."""
    text = (resources.files("supernode") / "data" / CALIBRATION_FILE).read_text("utf-8")
    document: dict[str, Any] = parse_text(text, source=CALIBRATION_FILE)  # the file is a mapping
    return document


@lru_cache(maxsize=1)
def default_calibration() -> Calibration:
    """The committed calibration constants."""
    doc = read_calibration_document()
    values = {name: float(entry["value"]) for name, entry in doc["constants"].items()}
    return Calibration(**values)

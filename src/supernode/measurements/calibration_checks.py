"""Checks of a cluster calibration (:mod:`.calibration`): intervals kept inside the
physical range, and the rows held back from a check fit."""

from __future__ import annotations

import math
from dataclasses import dataclass

from supernode.collectives.calibrate import BOUNDS, Key


@dataclass(frozen=True)
class HeldOutRow:
    """One row held back from the check fit: measured and predicted busbw (bytes/s)."""

    source: str
    op: str
    message_bytes: int
    measured_busbw_bytes_per_s: float
    predicted_busbw_bytes_per_s: float

    @property
    def error(self) -> float:
        """Predicted / measured - 1."""
        return self.predicted_busbw_bytes_per_s / self.measured_busbw_bytes_per_s - 1


def bounded_interval(key: Key, value: float, interval: tuple[float, float] | None
                      ) -> tuple[tuple[float, float] | None, str]:
    """A fitted value's 95 % interval kept inside its physical range: for a parameter
    bounded by 1 (efficiencies, ratios) the upper end of the log-space interval
    ``ln p ± h`` is taken through the logit, ``logit p + h / (1 - p)`` (delta method), so
    it never passes 1 (the lower end, ``p e^-h``, is inside (0, p] already); and why, when
    the log-space interval crossed the bound."""
    high = BOUNDS[key[1]][1]
    if interval is None or high != 1.0:
        return ((interval[0], interval[1]) if interval else None), ""
    low_end, high_end = interval
    half = 0.5 * math.log(high_end / low_end)
    p = min(value, 1.0 - 1e-12)
    z = math.log(p / (1 - p)) + half / (1 - p)
    upper = 1.0 if z > 700 else 1 / (1 + math.exp(-z))
    bounded = (low_end, max(_rounded(upper), value))
    reason = ""
    if high_end > high:
        reason = (f"its 95 % interval in log space reached {high_end:g}, past the physical "
                  f"bound {high:g}: shown in logit space; the rows cannot tell it from line "
                  "rate")
    return bounded, reason


def _rounded(value: float) -> float:
    return float(f"{value:.4g}")

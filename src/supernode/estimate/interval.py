"""How sure a step time is: an interval from the model's own out-of-sample errors.

Every step time, tokens/s and MFU the estimate prints carries an interval at level ``L``
(80 %). Method: the leave-one-source-out log errors ``e = log(predicted / measured)`` of
the public training runs (:func:`supernode.estimate.calibrate.leave_one_source_out`: each
publication predicted by a refit on the others) are taken as a normal sample with unknown
mean ``m`` and standard deviation ``s``; a new run's error then lies, with probability
``L``, in the Student-t prediction interval

    m ± t_{(1 + L) / 2, n - 1} · s · sqrt(1 + 1/n)

(the standard prediction interval for one new draw of a normal sample, e.g. Hahn & Meeker,
*Statistical Intervals*, 1991, §4.7). The measured step then lies in
``[predicted · exp(-e_hi), predicted · exp(-e_lo)]`` and tokens/s and MFU, which scale as
``1 / step``, in ``[x · exp(e_lo), x · exp(e_hi)]``. The bias ``m`` is kept in the interval
rather than folded into the point figure: the point is the model's, the interval says how
far from it runs from unseen sources have landed.

The two bounds ``e_lo, e_hi`` are data (``data/estimate/interval.yaml``), written by
``python -m supernode.estimate.calibrate --write`` with the calibration and checked by
``--check``; reading them costs no statistics at run time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

from supernode.spec.loader import parse_text

INTERVAL_FILE = "estimate/interval.yaml"


@dataclass(frozen=True)
class ErrorInterval:
    """Bounds ``(low, high)`` of the log error ``log(predicted / measured)`` at ``level``
    (a share, e.g. 0.8), from ``runs`` out-of-sample errors of ``sources`` publications."""

    level: float
    low: float
    high: float
    runs: int
    sources: int

    def step_time_s(self, predicted_s: float) -> tuple[float, float]:
        """(low, high) seconds the measured step of a run predicted at ``predicted_s`` lies
        in, at :attr:`level`."""
        return predicted_s * math.exp(-self.high), predicted_s * math.exp(-self.low)

    def rate(self, predicted: float) -> tuple[float, float]:
        """(low, high) of a figure proportional to ``1 / step`` (tokens/s, MFU, HFU)."""
        return predicted * math.exp(self.low), predicted * math.exp(self.high)

    def describe(self) -> str:
        """One line saying what the interval is and where it comes from."""
        return (f"{self.level:.0%} interval from the model's leave-one-source-out errors "
                f"({self.runs} published runs, {self.sources} sources)")


def interval_fields(step_time_s: float, tokens_per_s: float, mfu: float,
                    band: ErrorInterval | None = None) -> dict[str, Any]:
    """The interval keys every result with a step time carries (``--json``, results.json):
    ``step_time_interval_s``, ``tokens_per_s_interval``, ``mfu_interval`` (each ``[low,
    high]``; MFU kept at most 1) and ``interval_level``; ``band`` defaults to the committed
    interval."""
    band = band or default_interval()
    return {"step_time_interval_s": list(band.step_time_s(step_time_s)),
            "tokens_per_s_interval": list(band.rate(tokens_per_s)),
            "mfu_interval": [min(x, 1.0) for x in band.rate(mfu)],
            "interval_level": band.level}


def prediction_bounds(log_errors: Any, level: float, t_quantile: float) -> tuple[float, float]:
    """``m ± t · s · sqrt(1 + 1/n)`` of the sample ``log_errors`` (see the module docstring);
    ``t_quantile`` is Student's t at ``(1 + level) / 2`` on ``n - 1`` degrees of freedom."""
    values = [float(x) for x in log_errors]
    n = len(values)
    if n < 2:
        raise ValueError("an interval needs at least two out-of-sample errors")
    mean = sum(values) / n
    sd = math.sqrt(sum((x - mean) ** 2 for x in values) / (n - 1))
    half = t_quantile * sd * math.sqrt(1.0 + 1.0 / n)
    return mean - half, mean + half


def read_interval_document() -> dict[str, Any]:
    """The raw interval document (level, bounds, provenance)."""
    text = (resources.files("supernode") / "data" / INTERVAL_FILE).read_text("utf-8")
    document: dict[str, Any] = parse_text(text, source=INTERVAL_FILE)
    return document


@lru_cache(maxsize=1)
def default_interval() -> ErrorInterval:
    """The committed step-time interval (``data/estimate/interval.yaml``)."""
    doc = read_interval_document()
    return ErrorInterval(level=float(doc["level"]), low=float(doc["log_error_low"]),
                         high=float(doc["log_error_high"]), runs=int(doc["runs"]),
                         sources=int(doc["sources"]))

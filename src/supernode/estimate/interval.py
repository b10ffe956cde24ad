"""How sure a step time is: an interval from the model's own out-of-sample errors.

Every step time, tokens/s and MFU the estimate prints carries an interval at level ``L``
(80 %). Method: the leave-one-source-out log errors ``e = log(predicted / measured)`` of
the public training runs (:func:`supernode.estimate.calibrate.leave_one_source_out`: each
publication predicted by a refit on the others), grouped by source. Runs of one source
share its conditions (the same software, cluster and way of measuring), so their errors
are not independent: a new run comes from a source the model has not seen, so the source
is the unit. Two stages (the summary-statistics analysis of clustered data; the prediction
interval of a new study in a random-effects meta-analysis, Higgins, Thompson &
Spiegelhalter, *J. R. Stat. Soc. A* 172, 2009, §3.2): each source's mean error ``m_j``
over its ``n_j`` runs; their mean ``m`` (each publication counts once) and sample variance
``s_b^2`` on ``S - 1`` degrees of freedom; the pooled within-source variance ``sigma^2``;
the between-source variance ``tau^2 = max(s_b^2 - sigma^2 · mean(1 / n_j), 0)``. A run of
a new source then lies, with probability ``L``, in

    m ± t_{(1 + L) / 2, S - 1} · sqrt(tau^2 + sigma^2 + s_b^2 / S)

(with one run per source this is the ordinary Student-t prediction interval of one new
draw, Hahn & Meeker, *Statistical Intervals*, 1991, §4.7; with equal groups the balanced
one-way ANOVA's variance components). The measured step then lies in
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


def prediction_bounds(groups: Any, level: float, t_quantile: float) -> tuple[float, float]:
    """Bounds of the log error of a run from a new source (see the module docstring).

    ``groups``: the out-of-sample log errors, one sequence per source (at least two
    sources, one run each at least); ``t_quantile``: Student's t at ``(1 + level) / 2`` on
    ``S - 1`` degrees of freedom. One source's runs alone cannot say how sources differ.
    """
    samples = [[float(x) for x in g] for g in groups if len(g)]
    sources = len(samples)
    if sources < 2:
        raise ValueError("an interval needs the errors of at least two sources")
    sizes = [len(g) for g in samples]
    runs = sum(sizes)
    means = [sum(g) / len(g) for g in samples]
    centre = sum(means) / sources
    within_ss = sum((x - m) ** 2 for g, m in zip(samples, means, strict=True) for x in g)
    within = within_ss / (runs - sources) if runs > sources else 0.0
    spread = sum((m - centre) ** 2 for m in means) / (sources - 1)
    tau2 = max(spread - within * sum(1.0 / n for n in sizes) / sources, 0.0)
    half = t_quantile * math.sqrt(tau2 + within + spread / sources)
    return centre - half, centre + half


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

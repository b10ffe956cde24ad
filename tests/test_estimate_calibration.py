"""The committed step-time calibration is what the documented procedure refits, every
fitted constant is identified (inside its bounds, a finite interval), and the model is
judged out of sample: leave-one-source-out."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from supernode.estimate.calibrate import (
    drift,
    fit,
    interval_bounds,
    interval_drift,
    leave_one_source_out,
    training_cases,
)
from supernode.estimate.calibration import read_calibration_document
from supernode.spec.casefile import case_source

DOC = Path(__file__).resolve().parents[1] / "docs" / "estimate.md"


@pytest.fixture(scope="module")
def refit():
    return fit()


def test_committed_constants_match_a_refit(refit):
    assert drift(refit.values) == []


def test_no_fitted_constant_sits_on_a_bound(refit):
    """A constant on its bound is a missing effect, not a result: the fit must not end there,
    and its interval must be finite and exclude zero (the data identifies it)."""
    assert refit.on_bound == []
    for name, (low, high) in refit.intervals.items():
        assert np.isfinite(low) and np.isfinite(high) and low < refit.values[name] < high
        assert low > 0, name
    assert min(refit.singular_values) > 0.05  # no unidentified direction


def test_every_constant_is_documented(refit):
    doc = read_calibration_document()
    assert "procedure" in doc
    text = DOC.read_text(encoding="utf-8")
    for name, entry in doc["constants"].items():
        assert entry["kind"] in ("fitted", "fixed"), name
        assert entry.get("note"), name
        assert f"`{name}`" in text, f"{name} missing from docs/estimate.md"
        if entry["kind"] == "fitted":
            low, high = entry["bounds"]
            assert low <= entry["value"] <= high, name
            lo, hi = refit.intervals[name]
            assert f"{lo:g}" in text and f"{hi:g}" in text, (name, lo, hi)


def test_sources_group_cases_by_publication():
    """A source is the publication (repository and file), not its commit or section: both
    Megatron-Bridge releases are one source, and no citation keeps its section mark."""
    cases = training_cases()
    sources = {case_source(c) for c in cases}
    assert len(sources) >= 2
    assert not any("section '" in s or " @" in s for s in sources), sources
    bridge = [c for c in cases if "Megatron-Bridge" in c["source"]]
    assert len({case_source(c) for c in bridge}) == 1 < len({c["source"] for c in bridge})


@pytest.fixture(scope="module")
def per_source():
    return leave_one_source_out()


def test_leave_one_source_out_error_of_the_step_model(per_source):
    """Refit without each source (one publication), predict its cases: the error to
    expect on a new case. Quoted per source in docs/estimate.md."""
    errors = [abs(e) for rows in per_source.values() for _, e in rows]
    assert len(errors) == len(training_cases())
    # issue 22's target (<= 8 % mean, <= 15 % per source) is not met: the two sources
    # that run Megatron-Core as configured keep theirs within 11 %, none gets worse than now
    assert np.mean(errors) <= 0.13, per_source
    assert max(errors) <= 1.0, per_source
    for source, rows in per_source.items():
        mape = np.mean([abs(e) for _, e in rows])
        assert mape <= (0.11 if "Megatron-LM" in source or "Megatron-Bridge" in source
                        else 0.30), (source, mape)
    text = DOC.read_text(encoding="utf-8")
    for rows in per_source.values():
        mape = 100 * np.mean([abs(e) for _, e in rows])
        assert f"{mape:.1f} %" in text, (mape, rows)


def test_committed_interval_is_the_refits(per_source):
    """data/estimate/interval.yaml holds the interval the leave-one-source-out errors give."""
    assert interval_drift(per_source) == []


def test_printed_interval_covers_unseen_sources(per_source):
    """The interval, out of sample: each source's runs, predicted by a refit without it,
    against an interval built from the other sources' errors only. At least 80 % of the
    runs fall inside their 80 % interval (docs/estimate.md quotes the count)."""
    inside = total = 0
    for source, rows in per_source.items():
        others = {s: r for s, r in per_source.items() if s != source}
        low, high = interval_bounds(others, 0.8)
        for _, error in rows:
            inside += low <= np.log1p(error) <= high
            total += 1
    assert total == len(training_cases())
    assert inside / total >= 0.80, (inside, total)
    words = " ".join(DOC.read_text(encoding="utf-8").split())
    assert f"{inside} of the {total} runs ({100 * inside / total:.0f} %)" in words

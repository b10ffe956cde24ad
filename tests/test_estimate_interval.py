"""The interval every step time carries: bounds that bracket the figure, one interval for
the step and its rates, the random-effects prediction interval as documented."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from supernode.estimate.interval import (
    ErrorInterval,
    default_interval,
    interval_fields,
    prediction_bounds,
)

positive = st.floats(1e-6, 1e6, allow_nan=False, allow_infinity=False)


@settings(max_examples=50, deadline=None)
@given(positive, positive, st.floats(1e-4, 1.0))
def test_bounds_bracket_the_figures_and_scale_with_them(step, tokens, mfu):
    """Low <= figure <= high whenever the committed bounds straddle 0; the step's bounds
    times the rate's are the figures' product (tokens/s x step is the tokens of a step)."""
    band = default_interval()
    assert band.low < 0 < band.high
    f = interval_fields(step, tokens, mfu)
    lo, hi = f["step_time_interval_s"]
    assert lo < step < hi
    r_lo, r_hi = f["tokens_per_s_interval"]
    assert r_lo < tokens < r_hi
    assert math.isclose(lo * r_hi, step * tokens, rel_tol=1e-9)
    assert math.isclose(hi * r_lo, step * tokens, rel_tol=1e-9)
    m_lo, m_hi = f["mfu_interval"]
    assert m_lo <= mfu <= m_hi <= 1.0
    assert f["interval_level"] == band.level == 0.8


def test_one_run_per_source_is_the_student_t_interval():
    """Differential: with one run per source the random-effects interval is the ordinary
    Student-t prediction interval of those runs (scipy's, written out)."""
    rng = np.random.default_rng(7)
    sample = rng.normal(0.05, 0.2, size=23)
    t = stats.t.ppf(0.9, len(sample) - 1)
    low, high = prediction_bounds([[x] for x in sample], 0.8, t)
    scale = sample.std(ddof=1) * np.sqrt(1 + 1 / len(sample))
    ref = stats.t.interval(0.8, len(sample) - 1, loc=sample.mean(), scale=scale)
    assert (low, high) == pytest.approx(ref, rel=1e-12)
    with pytest.raises(ValueError):
        prediction_bounds([[0.1, 0.2]], 0.8, t)


def test_balanced_groups_match_the_anova_variance_components():
    """Differential: equal groups against the textbook balanced one-way ANOVA estimates
    (tau^2 = (MSB - MSW) / n), computed here with numpy."""
    rng = np.random.default_rng(3)
    groups = rng.normal(0.0, 0.1, size=(5, 1)) + rng.normal(0.0, 0.05, size=(5, 6))
    msw = groups.var(axis=1, ddof=1).mean()
    msb = 6 * groups.mean(axis=1).var(ddof=1)
    tau2 = max((msb - msw) / 6, 0.0)
    var = tau2 + msw + (tau2 + msw / 6) / 5
    t = stats.t.ppf(0.9, 4)
    ref = (groups.mean() - t * np.sqrt(var), groups.mean() + t * np.sqrt(var))
    assert prediction_bounds(groups.tolist(), 0.8, t) == pytest.approx(ref, rel=1e-12)


def test_interval_is_wider_for_a_wider_error_sample():
    t = 1.3
    narrow = prediction_bounds([[-0.05, 0.0], [0.05, 0.0]], 0.8, t)
    wide = prediction_bounds([[-0.5, 0.0], [0.5, 0.0]], 0.8, t)
    assert wide[0] < narrow[0] < narrow[1] < wide[1]


def test_sources_that_disagree_widen_the_interval():
    """The same errors, once spread within sources and once as a gap between them: the
    between-source spread counts more (a new run comes from a new source)."""
    t = 1.5
    within = prediction_bounds([[-0.2, 0.2, -0.2, 0.2], [-0.2, 0.2, -0.2, 0.2]], 0.8, t)
    between = prediction_bounds([[-0.2] * 4, [0.2] * 4], 0.8, t)
    assert between[1] - between[0] > within[1] - within[0]


def test_estimate_json_carries_the_bounds(tmp_path):
    from typer.testing import CliRunner

    from supernode.commands import app, register_all

    register_all()
    out = CliRunner().invoke(app, ["estimate", "--cluster", "dgx-h100-superpod-su",
                                   "--workload", "llama3-8b", "--tp", "1", "--pp", "1",
                                   "--gpus", "8", "--global-batch", "64", "--json"])
    assert out.exit_code == 0, out.output
    import json

    d = json.loads(out.output)
    band = ErrorInterval(d["interval_level"], default_interval().low,
                         default_interval().high, 0, 0)
    assert d["step_time_interval_s"] == pytest.approx(list(band.step_time_s(d["step_time_s"])))
    assert d["mfu_interval"][0] < d["mfu"] < d["mfu_interval"][1]

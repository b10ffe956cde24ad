"""The offline PromQL evaluator against hand-worked Prometheus results and invariants."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from supernode.monitor.engine import EvaluationError, Evaluator
from supernode.monitor.functions import avg_over_time, extrapolated_rate, stddev_over_time
from supernode.monitor.promql import (
    Aggregate,
    Binary,
    Call,
    Matcher,
    RangeCall,
    Selector,
    join,
    label_replace,
    metric,
)
from supernode.monitor.promql_syntax import duration, number
from supernode.monitor.storage import Semantics, Storage, make_labels

MIN = 60_000


def store(series: dict[tuple[tuple[str, str], ...], list[float | None]],
          step_ms: int = MIN) -> Storage:
    out = Storage()
    for labels, values in series.items():
        for i, value in enumerate(values):
            if value is not None:
                out.add(make_labels(dict(labels)), i * step_ms, value)
    return out


def x(name: str = "x", **labels: str) -> tuple[tuple[str, str], ...]:
    return tuple(sorted({"__name__": name, **labels}.items()))


def values(vector) -> dict:
    return {tuple((k, v) for k, v in labels if k != "__name__"): value
            for labels, value in vector}


def test_rendering_follows_promql_precedence():
    a, b, c = metric("a"), metric("b"), metric("c")
    assert (a - (b - c)).render() == "a - (b - c)"
    assert (a - b - c).render() == "a - b - c"
    assert ((a + b) * c).render() == "(a + b) * c"
    assert a.gt(1).or_(b.lt(2).and_(c.ge(3))).render() == "a > 1 or b < 2 and c >= 3"
    assert a.gt(1).and_(b.or_(c)).render() == "a > 1 and (b or c)"
    expr = join(a / b, metric("info"), ("host", "gpu"), ("rack",))
    assert expr.render() == "(a / b) * on(host, gpu) group_left(rack) info"
    sel = Selector("m", (Matcher("leaf", "!=", ""), Matcher("x", "=", 'q"1')), 3600)
    assert RangeCall("rate", sel, 300).render() == 'rate(m{leaf!="",x="q\\"1"}[5m] offset 1h)'
    assert label_replace(a, "dir", "tx").render() == 'label_replace(a, "dir", "tx", "", "")'
    assert Aggregate("count", a, by=("cluster", "leaf")).render() == \
        "count by (cluster, leaf) (a)"


def test_durations_and_numbers():
    assert [duration(s) for s in (90, 300, 3600, 86400, 604800, 7500)] == \
        ["90s", "5m", "1h", "1d", "1w", "125m"]
    assert [number(v) for v in (90.0, 0.95, 1e-12, math.inf)] == ["90", "0.95", "1e-12", "Inf"]
    with pytest.raises(ValueError):
        duration(0)
    with pytest.raises(ValueError):
        Selector("bad-name")


def test_rate_extrapolates_like_prometheus():
    # 11 samples 0..600 of a counter rising 60/min, window [0, 600 s]: exact 1/s.
    points = [(i * MIN, 60.0 * i) for i in range(11)]
    assert extrapolated_rate(points, 0, 600_000, 300, True, True) == pytest.approx(2.0)
    assert extrapolated_rate(points[5:], 300_000, 600_000, 300, True, True) == 1.0
    # A gap at the start longer than 1.1 sample intervals extrapolates half an interval.
    window = points[8:]  # samples at 480..600 s in [300, 600]
    assert extrapolated_rate(window, 300_000, 600_000, 300, False, False) == \
        pytest.approx(120 * (120 + 30) / 120)
    # A reset adds the value before it.
    reset = [(0, 10.0), (MIN, 20.0), (2 * MIN, 5.0)]
    assert extrapolated_rate(reset, 0, 2 * MIN, 120, True, False) == pytest.approx(15.0)
    assert extrapolated_rate(reset[:1], 0, 0, 60, True, False) is None


def test_counter_zero_point_limits_extrapolation():
    # From zero: the start is never extrapolated past the counter's zero point.
    points = [(4 * MIN, 0.0), (5 * MIN, 60.0)]
    assert extrapolated_rate(points, 0, 5 * MIN, 300, True, False) == pytest.approx(60.0)


def test_kahan_mean_and_stddev():
    # Prometheus' incremental Kahan mean, not the exact 0.5: promtool 2.42 also gives
    # avg_over_time(g[3m]) == 0.25 for values 1e16 1 -1e16 1 (checked by hand).
    vals = [(i, v) for i, v in enumerate([1e16, 1.0, -1e16, 1.0])]
    assert avg_over_time(vals) == 0.25
    assert avg_over_time([(0, 1.0), (1, 2.0), (2, 4.0)]) == pytest.approx(7 / 3)
    assert stddev_over_time([(0, 2.0), (1, 4.0), (2, 4.0), (3, 4.0), (4, 5.0), (5, 5.0),
                             (6, 7.0), (7, 9.0)]) == pytest.approx(2.0)


def test_lookback_and_staleness_follow_the_prometheus_version():
    s = Storage()
    labels = make_labels({"__name__": "g"})
    s.add(labels, 0, 1.0)
    two, three = Evaluator(s, Semantics()), Evaluator(s, Semantics(left_open=True))
    assert values(two.evaluate(metric("g"), 5 * MIN)) == {(): 1.0}  # [t-5m, t]
    assert two.evaluate(metric("g"), 5 * MIN + 1) == []
    assert three.evaluate(metric("g"), 5 * MIN) == []  # (t-5m, t]
    s.add(labels, MIN, math.nan, stale=True)
    assert two.evaluate(metric("g"), MIN) == []
    assert values(two.evaluate(metric("g"), MIN - 1)) == {(): 1.0}


def test_range_windows_include_the_left_edge_before_prometheus_3():
    s = store({x("c"): [0.0, 1.0, 2.0, 3.0]})
    count = RangeCall("count_over_time", metric("c"), 120)
    assert values(Evaluator(s).evaluate(count, 3 * MIN)) == {(): 3.0}
    assert values(Evaluator(s, Semantics(left_open=True)).evaluate(count, 3 * MIN)) == {(): 2.0}


def test_changes_and_functions_drop_the_name():
    s = store({x("g", h="a"): [0.0, 79.0, 79.0, 48.0]})
    ev = Evaluator(s)
    result = ev.evaluate(RangeCall("changes", metric("g"), 600), 3 * MIN)
    assert result == [((("h", "a"),), 2.0)]
    last = ev.evaluate(RangeCall("last_over_time", metric("g"), 600), 3 * MIN)
    assert last[0][0] == x("g", h="a")
    assert ev.evaluate(Call("clamp_min", metric("g"), (100.0,)), 3 * MIN) == \
        [((("h", "a"),), 100.0)]


def test_one_to_one_matching_and_group_left():
    s = store({x("a", h="1", g="0"): [10.0], x("a", h="1", g="1"): [20.0],
               x("b", h="1", g="0"): [2.0], x("info", h="1", rack="r0"): [1.0]})
    ev = Evaluator(s)
    assert values(ev.evaluate(metric("a") / metric("b"), 0)) == {(("g", "0"), ("h", "1")): 5.0}
    joined = ev.evaluate(join(metric("a"), metric("info"), ("h",), ("rack",)), 0)
    assert values(joined) == {(("g", "0"), ("h", "1"), ("rack", "r0")): 10.0,
                              (("g", "1"), ("h", "1"), ("rack", "r0")): 20.0}
    on = ev.evaluate(Binary("-", metric("a", g="0"), metric("b"), on=("h",)), 0)
    assert values(on) == {(("h", "1"),): 8.0}  # one-to-one on(): only the on labels
    with pytest.raises(EvaluationError, match="many-to-one matching must be explicit"):
        ev.evaluate(Binary("*", metric("a"), metric("info"), on=("h",)), 0)
    with pytest.raises(EvaluationError, match="many-to-many"):
        ev.evaluate(Binary("*", metric("info"), metric("a"), on=("h",), group_left=()), 0)


def test_comparisons_filter_or_return_bool():
    s = store({x("a", h="1"): [10.0], x("a", h="2"): [95.0]})
    ev = Evaluator(s)
    assert values(ev.evaluate(metric("a").lt(90), 0)) == {(("h", "1"),): 10.0}
    assert ev.evaluate(metric("a").lt(90), 0)[0][0] == x("a", h="1")  # keeps the name
    flags = ev.evaluate(Binary("<", metric("a"), Binary("+", metric("a"), metric("a")),
                               bool_=True), 0)
    assert values(flags) == {(("h", "1"),): 1.0, (("h", "2"),): 1.0}
    scalar_left = ev.evaluate(Binary(">", Selector("a").where(h="2") * 0 + 100, metric("a")),
                              0)
    assert values(scalar_left) == {(("h", "2"),): 100.0}


def test_set_operators_and_aggregations():
    s = store({x("a", h="1", r="x"): [1.0], x("a", h="2", r="x"): [2.0],
               x("a", h="3", r="y"): [4.0], x("b", h="2"): [9.0]})
    ev = Evaluator(s)
    assert len(ev.evaluate(metric("a").and_(metric("b"), on=("h",)), 0)) == 1
    assert len(ev.evaluate(metric("a").unless(metric("b"), on=("h",)), 0)) == 2
    assert len(ev.evaluate(metric("b").or_(metric("a"), on=("h",)), 0)) == 3
    assert values(ev.evaluate(Aggregate("sum", metric("a"), by=("r",)), 0)) == \
        {(("r", "x"),): 3.0, (("r", "y"),): 4.0}
    assert values(ev.evaluate(Aggregate("count", metric("a"), by=("r",)), 0)) == \
        {(("r", "x"),): 2.0, (("r", "y"),): 1.0}
    assert values(ev.evaluate(Aggregate("avg", metric("a"), without=("h",)), 0)) == \
        {(("r", "x"),): 1.5, (("r", "y"),): 4.0}
    assert ev.evaluate(Aggregate("group", metric("a"), by=()), 0) == [((), 1.0)]


def test_label_replace_sets_and_copies():
    s = store({x("a", host="n1"): [1.0]})
    out = Evaluator(s).evaluate(label_replace(metric("a"), "unit", "$1", "host", "(.*)"), 0)
    assert dict(out[0][0])["unit"] == "n1"


counters = st.lists(st.floats(0, 1e6, allow_nan=False), min_size=2, max_size=30)


@given(counters)
def test_increase_of_a_monotone_counter_is_never_negative(increments):
    total, series = 0.0, []
    for inc in increments:
        total += inc
        series.append(total)
    s = store({x("c"): series})
    end = (len(series) - 1) * MIN
    ev = Evaluator(s)
    inc = values(ev.evaluate(RangeCall("increase", metric("c"), 600), end))
    rate = values(ev.evaluate(RangeCall("rate", metric("c"), 600), end))
    if inc:
        assert inc[()] >= 0
        assert rate[()] * 600 == pytest.approx(inc[()], rel=1e-12, abs=1e-9)


@given(st.lists(st.floats(-1e3, 1e3, allow_nan=False), min_size=1, max_size=6))
def test_set_identities(vals):
    s = store({x("a", i=str(i)): [v] for i, v in enumerate(vals)})
    ev, a = Evaluator(s), metric("a")
    assert ev.evaluate(a.and_(a), 0) == ev.evaluate(a, 0)
    assert ev.evaluate(a.or_(a), 0) == ev.evaluate(a, 0)
    assert ev.evaluate(a.unless(a), 0) == []
    assert ev.evaluate(Aggregate("count", a, by=()), 0) == [((), float(len(vals)))]

"""Traces: formats, per-row errors with line numbers, --skip-bad-rows; synthetic; shapes."""

from __future__ import annotations

import datetime as dt
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from supernode.errors import InputError
from supernode.scheduler import SyntheticSpec, TraceRules, load_trace, synthetic_trace
from supernode.scheduler.shapes import (
    LARGEST_FITTING,
    STATE_BYTES_PER_PARAM,
    draw_shapes,
    fitting_models,
    job_models,
    legal_tp,
)
from supernode.scheduler.synthetic import PHILLY_GPU_COUNTS
from supernode.scheduler.trace import parse_trace

RULES = TraceRules(max_gpus=576)
PHILLY_HEADER = "timestamp,duration,num_gpus,gpu_time,cluster\n"


def test_bundled_philly_trace_is_the_real_one():
    trace = load_trace("philly", RULES)
    assert len(trace) == 82_247 and trace.format == "philly"
    assert trace.submit_s[0] == 0.0 and np.all(np.diff(trace.submit_s) >= 0)
    counts = dict(zip(*np.unique(trace.gpus, return_counts=True), strict=True))
    assert {int(k): int(v) for k, v in counts.items()} == PHILLY_GPU_COUNTS
    assert trace.summary()["submit_span_s"] == pytest.approx(108.9 * 86400, rel=1e-3)


def test_bundled_alibaba_pod_list():
    trace = load_trace("alibaba-openb", RULES)
    assert trace.format == "alibaba-openb"
    # 8,152 pods: 1,088 without a GPU; 897 never scheduled (some overlap) are not jobs
    assert len(trace) + trace.ignored_rows == 8152
    assert set(np.unique(trace.gpus)) <= {1, 2, 4, 8}
    assert (trace.duration_s > 0).all()


def test_missing_columns_are_named():
    with pytest.raises(InputError, match="missing column scheduled_time"):
        parse_trace("name,num_gpu,creation_time,deletion_time\np,1,0,10\n", "x", RULES)
    with pytest.raises(InputError, match="not a known trace format"):
        parse_trace("a,b\n1,2\n", "x", RULES)


BAD = (PHILLY_HEADER + "2017-10-01 00:00:00,100.0,1,100,vc\n"
       "2017-10-01 00:00:05,-3.0,1,0,vc\n"
       "2017-10-01 00:00:06,100.0,1024,0,vc\n"
       "2017-10-01 00:00:07,100.0,1,100,vc\n"
       "not-a-time,100.0,1,100,vc\n"
       "2017-10-01 00:00:09,100.0,2.5,100,vc\n"
       "2017-10-01 00:00:10,100.0\n")


def test_bad_rows_stop_the_load_with_line_numbers():
    with pytest.raises(InputError) as err:
        parse_trace(BAD, "bad.csv", RULES, source="bad.csv")
    text = err.value.render()
    assert text.startswith("bad.csv: line 3: duration: must be a positive run time")
    assert "4 more bad rows: line 4, 6, 7, 8" in text and "--skip-bad-rows" in text


def test_skip_bad_rows_runs_the_rest_and_names_each_line():
    trace = parse_trace(BAD, "bad.csv", RULES, skip_bad_rows=True)
    assert len(trace) == 2
    assert [(e.line, e.column) for e in trace.skipped] == [
        (3, "duration"), (4, "num_gpus"), (6, "timestamp"), (7, "num_gpus"), (8, "")]
    assert "larger than the cluster (576 GPUs)" in trace.skipped[1].message


def test_toolkit_format_with_shape_columns():
    rules = TraceRules(576, tp_ok=lambda g, t: None if g % t == 0 else "bad tp",
                       model_index=lambda name: 0 if name == "gpt3-125m" else None)
    text = ("submit_s,duration_s,gpus,priority,tp,model\n"
            "0,10,8,3,4,gpt3-125m\n5,10,2,,,\n7,10,2,0,4,\n9,10,2,0,,bogus\n")
    trace = parse_trace(text, "mine", rules, skip_bad_rows=True)
    assert trace.priority.tolist() == [3, 0] and trace.tp.tolist() == [4, -1]
    assert trace.model.tolist() == [0, -1]
    assert [(e.line, e.column) for e in trace.skipped] == [(4, "tp"), (5, "model")]


@settings(max_examples=10)
@given(jobs=st.integers(4000, 8000), load=st.floats(0.2, 2.0), seed=st.integers(0, 1000))
def test_synthetic_trace_offers_the_load_asked_for(jobs, load, seed):
    """Offered GPU-seconds over capacity is ``load`` (Poisson noise: ~1/sqrt(jobs))."""
    spec = SyntheticSpec(jobs=jobs, load=load)
    trace = synthetic_trace(spec, 576, seed)
    span = trace.submit_s[-1] * jobs / (jobs - 1)
    offered = (trace.gpus * trace.duration_s).sum() / (576 * span)
    assert offered == pytest.approx(load, rel=0.08)
    again = synthetic_trace(spec, 576, seed)
    np.testing.assert_array_equal(trace.submit_s, again.submit_s)
    assert np.all(np.diff(trace.submit_s) >= 0) and (trace.duration_s >= 1).all()


def test_model_ladder_and_fitting_rule():
    models = job_models()
    assert [m.name for m in models][:2] == ["gpt3-125m", "gpt3-350m"]
    assert models[0].params == pytest.approx(125e6, rel=0.02)      # GPT-3 Small
    assert models[-1].name == "llama3-405b"
    h100 = 80e9
    fit = fitting_models(1, h100)
    assert len(fit) <= LARGEST_FITTING
    for i in fit:
        assert models[i].params * STATE_BYTES_PER_PARAM <= 0.5 * h100
    bigger = [i for i in range(len(models)) if i > max(fit)]
    assert all(models[i].params * STATE_BYTES_PER_PARAM > 0.5 * h100 for i in bigger)


def test_shapes_are_seeded_legal_and_kept_when_given():
    gpus = np.array([1, 8, 16, 128, 12] * 40)
    a = draw_shapes(gpus, 72, 186e9, seed=7)
    b = draw_shapes(gpus, 72, 186e9, seed=7)
    np.testing.assert_array_equal(a.tp, b.tp)
    np.testing.assert_array_equal(a.model, b.model)
    for g, m, t in zip(gpus, a.model, a.tp, strict=True):
        assert t in legal_tp(int(m), int(g), 72) and g % t == 0
    fixed = draw_shapes(gpus, 72, 186e9, seed=7, tp=np.full(len(gpus), 1),
                        model=np.full(len(gpus), 2))
    assert set(fixed.tp) == {1} and set(fixed.model) == {2}
    assert len(set(draw_shapes(gpus, 72, 186e9, seed=8).tp.tolist())) > 1


def _both_ways(text: str) -> tuple[object, object]:
    """``parse_trace`` as it runs, and with the column-wise Philly parser switched off (every
    row through the row-by-row checks): each a Trace's fields, or the error's text."""
    from supernode.scheduler import trace as trace_module

    def parsed():
        try:
            t = parse_trace(text, "t.csv", RULES, source="t.csv")
        except InputError as exc:
            return exc.render()
        return [(k, v.dtype.str, v.tobytes()) if isinstance(v, np.ndarray) else (k, v)
                for k, v in vars(t).items()]
    fast = parsed()
    with mock.patch.object(trace_module, "philly_rows", lambda *args: None):
        slow = parsed()
    return fast, slow


def test_bundled_philly_parsed_by_columns_is_the_row_by_row_parse():
    from supernode.scheduler.philly_columns import philly_rows
    from supernode.scheduler.trace import trace_source

    with open(trace_source("philly")[1], encoding="utf-8") as f:
        text = f.read()
    lines = text.splitlines()
    records = [line.split(",") if line else [] for line in lines[1:]]
    assert philly_rows(records, lines[0].split(","), 2**62, 8) is not None  # taken
    fast, slow = _both_ways(text)
    assert fast == slow and isinstance(fast, list)


_CELLS = {
    "timestamp": st.sampled_from(["2017-10-01 00:00:00", "2016-02-29 23:59:59",
                                  "2017-10-09 07:01:55", " 2017-10-01 00:00:07",
                                  "2017-10-01T00:00:08", "2017-02-29 00:00:00",
                                  "2017-10-01 24:00:00", "0000-01-01 00:00:00",
                                  "2017-10-01 00:00:09.5", ""]),
    "duration": st.sampled_from(["66.0", "1", " 2951.0", "1e3", "0", "-3", "nan", "inf",
                                 "x", "", "1_0"]),
    "num_gpus": st.sampled_from(["1", "8", "8.0", " 16", "2.5", "0", "576", "577", "",
                                 "inf"]),
}


_PLAIN_ROW = st.tuples(
    st.datetimes(min_value=dt.datetime(1000, 1, 1), max_value=dt.datetime(9999, 12, 31)),
    st.floats(min_value=1e-3, max_value=1e9), st.integers(1, 576), st.booleans()).map(
    lambda r: f"{r[0]:%Y-%m-%d %H:%M:%S},{r[1]!r},{r[2]}{'.0' * r[3]},0,vc")


@settings(max_examples=60, deadline=None)
@given(st.one_of(
    st.lists(_PLAIN_ROW, min_size=1, max_size=30),  # every row plain: parsed by columns
    st.lists(st.one_of(
        st.fixed_dictionaries(_CELLS).map(
            lambda c: f"{c['timestamp']},{c['duration']},{c['num_gpus']},0,vc"),
        st.sampled_from(["", ",,,,", "2017-10-01 00:00:00,1,1"])), min_size=1, max_size=12)))
def test_philly_rows_parsed_by_columns_or_row_by_row_alike(lines):
    fast, slow = _both_ways(PHILLY_HEADER + "\n".join(lines) + "\n")
    assert fast == slow

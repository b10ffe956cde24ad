"""The tests' work counter (:mod:`work`): it counts executed lines the same way every time,
stops a long loop at its limit, leaves imports out and puts back the tracer it found."""

from __future__ import annotations

import importlib
import sys

import pytest
from work import TooMuchWork, counting_lines


def _walk(stop: int) -> int:
    radix = 2
    while radix < stop:
        radix += 2
    return radix


def test_the_count_is_the_same_every_time_and_grows_with_the_work():
    counts = []
    for stop in (100, 100, 1_000):
        with counting_lines() as work:
            _walk(stop)
        counts.append(work.lines)
    assert counts[0] == counts[1] and counts[2] > 9 * counts[0] > 0


def test_a_loop_past_the_limit_is_stopped_there():
    with pytest.raises(TooMuchWork, match="more than 1,000"), counting_lines(1_000) as work:
        _walk(10**9)
    assert work.lines == 1_001


def test_a_first_import_is_not_counted(monkeypatch):
    monkeypatch.delitem(sys.modules, "calendar", raising=False)
    with counting_lines() as work:
        importlib.import_module("calendar")
    assert "calendar" in sys.modules and work.lines < 50


def test_the_previous_tracer_is_put_back():
    before = sys.gettrace()
    with pytest.raises(TooMuchWork), counting_lines(10):
        _walk(10**6)
    assert sys.gettrace() is before

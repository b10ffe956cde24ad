"""The per-process memory of collective choices: the same answer as without it, arrays the
caller owns, a different tables object is a different question, and answers assembled
from remembered elements equal the ones computed whole."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from supernode.collectives import Fabric, choice_memo, make_tier, model
from supernode.collectives.efficiency import ideal_tables, load_efficiency_tables
from supernode.errors import InputError

FABRIC = Fabric((make_tier("scale_up", 8, 450e9, "nvlink4", in_network_reduction=True),
                 make_tier("scale_out", 64, 50e9, "infiniband_ndr")))
SIZES = np.array([1e3, 1e6, 1e9])
TABLES = load_efficiency_tables()
FIELDS = ("time_s", "algorithm", "protocol", "binding", "crossed")


def _direct(op, sizes, ranks, explain=True, tables=TABLES):
    return model._choose(op, sizes, ranks, FABRIC, tables, model._names(op, None, None),
                         explain)


def _assert_same(got, want):
    for name in FIELDS:
        a, b = getattr(got, name), getattr(want, name)
        assert a.shape == b.shape, name
        assert np.array_equal(a, b) if name == "time_s" else a.tolist() == b.tolist(), name


def test_memo_gives_the_unmemoised_answer_in_arrays_the_caller_owns():
    choice_memo.clear()
    first = model.choose("all_reduce", SIZES, 64, FABRIC, tables=TABLES)
    first.time_s[:] = -1.0  # the caller's copy; the memo must not see it
    again = model.choose("all_reduce", SIZES, 64, FABRIC, tables=TABLES)
    assert len(choice_memo._MEMO) == 1
    _assert_same(again, _direct("all_reduce", SIZES, 64))


def test_other_tables_are_another_question():
    line_rate = ideal_tables(TABLES)
    calibrated = model.choose("all_gather", SIZES, 64, FABRIC, tables=TABLES).time_s
    ideal = model.choose("all_gather", SIZES, 64, FABRIC, tables=line_rate).time_s
    assert np.all(ideal < calibrated)


def test_large_inputs_are_not_remembered():
    choice_memo.clear()
    sizes = np.linspace(1e3, 1e9, model.MEMO_MAX_ELEMENTS + 1)
    model.choose("all_reduce", sizes, 8, FABRIC)
    assert len(choice_memo._MEMO) == 0 and len(choice_memo._ELEMENTS) == 0


def test_a_new_array_of_seen_sizes_is_not_computed_again(monkeypatch):
    choice_memo.clear()
    model.choose("all_reduce", SIZES, np.array([[8], [64]]), FABRIC, explain=False)
    calls = []
    original = model._choose
    monkeypatch.setattr(model, "_choose", lambda *a: calls.append(a[1]) or original(*a))
    grid = np.array([[1e9, 1e3], [1e6, 1e9]])
    got = model.choose("all_reduce", grid, np.array([[64], [8]]), FABRIC, explain=False)
    assert calls == []  # every (ranks, bytes) was seen
    _assert_same(got, _direct("all_reduce", grid, np.array([[64], [8]]), explain=False))
    mixed = np.array([1e9, 5e7, 1e3, 5e7])
    calls.clear()
    model.choose("all_reduce", mixed, 64, FABRIC, explain=False)
    assert [c.tolist() for c in calls] == [[5e7]]  # only the unseen size, once


def test_invalid_elements_are_refused_and_never_remembered():
    choice_memo.clear()
    model.choose("all_reduce", SIZES, 64, FABRIC)
    for sizes, ranks in ((np.array([1e3, -1.0]), 64), (np.array([1e3, np.nan]), 64),
                         (SIZES, 65), (SIZES, 2.5)):
        with pytest.raises(InputError):
            model.choose("all_reduce", sizes, ranks, FABRIC)
    known = next(iter(choice_memo._ELEMENTS.values()))[1]
    assert sorted(known) == sorted((64, s) for s in SIZES.tolist())


OPS = st.sampled_from(["all_reduce", "all_gather", "reduce_scatter", "all_to_all",
                       "broadcast", "p2p"])
VALUES = st.sampled_from([0.0, 1.0, 4096.0, 1e6, 3e7, 2.0**30, 1e11])


@settings(max_examples=40, deadline=None)
@given(op=OPS, explain=st.booleans(), first=st.lists(VALUES, min_size=1, max_size=6),
       second=st.lists(VALUES, min_size=1, max_size=6),
       ranks=st.lists(st.sampled_from([1, 2, 8, 9, 16, 64]), min_size=1, max_size=3))
def test_assembled_answers_equal_whole_ones(op, explain, first, second, ranks):
    choice_memo.clear()
    n = np.array(ranks)[:, None]
    model.choose(op, np.array(first), n, FABRIC, explain=explain)  # some elements seen
    s = np.array(second)
    _assert_same(model.choose(op, s, n, FABRIC, explain=explain), _direct(op, s, n, explain))
    _assert_same(model.choose(op, s[0], ranks[0], FABRIC, explain=explain),
                 _direct(op, s[0], ranks[0], explain))  # 0-d in, 0-d out

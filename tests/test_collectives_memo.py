"""The per-process memo of collective choices: the same answer as without it, arrays the
caller owns, and a different tables object is a different question."""

from __future__ import annotations

import numpy as np

from supernode.collectives import Fabric, make_tier, model
from supernode.collectives.efficiency import ideal_tables, load_efficiency_tables

FABRIC = Fabric((make_tier("scale_up", 8, 450e9, "nvlink4", in_network_reduction=True),
                 make_tier("scale_out", 64, 50e9, "infiniband_ndr")))
SIZES = np.array([1e3, 1e6, 1e9])


def test_memo_gives_the_unmemoised_answer_in_arrays_the_caller_owns():
    tables = load_efficiency_tables()
    model._MEMO.clear()
    first = model.choose("all_reduce", SIZES, 64, FABRIC, tables=tables)
    direct = model._choose("all_reduce", SIZES, 64, FABRIC, tables,
                           model._names("all_reduce", None, None), True)
    first.time_s[:] = -1.0  # the caller's copy; the memo must not see it
    again = model.choose("all_reduce", SIZES, 64, FABRIC, tables=tables)
    assert len(model._MEMO) == 1
    np.testing.assert_array_equal(again.time_s, direct.time_s)
    assert list(again.algorithm) == list(direct.algorithm)
    assert list(again.binding) == list(direct.binding)


def test_other_tables_are_another_question():
    tables = load_efficiency_tables()
    line_rate = ideal_tables(tables)
    calibrated = model.choose("all_gather", SIZES, 64, FABRIC, tables=tables).time_s
    ideal = model.choose("all_gather", SIZES, 64, FABRIC, tables=line_rate).time_s
    assert np.all(ideal < calibrated)


def test_large_inputs_are_not_remembered():
    model._MEMO.clear()
    sizes = np.linspace(1e3, 1e9, model.MEMO_MAX_ELEMENTS + 1)
    model.choose("all_reduce", sizes, 8, FABRIC)
    assert len(model._MEMO) == 0

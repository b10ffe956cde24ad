"""nccl-tests algorithm/bus bandwidth definitions (doc/PERFORMANCE.md)."""

from __future__ import annotations

import numpy as np
import pytest

from supernode.collectives import (
    OPS,
    algbw_bytes_per_s,
    busbw_bytes_per_s,
    busbw_factor,
    time_from_busbw_s,
)
from supernode.errors import InputError


@pytest.mark.parametrize(("op", "n", "factor"), [
    ("all_reduce", 8, 2 * 7 / 8),
    ("all_reduce", 2, 1.0),
    ("all_gather", 8, 7 / 8),
    ("reduce_scatter", 16, 15 / 16),
    ("all_to_all", 4, 3 / 4),
    ("broadcast", 8, 1.0),
    ("reduce", 8, 1.0),
    ("p2p", 2, 1.0),
])
def test_busbw_factor_matches_nccl_tests(op, n, factor):
    assert busbw_factor(op, n) == pytest.approx(factor)


def test_one_rank_moves_nothing():
    for op in ("all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast"):
        assert busbw_factor(op, 1) == 0.0


def test_busbw_from_time_and_inverse_round_trip():
    sizes = np.array([2.0**20, 2.0**30])
    t = np.array([34.65e-6, 4.0e-3])
    bus = busbw_bytes_per_s("all_reduce", sizes, 8, t)
    assert np.allclose(bus, sizes / t * 1.75)
    assert np.allclose(time_from_busbw_s("all_reduce", sizes, 8, bus), t)
    assert algbw_bytes_per_s(2.0**30, 1.0) == 2.0**30


def test_scalar_in_scalar_out():
    assert isinstance(busbw_factor("all_reduce", 8), float)
    assert isinstance(busbw_bytes_per_s("all_gather", 1e6, 8, 1e-3), float)


def test_unknown_op_and_bad_busbw_are_input_errors():
    with pytest.raises(InputError):
        busbw_factor("allreduce", 8)
    with pytest.raises(InputError):
        time_from_busbw_s("all_reduce", 1e6, 8, 0.0)
    assert set(OPS) == {"all_reduce", "all_gather", "reduce_scatter", "all_to_all",
                        "broadcast", "reduce", "p2p"}

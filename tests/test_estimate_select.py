"""``select``: the elements of ``np.where(cond, a, b)``, bit for bit, each branch computed
only on its own slices of the condition's axis."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from supernode.estimate.select import select


def _branches(x: np.ndarray, y: np.ndarray, seen: list[tuple[int, ...]]):
    def a(r):
        rx = r(x)
        seen.append(np.shape(rx))
        return np.maximum(rx - r(y), 0.0) / 3.0 + r(1.5)

    def b(r):
        return r(x) * r(y) + np.sqrt(np.abs(r(y)))

    return a, b


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_select_equals_where_bit_for_bit(data: st.DataObject) -> None:
    ndim = data.draw(st.integers(1, 4))
    axis = data.draw(st.integers(0, ndim - 1))
    full = tuple(data.draw(st.integers(1, 4)) for _ in range(ndim))
    full = full[:axis] + (data.draw(st.integers(2, 5)),) + full[axis + 1:]
    cond_shape = tuple(n if i == axis else 1 for i, n in enumerate(full))
    cond = np.asarray(data.draw(st.lists(st.booleans(), min_size=full[axis],
                                         max_size=full[axis]))).reshape(cond_shape)
    # inputs at their own shapes: each axis either full or 1 (broadcast), some of fewer axes
    def shape() -> tuple[int, ...]:
        own = tuple(n if data.draw(st.booleans()) else 1 for n in full)
        return own[data.draw(st.integers(0, ndim)):]

    seed = data.draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    x, y = rng.normal(size=shape()), rng.normal(size=shape())
    seen: list[tuple[int, ...]] = []
    a, b = _branches(x, y, seen)
    want = np.where(cond, a(lambda v: v), b(lambda v: v))
    got = select(cond, a, b)
    np.testing.assert_array_equal(np.broadcast_to(got, want.shape), want)
    assert np.broadcast_shapes(want.shape, got.shape) == want.shape  # no wider than where
    has_axis = np.ndim(x) >= ndim - axis and np.shape(x)[axis - ndim] > 1
    if 0 < cond.sum() < cond.size and has_axis:
        assert seen[-1][axis - ndim] == int(cond.sum())  # the branch saw its slices only


def test_uniform_conditions_compute_one_branch() -> None:
    calls: list[str] = []

    def a(r):
        calls.append("a")
        return r(np.ones(3))

    def b(r):
        calls.append("b")
        return r(np.zeros(3))

    np.testing.assert_array_equal(select(np.array([True, True, True]), a, b), np.ones(3))
    np.testing.assert_array_equal(select(False, a, b), np.zeros(3))
    assert calls == ["a", "b"]


def test_conditions_varying_along_two_axes_fall_back_to_where() -> None:
    cond = np.array([[True, False], [False, True]])
    x = np.arange(4.0).reshape(2, 2)
    got = select(cond, lambda r: r(x) + 1.0, lambda r: r(x) * 10.0)
    np.testing.assert_array_equal(got, np.where(cond, x + 1.0, x * 10.0))

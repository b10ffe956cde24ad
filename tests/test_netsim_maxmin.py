"""Max-min fairness by progressive filling: textbook cases and invariants (hypothesis)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from supernode.netsim.maxmin import check_max_min, max_min_rates


def _csr(classes: list[list[tuple[int, float]]]):
    ptr = np.cumsum([0] + [len(c) for c in classes])
    links = np.array([link for c in classes for link, _ in c], dtype=np.int64)
    mult = np.array([m for c in classes for _, m in c], dtype=float)
    return ptr, links, mult


def test_textbook_example() -> None:
    # Bertsekas & Gallager: link 0 (cap 1) carries flows A, B; link 1 (cap 1) B, C, D.
    ptr, links, mult = _csr([[(0, 1)], [(0, 1), (1, 1)], [(1, 1)], [(1, 1)]])
    rates, bottleneck = max_min_rates(ptr, links, mult, np.array([1.0, 1.0]))
    assert np.allclose(rates, [2 / 3, 1 / 3, 1 / 3, 1 / 3])
    assert bottleneck.tolist() == [0, 1, 1, 1]


def test_multiplicity_counts_flows() -> None:
    # one class of 4 flows sharing a link of 8 with a single flow: each flow gets 8/5
    ptr, links, mult = _csr([[(0, 4.0)], [(0, 1.0)]])
    rates, _ = max_min_rates(ptr, links, mult, np.array([8.0]))
    assert np.allclose(rates, [1.6, 1.6])


def test_class_without_links_is_unbounded() -> None:
    rates, bottleneck = max_min_rates(np.array([0, 0, 1]), np.array([0]), np.array([1.0]),
                                      np.array([5.0]))
    assert rates[0] == np.inf and bottleneck[0] == -1 and rates[1] == 5.0


@st.composite
def problems(draw):
    n_links = draw(st.integers(1, 6))
    capacity = np.array(draw(st.lists(st.floats(0.5, 100.0), min_size=n_links,
                                      max_size=n_links)))
    classes = []
    for _ in range(draw(st.integers(1, 8))):
        used = draw(st.lists(st.integers(0, n_links - 1), min_size=1, max_size=n_links,
                             unique=True))
        classes.append([(link, draw(st.sampled_from([0.25, 0.5, 1.0, 2.0, 3.0])))
                        for link in used])
    return _csr(classes), capacity


@settings(max_examples=200, deadline=None)
@given(problems())
def test_feasible_and_fair(problem) -> None:
    (ptr, links, mult), capacity = problem
    rates, bottleneck = max_min_rates(ptr, links, mult, capacity)
    assert np.all(np.isfinite(rates)) and np.all(rates > 0)
    assert check_max_min(ptr, links, mult, capacity, rates) == []
    # the reported bottleneck is one of the class's links and it is full
    load = np.bincount(links, weights=mult * rates[np.repeat(np.arange(ptr.size - 1),
                                                             np.diff(ptr))],
                       minlength=capacity.size)
    for c in range(ptr.size - 1):
        assert bottleneck[c] in links[ptr[c]:ptr[c + 1]]
        assert load[bottleneck[c]] >= capacity[bottleneck[c]] * (1 - 1e-6)


@settings(max_examples=50, deadline=None)
@given(problems())
def test_deterministic_bit_for_bit(problem) -> None:
    (ptr, links, mult), capacity = problem
    a = max_min_rates(ptr, links, mult, capacity)
    b = max_min_rates(ptr.copy(), links.copy(), mult.copy(), capacity.copy())
    assert a[0].tobytes() == b[0].tobytes() and a[1].tobytes() == b[1].tobytes()


def test_checker_catches_unfair_allocation() -> None:
    ptr, links, mult = _csr([[(0, 1)], [(0, 1)]])
    cap = np.array([2.0])
    assert check_max_min(ptr, links, mult, cap, np.array([1.5, 0.5]))  # unfair
    assert check_max_min(ptr, links, mult, cap, np.array([1.5, 1.5]))  # over capacity
    assert check_max_min(ptr, links, mult, cap, np.array([1.0, 1.0])) == []

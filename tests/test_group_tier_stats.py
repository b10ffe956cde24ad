"""The tier statistics of group views: the packed one-key sort against the plain
row-wise definition (differential, random member sets)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from supernode.collectives.groups import _tier_stats


def _by_definition(members: np.ndarray, inner: int, outer_size: int) -> tuple[int, ...]:
    """Per row and block: members, parts, smallest and largest part; the worst row by
    smallest part, then most parts, then most members (first such in row/block order)."""
    candidates = []
    for row in members:
        for block in sorted(set((row // outer_size).tolist())):
            in_block = row[row // outer_size == block]
            _, counts = np.unique(in_block // inner, return_counts=True)
            candidates.append((int(counts.sum()), len(counts), int(counts.min()),
                               int(counts.max())))
    return min(candidates, key=lambda c: (c[2], -c[1], -c[0]))


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.integers(1, 6), st.integers(1, 12), st.sampled_from([1, 2, 4, 8]),
       st.integers(1, 8), st.integers(0, 2**31))
def test_packed_sort_matches_the_definition(rows, width, inner, blocks_per, seed):
    rng = np.random.default_rng(seed)
    outer = inner * blocks_per
    members = np.sort(rng.choice(rows * width * 16, size=(rows, width), replace=True),
                      axis=1).astype(np.int64)
    assert _tier_stats(members, inner, outer) == _by_definition(members, inner, outer)

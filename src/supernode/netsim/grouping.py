"""Exact grouping of equal rows of an integer matrix, by hashing then checking.

``numpy.unique(axis=0)`` sorts rows as byte strings, slowly for wide or long matrices (a
16,384-domain signature table, a million links' class keys). :func:`group_rows` hashes
each row to one 64-bit number, groups the hashes, then checks every row against its
group's first row; on a collision it falls back to ``numpy.unique(axis=0)``, so the
answer is always exact.
"""

from __future__ import annotations

import numpy as np

_WEIGHTS = np.random.default_rng(20260101).integers(1, 2**63, size=4096, dtype=np.uint64) | 1


def group_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Groups of equal rows of an ``int64`` matrix: ``(first, group)`` where group ``g``'s
    first row is ``first[g]`` and row ``i`` is in ``group[i]``; groups are numbered in
    order of first appearance."""
    rows = np.ascontiguousarray(rows, dtype=np.int64)
    if rows.shape[0] == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    width = rows.shape[1]
    if width > _WEIGHTS.size:
        _, first, group = np.unique(rows, axis=0, return_index=True, return_inverse=True)
    else:
        with np.errstate(over="ignore"):
            h = (rows.view(np.uint64) * _WEIGHTS[:width]).sum(axis=1, dtype=np.uint64)
        _, first, group = np.unique(h, return_index=True, return_inverse=True)
        if not np.array_equal(rows, rows[first[group.ravel()]]):
            _, first, group = np.unique(rows, axis=0, return_index=True,
                                        return_inverse=True)
    group = group.ravel()
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    return first[order], rank[group]

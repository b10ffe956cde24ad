"""What a collective choice answers (:class:`Choice`) and the per-process memory of answers.

The planner, the reliability and scheduling stages ask the same questions many times: a
design review makes 12,555 choices, 3,205 of them distinct; one plan search costs 27,292
message sizes in 426 calls, of which only 1,250 (op, group, ranks, size) are distinct.
Two memories answer them, both per process and for small inputs only
(:data:`MEMO_MAX_ELEMENTS`):

* whole answers, keyed on the exact input arrays (bytes, ranks), the group's fabric, the
  candidate algorithms and the tables object: a repeated question costs one look-up;
* single elements, keyed on (ranks, bytes) per (op, fabric, candidates, tables): a new
  array whose sizes were all seen costs no model evaluation, and only its unseen sizes
  are computed. Every element of a choice depends on its own size and rank count alone
  (the model is elementwise), so an answer assembled from remembered elements is the
  one computed whole (``tests/test_collectives_memo.py``).

Entries hold the tables object they were computed with, so its ``id`` in a key cannot be
reused by another object while the entry lives. Each caller gets its own arrays.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

#: Whole answers and element tables remembered (most recent last); the largest input
#: remembered (elements of bytes plus ranks); the most elements one table keeps.
MEMO_ENTRIES = 8192
MEMO_MAX_ELEMENTS = 4096
ELEMENTS_PER_TABLE = 65_536


@dataclass(frozen=True)
class Choice:
    """Per message size: time (s), algorithm, protocol, and the tier that binds."""

    time_s: np.ndarray
    algorithm: np.ndarray
    protocol: np.ndarray
    binding: np.ndarray
    crossed: np.ndarray


#: The answer's arrays, in order (time first, then the text ones).
FIELDS = tuple(f.name for f in fields(Choice))
Compute = Callable[[np.ndarray, np.ndarray], Choice]

_MEMO: OrderedDict[tuple[Any, ...], tuple[Any, Choice]] = OrderedDict()
_ELEMENTS: OrderedDict[tuple[Any, ...], tuple[Any, dict[tuple[Any, ...], tuple[Any, ...]]]] = \
    OrderedDict()


def clear() -> None:
    """Forget every remembered answer."""
    _MEMO.clear()
    _ELEMENTS.clear()


def remembered(question: tuple[Any, ...], tables: Any, sizes: np.ndarray, ranks: np.ndarray,
               compute: Compute) -> Choice:
    """The choice for ``sizes`` (bytes) and ``ranks`` (arrays, broadcast together) of one
    ``question`` (op, fabric, candidates, explain: hashable), from memory where it can be.

    ``compute(sizes, ranks)`` evaluates the model (and raises for invalid input); it is
    called with the unseen elements only, flattened.
    """
    key = (question, id(tables), sizes.dtype.str, sizes.shape, sizes.tobytes(),
           ranks.dtype.str, ranks.shape, ranks.tobytes())
    hit = _MEMO.get(key)
    if hit is not None:
        _MEMO.move_to_end(key)
        return _copy(hit[1])
    choice = _from_elements(question, tables, sizes, ranks, compute)
    _MEMO[key] = (tables, choice)
    if len(_MEMO) > MEMO_ENTRIES:
        _MEMO.popitem(last=False)
    return _copy(choice)


def _from_elements(question: tuple[Any, ...], tables: Any, sizes: np.ndarray, ranks: np.ndarray,
                   compute: Compute) -> Choice:
    """A whole answer assembled element by element, computing the unseen ones."""
    table_key = (question, id(tables))
    entry = _ELEMENTS.get(table_key)
    if entry is None or len(entry[1]) > ELEMENTS_PER_TABLE:
        entry = _ELEMENTS[table_key] = (tables, {})
        if len(_ELEMENTS) > MEMO_ENTRIES:
            _ELEMENTS.popitem(last=False)
    else:
        _ELEMENTS.move_to_end(table_key)
    known = entry[1]
    s, n = np.broadcast_arrays(np.asarray(sizes, dtype=float), ranks)
    shape = s.shape
    s_flat: np.ndarray
    n_flat: np.ndarray
    inverse: np.ndarray | None
    if n.size and np.all(n == n.flat[0]):  # one rank count: look up each distinct size once
        unique_s, inverse = np.unique(s.ravel(), return_inverse=True)
        n_flat = np.full(unique_s.shape, n.flat[0])
        s_flat = unique_s
    else:
        s_flat, n_flat, inverse = s.ravel(), n.ravel(), None
    pairs = list(zip(n_flat.tolist(), s_flat.tolist(), strict=True))
    unseen = [i for i, pair in enumerate(pairs) if pair not in known]
    if unseen:
        fresh = compute(s_flat[unseen], n_flat[unseen])
        columns = [getattr(fresh, name).tolist() for name in FIELDS]
        for j, i in enumerate(unseen):
            known[pairs[i]] = tuple(column[j] for column in columns)
    rows = [known[pair] for pair in pairs]
    columns = [np.array([r[k] for r in rows], dtype=float if k == 0 else object)
               for k in range(len(FIELDS))]
    if inverse is not None:
        columns = [c[inverse] for c in columns]
    return Choice(*(c.reshape(shape) for c in columns))


def _copy(choice: Choice) -> Choice:
    return Choice(*(np.array(getattr(choice, name), copy=True) for name in FIELDS))

"""Node ids of an array-built network, kept as arrays and turned into tuples on demand.

A cluster of 131,072 GPUs has ~330,000 simulated nodes; a tuple and a dict entry per node
would cost ~60 MB and half a second before anything runs. :class:`NodeTable` stores each
id ``(prefix, first[, second])`` as three arrays and behaves as the sequence of tuples the
graph path keeps (``net.nodes[i]``, ``len``, iteration); :class:`NodeIndex` is the mapping
from id back to index (``net.index[("leaf", 3)]``, ``in``, ``items()``), answered by a
binary search over encoded ids.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator, Mapping, Sequence
from functools import cached_property

import numpy as np

#: Bits of an encoded id given to ``second + 1`` and to ``first`` (the prefix takes the rest).
_SECOND_BITS, _FIRST_BITS = 22, 35


class NodeTable(Sequence):
    """Ids ``(prefixes[code[i]], first[i])``, or ``(..., first[i], second[i])`` where
    ``second[i] >= 0``, for nodes ``i = 0 .. n-1``."""

    def __init__(self, prefixes: Sequence[str], code: np.ndarray, first: np.ndarray,
                 second: np.ndarray) -> None:
        self.prefixes = tuple(prefixes)
        self.code = np.asarray(code, dtype=np.int8)
        self.first = np.asarray(first, dtype=np.int64)
        self.second = np.asarray(second, dtype=np.int64)
        if not (self.code.size == self.first.size == self.second.size):
            raise ValueError("node table arrays differ in length")

    def __len__(self) -> int:
        return int(self.code.size)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        i = int(i)
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError("node index out of range")
        name, a, b = self.prefixes[self.code[i]], int(self.first[i]), int(self.second[i])
        return (name, a) if b < 0 else (name, a, b)

    def __iter__(self) -> Iterator[tuple]:
        names = [self.prefixes[c] for c in self.code.tolist()]
        for name, a, b in zip(names, self.first.tolist(), self.second.tolist(), strict=True):
            yield (name, a) if b < 0 else (name, a, b)

    @cached_property
    def index(self) -> NodeIndex:  # type: ignore[override]  # net.index, not Sequence.index
        """The id -> index mapping (in place of ``Sequence.index``)."""
        return NodeIndex(self)


class NodeIndex(Mapping):
    """Index of every id of a :class:`NodeTable` (binary search over encoded ids)."""

    def __init__(self, table: NodeTable) -> None:
        self.table = table
        self._codes = {name: c for c, name in enumerate(table.prefixes)}
        if (table.first.size and (table.first.min() < 0
                                  or table.first.max() >= 2**_FIRST_BITS
                                  or table.second.max() >= 2**_SECOND_BITS - 1)):
            raise ValueError("node ids too large for the encoded index")
        keys = self._encode(table.code.astype(np.int64), table.first, table.second)
        self._order = np.argsort(keys, kind="stable")
        self._keys = keys[self._order]

    @staticmethod
    def _encode(code, first, second):
        return (code << (_FIRST_BITS + _SECOND_BITS)) | (first << _SECOND_BITS) | (second + 1)

    def _find(self, node: Hashable) -> int | None:
        if not isinstance(node, tuple) or len(node) not in (2, 3):
            return None
        code = self._codes.get(node[0]) if isinstance(node[0], str) else None
        rest = node[1:]
        if code is None or not all(isinstance(x, int | np.integer) and not isinstance(x, bool)
                                   and 0 <= x < 2**_FIRST_BITS for x in rest):
            return None
        second = int(rest[1]) if len(rest) == 2 else -1
        if second >= 2**_SECOND_BITS - 1:
            return None
        key = self._encode(code, int(rest[0]), second)
        pos = int(np.searchsorted(self._keys, key))
        if pos < self._keys.size and self._keys[pos] == key:
            return int(self._order[pos])
        return None

    def __getitem__(self, node: Hashable) -> int:
        found = self._find(node)
        if found is None:
            raise KeyError(node)
        return found

    def __contains__(self, node: object) -> bool:
        return self._find(node) is not None

    def __iter__(self) -> Iterator[tuple]:
        return iter(self.table)

    def __len__(self) -> int:
        return len(self.table)

    def items(self):
        """``(id, index)`` pairs in index order."""
        return zip(self.table, range(len(self.table)), strict=True)

"""The limits every parsed document meets, YAML or JSON, and the check of parsed data.

* a document over :data:`MAX_DOCUMENT_BYTES` is refused before it is parsed;
* more than :data:`MAX_NODES` nodes (keys, values, lists and mappings) or nesting deeper
  than :data:`MAX_DEPTH` levels is refused, with the messages :func:`too_many_nodes` and
  :func:`too_deep` (:mod:`supernode.spec.documents` counts YAML on its event stream, the
  check here counts JSON);
* only JSON's value types, finite numbers and integers within the signed 64-bit range
  (:data:`MAX_INTEGER`) are accepted (:func:`check_data`).
"""

from __future__ import annotations

import math
import reprlib
from typing import Any

from supernode.errors import InputError

MAX_DOCUMENT_BYTES = 16 * 2**20
MAX_NODES = 200_000
MAX_DEPTH = 100
MAX_INTEGER = 2**63 - 1


def too_many_nodes(count_text: str, line: int | None, aliases: bool) -> str:
    """The message for a document of ``count_text`` nodes (``line``: where the count
    passed the limit; ``aliases``: YAML aliases were expanded)."""
    where = f" by line {line:,}" if line else ""
    how = ", aliases expanded (an alias bomb?)" if aliases else ""
    return (f"document has {count_text} nodes (keys, values, lists and mappings{how})"
            f"{where}; the limit is {MAX_NODES:,}")


def too_deep() -> str:
    """The message for a document nesting deeper than :data:`MAX_DEPTH`."""
    return f"document nests too deeply: more than {MAX_DEPTH} levels (the limit)"


_PLAIN = (str, bool, int, float, type(None))


def check_data(data: Any, source: str, count_nodes: bool) -> None:
    """Only JSON value types, finite numbers, integers in range, no recursion; for JSON the
    node and depth limits too. InputError with the path of the first bad value."""
    try:
        _walk(data, "", 0, set(), [0] if count_nodes else None)
    except InputError as exc:
        raise InputError(exc.path, exc.message, source=source) from None


def _walk(value: Any, path: str, depth: int, inside: set[int], count: list[int] | None
          ) -> None:
    if count is not None:
        count[0] += 1 + (len(value) if isinstance(value, dict) else 0)  # keys are nodes
        if count[0] > MAX_NODES:
            raise InputError("", too_many_nodes(f"more than {MAX_NODES:,}", None, False))
    if isinstance(value, dict | list):
        if depth >= MAX_DEPTH:  # this mapping or list is level depth + 1
            raise InputError("", too_deep())
        if id(value) in inside:
            raise InputError(path, "refers to a mapping or list that contains it (a "
                                   "recursive alias)")
        inside.add(id(value))
        items = value.items() if isinstance(value, dict) else enumerate(value)
        for key, item in items:
            if isinstance(value, dict) and not isinstance(key, _PLAIN):
                raise InputError(path, f"a key must be text or a number, got "
                                       f"{type(key).__name__}")
            where = f"[{key}]" if isinstance(value, list) else \
                (f"{path}.{key}" if path else str(key))
            _walk(item, f"{path}{where}" if isinstance(value, list) else where, depth + 1,
                  inside, count)
        inside.discard(id(value))
    elif not isinstance(value, _PLAIN):
        raise InputError(path, f"{type(value).__name__} values (YAML tags such as !!binary, "
                               "!!set) are not supported; give text, a number, a list or a "
                               "mapping")
    elif isinstance(value, float) and not math.isfinite(value):
        raise InputError(path, f"{value} is not a finite number")
    elif isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_INTEGER:
        raise InputError(path, f"integer {reprlib.repr(value)} is out of range (at most "
                               f"{MAX_INTEGER:,} in size)")

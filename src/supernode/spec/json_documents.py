"""Parsing JSON text with the limits and messages of YAML (:mod:`supernode.spec.documents`).

A key given twice in one mapping is refused, and so are ``NaN`` and ``Infinity``; the size,
node, depth and value limits are :mod:`supernode.spec.document_limits`'.
"""

from __future__ import annotations

import json
from typing import Any

from supernode.errors import InputError
from supernode.spec.document_limits import MAX_DOCUMENT_BYTES, check_data, too_deep


def _json_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise InputError("", f"{key[:40]!r} is given twice in one mapping; keep one")
        out[key] = value
    return out


def _json_constant(name: str) -> Any:
    raise InputError("", f"{name} is not a finite number (JSON has no NaN or Infinity)")


def parse_json(text: str, source: str = "<input>") -> Any:
    """Parse JSON text with the same limits and messages as YAML's
    (:func:`supernode.spec.documents.parse_text`)."""
    if len(text) > MAX_DOCUMENT_BYTES:
        raise InputError("", f"document is {len(text):,} bytes; the limit is "
                             f"{MAX_DOCUMENT_BYTES:,}", source=source)
    try:
        data = json.loads(text, object_pairs_hook=_json_pairs, parse_constant=_json_constant)
    except InputError as exc:
        raise InputError(exc.path, exc.message, source=source) from None
    except json.JSONDecodeError as exc:
        raise InputError("", f"not valid JSON at line {exc.lineno}, column {exc.colno}: "
                             f"{exc.msg}", source=source) from None
    except RecursionError:
        raise InputError("", too_deep(), source=source) from None
    except ValueError as exc:  # an integer literal of more than 4,300 digits
        raise InputError("", f"cannot read a value: {exc}".split(";")[0],
                         source=source) from None
    check_data(data, source, count_nodes=True)
    return data

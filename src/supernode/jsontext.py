"""The one JSON writer: every ``--json`` output and JSON file the toolkit writes.

JSON has no infinity or NaN, and a model's answer may be one (a message that never gets
through a link at a bit error rate of 0.5 takes ``inf`` seconds). :func:`json_text`
writes such a value as ``null``, always, wherever it sits (a mapping value, a list item,
a numpy float), so every reader gets standard JSON (``docs/limits.md``, "JSON output"):
``null`` where a number is expected means "not finite: infinite or undefined", and the
command's table shows ``inf`` or ``nan`` for it.
"""

from __future__ import annotations

import json
import math
from typing import Any


def finite_or_null(data: Any) -> Any:
    """``data`` with every non-finite float (``inf``, ``-inf``, ``nan``) replaced by None,
    in mappings, lists and tuples at any depth; other values unchanged."""
    if isinstance(data, float):
        return data if math.isfinite(data) else None
    if isinstance(data, dict):
        return {key: finite_or_null(value) for key, value in data.items()}
    if isinstance(data, list | tuple):
        return [finite_or_null(item) for item in data]
    return data


def json_text(data: Any, indent: int | None = 2, sort_keys: bool = False) -> str:
    """``data`` as JSON text (no trailing newline), non-finite numbers written as ``null``
    (:func:`finite_or_null`); never NaN or Infinity in the text."""
    return json.dumps(finite_or_null(data), indent=indent, sort_keys=sort_keys,
                      allow_nan=False)

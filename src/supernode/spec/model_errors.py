"""Validation errors of the spec models as :class:`~supernode.errors.InputError`: one
dotted field path and what is allowed, whatever model raised it.

A cross-field rule raises :func:`fail` (its path relative to the model); an unknown field
gets the nearest valid name; other errors take the shared loader's wording.
"""

from __future__ import annotations

import difflib
from typing import Any, TypeVar

from pydantic import ValidationError
from pydantic_core import PydanticCustomError

from supernode.errors import InputError
from supernode.spec.base import StrictModel
from supernode.spec.loader import explain_validation_error, format_path

CROSS_FIELD_ERROR = "supernode_cross_field"


def fail(path: str, message: str) -> PydanticCustomError:
    """A validation error that remembers the field path relative to the model raising it."""
    return PydanticCustomError(CROSS_FIELD_ERROR, "{path}: {message}",
                               {"path": path, "message": message})


Model = TypeVar("Model", bound=StrictModel)


def validate_as(model: type[Model], data: Any, what: str,
                source: str | None = None) -> Model:
    """Validate parsed YAML/JSON ``data`` as ``model``; raise :class:`InputError` with the path."""
    if not isinstance(data, dict):
        raise InputError("", f"expected a mapping of {what} fields, got {type(data).__name__}",
                         source=source)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        err = input_error_from_validation(exc, model)
        raise InputError(err.path, err.message, source=source) from None


def input_error_from_validation(exc: ValidationError, model: type[StrictModel]) -> InputError:
    """Turn a pydantic error into an :class:`InputError` with a dotted field path.

    An unknown field is reported first (a misspelt name also makes the right one
    "missing"), with the nearest valid name from difflib. Cross-field errors raised by
    this module's validators carry their own sub-path, joined to the pydantic location
    (``moe`` + ``top_k`` -> ``moe.top_k``); other errors use the shared loader's wording.
    """
    errors = exc.errors()
    err = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])
    loc = tuple(err["loc"])
    if err["type"] == "extra_forbidden":
        known = _field_names(model, loc[:-1])
        close = difflib.get_close_matches(str(loc[-1]), known, n=1, cutoff=0.5)
        hint = f"did you mean {close[0]!r}? " if close else ""
        return InputError(format_path(loc), f"unknown field; {hint}allowed: {', '.join(known)}")
    if err["type"] == CROSS_FIELD_ERROR:
        ctx = err.get("ctx") or {}
        base = format_path(loc)
        return InputError(f"{base}.{ctx['path']}" if base else ctx["path"], ctx["message"])
    out = explain_validation_error(exc, model)
    if err["type"] not in ("missing", "literal_error") and "input" in err:
        return InputError(out.path, f"{out.message} (got {err['input']!r})")
    return out


def _field_names(model: type[StrictModel], loc: tuple[Any, ...]) -> list[str]:
    """Field names of the (nested) model at ``loc``, for unknown-field suggestions."""
    current: Any = model
    for part in loc:
        field = getattr(current, "model_fields", {}).get(part)
        if field is None:
            break
        inner = [a for a in getattr(field.annotation, "__args__", (field.annotation,))
                 if isinstance(a, type) and issubclass(a, StrictModel)]
        current = inner[0] if inner else None
    return list(getattr(current, "model_fields", {}))

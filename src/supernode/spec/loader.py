"""Read YAML/JSON documents safely and turn validation failures into one clear error.

Parsing (size, node, depth and value limits, the same for YAML and JSON) lives in
:mod:`supernode.spec.documents` (YAML), :mod:`supernode.spec.json_documents` and
:mod:`supernode.spec.document_limits`; their names are re-exported here, the one place
commands read documents from. Pydantic errors become an :class:`InputError` naming the field path
(``scale_up.dims[2]``) and what is allowed; an unknown field gets the nearest valid name
as a suggestion.
"""

from __future__ import annotations

import difflib
import reprlib
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from supernode.errors import InputError
from supernode.inputs import read_text_file
from supernode.spec.base import FieldError, StrictModel
from supernode.spec.document_limits import MAX_DEPTH, MAX_DOCUMENT_BYTES, MAX_INTEGER, MAX_NODES
from supernode.spec.documents import parse_text
from supernode.spec.json_documents import parse_json

__all__ = ["MAX_DEPTH", "MAX_DOCUMENT_BYTES", "MAX_INTEGER", "MAX_NODES", "parse_json",
           "parse_text", "read_document", "validate_document", "explain_validation_error",
           "format_path"]

ModelT = TypeVar("ModelT", bound=BaseModel)


def read_document(path: str | Path) -> Any:
    """Read and parse a YAML or JSON file (by its suffix); missing, unreadable, non-regular
    or over-limit files are InputErrors."""
    text = read_text_file(path, limit_bytes=MAX_DOCUMENT_BYTES)
    if str(path).lower().endswith(".json"):
        return parse_json(text, source=str(path))
    return parse_text(text, source=str(path))


#: Union branch tags pydantic puts in error locations (``host.accelerator.str``).
_BRANCH_TAGS = frozenset({"str", "int", "float", "bool", "none", "list", "dict"})


def _model_names(cls: type[StrictModel] = StrictModel) -> set[str]:
    names = {cls.__name__}
    for sub in cls.__subclasses__():
        names |= _model_names(sub)
    return names


def _is_branch_tag(part: Any) -> bool:
    return isinstance(part, str) and (
        part in _BRANCH_TAGS or "[" in part or part.startswith("function-")
        or part in _model_names()  # a model branch: 'AcceleratorSpec'
    )


def format_path(loc: tuple[Any, ...], keep_last: bool = False) -> str:
    """Render a pydantic error location as ``a.b[2].c`` (dropping union branch tags).

    ``keep_last`` keeps the final part whatever it is: the user's key of an unknown field.
    """
    out = ""
    for index, part in enumerate(loc):
        if isinstance(part, int):
            out += f"[{part}]"
        elif _is_branch_tag(part) and not (keep_last and index == len(loc) - 1):
            continue  # tagged-union branch names such as 'str' or 'AcceleratorSpec'
        else:
            text = str(part) if len(str(part)) <= 60 else f"{str(part)[:57]}..."
            out += f".{text}" if out else text
    return out


def _pick_error(errors: list[Any]) -> Any:
    """The error to report: an unknown field first (a misspelt required field is reported as
    the typo, with its suggestion, not as 'missing'); for a mapping given to a ``name |
    Model`` union, the model's error rather than 'should be a valid string'."""
    first = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])
    loc = tuple(first["loc"])
    if loc and loc[-1] == "str" and isinstance(first.get("input"), dict):
        for err in errors[1:]:
            if tuple(err["loc"])[: len(loc) - 1] == loc[:-1] and tuple(err["loc"]) != loc:
                return err
    return first


def _field_names(model: type[BaseModel], loc: tuple[Any, ...]) -> list[str]:
    """Valid field names of the sub-model at ``loc`` (best effort, for suggestions)."""
    current: Any = model
    for part in loc:
        if isinstance(part, int) or not hasattr(current, "model_fields"):
            continue
        field = current.model_fields.get(part)
        if field is None:
            break
        current = _inner_model(field.annotation)
    return list(current.model_fields) if hasattr(current, "model_fields") else []


def _inner_model(annotation: Any) -> Any:
    for arg in (*getattr(annotation, "__args__", ()), annotation):
        if isinstance(arg, type) and issubclass(arg, BaseModel):
            return arg
        inner = getattr(arg, "__args__", ())
        for sub in inner:
            if isinstance(sub, type) and issubclass(sub, BaseModel):
                return sub
    return annotation


def explain_validation_error(exc: ValidationError, model: type[BaseModel]) -> InputError:
    """Convert the first pydantic error into an :class:`InputError` with path and fix."""
    err = _pick_error(exc.errors())
    loc = tuple(err["loc"])
    cause = (err.get("ctx") or {}).get("error")
    if isinstance(cause, FieldError):  # a model validator naming one of its fields
        loc = (*loc, cause.field)
    extra = err["type"] == "extra_forbidden"
    path = format_path(loc, keep_last=extra) or model.__name__
    if extra:
        name = str(loc[-1])
        known = _field_names(model, tuple(p for p in loc[:-1] if not _is_branch_tag(p)))
        close = difflib.get_close_matches(name, known, n=1, cutoff=0.5)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        return InputError(path, f"unknown field{hint or '.'} Allowed: {', '.join(known)}")
    message = err["msg"]
    if err["type"] == "value_error" and cause is not None:
        message = str(cause)  # drop pydantic's 'Value error, ' prefix
    if err["type"] in ("literal_error", "enum"):
        message = f"{message} (got {reprlib.repr(err.get('input'))})"
    elif err["type"] == "missing":
        message = "required field is missing"
    return InputError(path, message)


def validate_document(data: Any, model: type[ModelT], source: str | None = None) -> ModelT:
    """Validate parsed data against ``model``; raise :class:`InputError` on failure."""
    if not isinstance(data, dict):
        raise InputError("", f"expected a mapping of fields at the top level, got "
                             f"{type(data).__name__}", source=source)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        err = explain_validation_error(exc, model)
        raise InputError(err.path, err.message, source=source) from None

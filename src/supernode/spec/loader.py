"""Read YAML/JSON documents safely and turn validation failures into one clear error.

* Documents over :data:`MAX_DOCUMENT_BYTES`, or expanding to more than
  :data:`MAX_NODES` YAML nodes (alias "billion laughs" bombs), are refused.
* Pydantic errors become an :class:`InputError` naming the field path
  (``scale_up.dims[2]``) and what is allowed; an unknown field gets the nearest
  valid name as a suggestion.
"""

from __future__ import annotations

import difflib
import json
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from supernode.errors import InputError

MAX_DOCUMENT_BYTES = 16 * 2**20
MAX_NODES = 200_000

ModelT = TypeVar("ModelT", bound=BaseModel)


class _BoundedLoader(yaml.SafeLoader):
    """SafeLoader that counts constructed nodes, so alias expansion cannot explode."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._nodes = 0

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        self._nodes += 1 + (len(node.value) if isinstance(node.value, list) else 0)
        if self._nodes > MAX_NODES:
            raise InputError("", f"document expands to more than {MAX_NODES:,} YAML nodes "
                                 "(alias bomb?); refusing it")
        return super().construct_object(node, deep=deep)


def parse_text(text: str, source: str = "<input>") -> Any:
    """Parse YAML (a superset of JSON) text into Python data, refusing bombs and huge input."""
    if len(text) > MAX_DOCUMENT_BYTES:
        raise InputError("", f"document is {len(text):,} bytes; the limit is "
                             f"{MAX_DOCUMENT_BYTES:,}", source=source)
    loader = _BoundedLoader(text)
    try:
        return loader.get_single_data()
    except InputError as exc:
        raise InputError(exc.path, exc.message, source=source) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise InputError("", f"not valid YAML/JSON{where}: {problem}", source=source) from None
    except RecursionError:
        raise InputError("", "document nests too deeply", source=source) from None
    finally:
        loader.dispose()


def read_document(path: str | Path) -> Any:
    """Read and parse a YAML or JSON file; missing or unreadable files are InputErrors."""
    path = Path(path)
    try:
        size = path.stat().st_size
        if size > MAX_DOCUMENT_BYTES:
            raise InputError("", f"file is {size:,} bytes; the limit is {MAX_DOCUMENT_BYTES:,}",
                             source=str(path))
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError("", "no such file", source=str(path)) from None
    except (IsADirectoryError, PermissionError, UnicodeDecodeError) as exc:
        raise InputError("", f"cannot read: {exc.__class__.__name__}", source=str(path)) from None
    if path.suffix == ".json":
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError("", f"not valid JSON at line {exc.lineno}: {exc.msg}",
                             source=str(path)) from None
    return parse_text(text, source=str(path))


def format_path(loc: tuple[Any, ...]) -> str:
    """Render a pydantic error location as ``a.b[2].c`` (dropping union branch tags)."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif isinstance(part, str) and ("[" in part or part.startswith("function-")):
            continue  # tagged-union branch names such as 'str' or 'AcceleratorSpec'
        else:
            out += f".{part}" if out else str(part)
    return out


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
    err = exc.errors()[0]
    loc = tuple(err["loc"])
    path = format_path(loc) or model.__name__
    if err["type"] == "extra_forbidden":
        name = str(loc[-1])
        known = _field_names(model, loc[:-1])
        close = difflib.get_close_matches(name, known, n=1, cutoff=0.5)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        return InputError(path, f"unknown field{hint} Allowed: {', '.join(known)}")
    message = err["msg"]
    if err["type"] in ("literal_error", "enum"):
        message = f"{message} (got {err.get('input')!r})"
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

"""Read YAML/JSON documents safely and turn validation failures into one clear error.

One parser per format, the same limits and the same messages for both:

* a document over :data:`MAX_DOCUMENT_BYTES` is refused before it is parsed;
* a document of more than :data:`MAX_NODES` nodes (keys, values, lists and mappings;
  YAML aliases counted as often as they are used, so "billion laughs" bombs are caught)
  or nesting deeper than :data:`MAX_DEPTH` levels is refused. For YAML the count runs on
  the C parser's event stream before anything is built, so a refusal is quick;
* a key given twice in one mapping is refused (YAML and JSON);
* only JSON's value types are built: no dates (``2024-01-01`` is text), no binary, sets or
  other tagged values; numbers must be finite (no ``.inf``/``NaN``) and integers within
  the signed 64-bit range (:data:`MAX_INTEGER`).

Pydantic errors become an :class:`InputError` naming the field path
(``scale_up.dims[2]``) and what is allowed; an unknown field gets the nearest valid name
as a suggestion.
"""

from __future__ import annotations

import difflib
import json
import math
import reprlib
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from supernode.errors import InputError
from supernode.inputs import read_text_file
from supernode.spec.base import FieldError, StrictModel

MAX_DOCUMENT_BYTES = 16 * 2**20
MAX_NODES = 200_000
MAX_DEPTH = 100
MAX_INTEGER = 2**63 - 1

ModelT = TypeVar("ModelT", bound=BaseModel)

_CLoader = getattr(yaml, "CSafeLoader", None)
_TIMESTAMP = "tag:yaml.org,2002:timestamp"


def _without_timestamps(resolvers: dict[Any, list[Any]]) -> dict[Any, list[Any]]:
    return {first: [(tag, rx) for tag, rx in items if tag != _TIMESTAMP]
            for first, items in resolvers.items()}


class _StrictConstruction:
    """Mapping construction that refuses a key given twice (YAML keeps the last)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> Any:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else id(key_node)
            if key in seen:
                mark = key_node.start_mark
                raise InputError("", f"{str(key)[:40]!r} is given twice in one mapping "
                                     f"(line {mark.line + 1}); keep one")
            seen.add(key)
        return super().construct_mapping(node, deep=deep)  # type: ignore[misc]


class _StrictLoader(_StrictConstruction, yaml.SafeLoader):
    """Pure-Python strict loader: no timestamps, no duplicate keys."""

    yaml_implicit_resolvers = _without_timestamps(yaml.SafeLoader.yaml_implicit_resolvers)


_LOADER: type = _StrictLoader
if _CLoader is not None:
    class _StrictCLoader(_StrictConstruction, _CLoader):  # type: ignore[misc, valid-type]
        """The same, on libyaml's C parser (about 3x faster)."""

        yaml_implicit_resolvers = _without_timestamps(_CLoader.yaml_implicit_resolvers)

    _LOADER = _StrictCLoader


def _too_many(count_text: str, line: int | None, aliases: bool) -> str:
    where = f" by line {line:,}" if line else ""
    how = ", aliases expanded (an alias bomb?)" if aliases else ""
    return (f"document has {count_text} nodes (keys, values, lists and mappings{how})"
            f"{where}; the limit is {MAX_NODES:,}")


def _too_deep() -> str:
    return f"document nests too deeply: more than {MAX_DEPTH} levels (the limit)"


def _check_events(text: str) -> None:
    """Count nodes (aliases expanded) and depth on the event stream; InputError past a limit.

    Linear in the text: a collection's expanded size is the running total at its end less
    the total at its start, remembered for its anchor.
    """
    anchors: dict[str, int] = {}
    open_: list[tuple[int, str | None]] = []  # (total before it, anchor) per open collection
    total, aliased = 0, False
    for event in yaml.parse(text, Loader=_LOADER):
        if isinstance(event, yaml.AliasEvent):  # a recursive one counts 1; see _walk
            total += anchors.get(event.anchor, 1)
            aliased = True
        elif isinstance(event, yaml.ScalarEvent):
            total += 1
            if event.anchor:
                anchors[event.anchor] = 1
        elif isinstance(event, yaml.CollectionStartEvent):
            open_.append((total, event.anchor))
            total += 1
            if len(open_) > MAX_DEPTH:
                raise InputError("", _too_deep())
        elif isinstance(event, yaml.CollectionEndEvent):
            before, anchor = open_.pop()
            if anchor:
                anchors[anchor] = total - before
            continue
        else:
            continue
        if total > MAX_NODES:
            raise InputError("", _too_many(f"more than {MAX_NODES:,}",
                                           event.start_mark.line + 1, aliased))


_PLAIN = (str, bool, int, float, type(None))


def _check_data(data: Any, source: str, count_nodes: bool) -> None:
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
            raise InputError("", _too_many(f"more than {MAX_NODES:,}", None, False))
    if isinstance(value, dict | list):
        if depth >= MAX_DEPTH:  # this mapping or list is level depth + 1
            raise InputError("", _too_deep())
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


def parse_text(text: str, source: str = "<input>") -> Any:
    """Parse YAML (a superset of JSON) text into Python data, refusing bombs and huge input."""
    if len(text) > MAX_DOCUMENT_BYTES:
        raise InputError("", f"document is {len(text):,} bytes; the limit is "
                             f"{MAX_DOCUMENT_BYTES:,}", source=source)
    loader = None
    try:
        _check_events(text)
        loader = _LOADER(text)
        data = loader.get_single_data()
    except InputError as exc:
        raise InputError(exc.path, exc.message, source=exc.source or source) from None
    except yaml.YAMLError as exc:
        raise InputError("", _yaml_problem(exc), source=source) from None
    except RecursionError:
        raise InputError("", _too_deep(), source=source) from None
    except ValueError as exc:  # a 5,000-digit integer
        raise InputError("", f"cannot read a value: {exc}".split(";")[0], source=source) from None
    finally:
        if loader is not None:
            loader.dispose()
    _check_data(data, source, count_nodes=False)
    return data


def _yaml_problem(exc: yaml.YAMLError) -> str:
    if "maximum nesting depth" in str(exc):  # libyaml's own limit, met while scanning ahead
        return _too_deep()
    mark = getattr(exc, "problem_mark", None)
    where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
    problem = getattr(exc, "problem", None) or getattr(exc, "reason", None) \
        or str(exc).splitlines()[0]
    if isinstance(exc, yaml.reader.ReaderError):
        problem = f"unacceptable character #x{exc.character:04x} at position {exc.position}"
    elif "unacceptable character" in str(problem) or "control characters" in str(problem):
        problem = f"unacceptable character ({problem})"
    return f"not valid YAML/JSON{where}: {problem}"


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
    """Parse JSON text with the same limits and messages as :func:`parse_text`."""
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
        raise InputError("", _too_deep(), source=source) from None
    except ValueError as exc:  # an integer literal of more than 4,300 digits
        raise InputError("", f"cannot read a value: {exc}".split(";")[0],
                         source=source) from None
    _check_data(data, source, count_nodes=True)
    return data


def read_document(path: str | Path) -> Any:
    """Read and parse a YAML or JSON file (by its suffix); missing, unreadable, non-regular
    or over-limit files are InputErrors."""
    text = read_text_file(path, limit_bytes=MAX_DOCUMENT_BYTES)
    if str(path).lower().endswith(".json"):
        return parse_json(text, source=str(path))
    return parse_text(text, source=str(path))


#: Union branch tags pydantic puts in error locations (``host.accelerator.str``).
_BRANCH_TAGS = frozenset({"str", "int", "float", "bool", "none", "list", "dict"})


def _model_names(cls: type = StrictModel) -> set[str]:
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

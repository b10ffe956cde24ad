"""Parsing YAML text safely, and writing it: the one module that imports PyYAML.

The limits (:mod:`supernode.spec.document_limits`), the same for YAML and JSON
(:mod:`supernode.spec.json_documents`):

* a document over :data:`MAX_DOCUMENT_BYTES` is refused before it is parsed;
* a document of more than :data:`MAX_NODES` nodes (keys, values, lists and mappings;
  YAML aliases counted as often as they are used, so "billion laughs" bombs are caught)
  or nesting deeper than :data:`MAX_DEPTH` levels is refused. For YAML the count runs on
  the C parser's event stream before anything is built, so a refusal is quick;
* a key given twice in one mapping is refused (YAML and JSON);
* only JSON's value types are built: no dates (``2024-01-01`` is text), no binary, sets or
  other tagged values; numbers must be finite (no ``.inf``/``NaN``) and integers within
  the signed 64-bit range (``MAX_INTEGER``).

Read files with :func:`supernode.spec.loader.read_document`; validate with the loader's
``validate_document``. Every YAML the toolkit writes is written by :func:`dump_yaml`, in
one style (:data:`YAML_STYLE`).
"""

from __future__ import annotations

from typing import Any

import yaml

from supernode.errors import InputError
from supernode.spec.document_limits import (
    MAX_DEPTH,
    MAX_DOCUMENT_BYTES,
    MAX_NODES,
    check_data,
    too_deep,
    too_many_nodes,
)

#: How every YAML file the toolkit writes looks: keys in the order given, block style,
#: non-ASCII text as itself (seed sections use §), a value never folded over lines (a
#: PromQL expression or a note stays on one line, and diffs stay line by line).
YAML_STYLE: dict[str, Any] = {"sort_keys": False, "default_flow_style": False,
                              "allow_unicode": True, "width": 2**31 - 1}
#: The safe dumper: libyaml's C one when PyYAML was built with it, else the Python one.
_SAFE_DUMPER: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)

_TIMESTAMP = "tag:yaml.org,2002:timestamp"


def _without_timestamps(resolvers: dict[Any, list[Any]]) -> dict[Any, list[Any]]:
    return {first: [(tag, rx) for tag, rx in items if tag != _TIMESTAMP]
            for first, items in resolvers.items()}


class _StrictConstruction(yaml.constructor.SafeConstructor):
    """Mapping construction that refuses a key given twice (YAML keeps the last).

    Mixed in ahead of a safe loader, whose own ``SafeConstructor`` it overrides."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> Any:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else id(key_node)
            if key in seen:
                mark = key_node.start_mark
                raise InputError("", f"{str(key)[:40]!r} is given twice in one mapping "
                                     f"(line {mark.line + 1}); keep one")
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


class _StrictLoader(_StrictConstruction, yaml.SafeLoader):
    """Pure-Python strict loader: no timestamps, no duplicate keys."""

    yaml_implicit_resolvers = _without_timestamps(yaml.SafeLoader.yaml_implicit_resolvers)


_LOADER: type[_StrictLoader | yaml.CSafeLoader] = _StrictLoader
if yaml.__with_libyaml__:  # PyYAML built with libyaml: yaml.CSafeLoader exists
    class _StrictCLoader(_StrictConstruction, yaml.CSafeLoader):
        """The same, on libyaml's C parser (about 3x faster)."""

        yaml_implicit_resolvers = _without_timestamps(yaml.CSafeLoader.yaml_implicit_resolvers)

    _LOADER = _StrictCLoader


#: Explicit YAML tags a document may carry: text (``!!str``) and the non-specific ``!``.
#: Any other (``!!bool maybe``, ``!!binary``, ``!!python/object``) is refused at its field.
ALLOWED_TAGS = frozenset({"tag:yaml.org,2002:str", "!"})


class _Position:
    """The field path of the node an event stream is at (``a.b[2].c``)."""

    def __init__(self) -> None:
        # per open collection: [is a mapping, key or index, expecting a key]
        self.frames: list[list[Any]] = []

    def here(self) -> str:
        """The path of the node the next event starts."""
        path = ""
        for is_map, where, _ in self.frames:
            if is_map:
                if where is not None:
                    path = f"{path}.{where}" if path else str(where)
            else:
                path += f"[{where}]"
        return path

    def node(self, event: Any) -> None:
        """A scalar, alias or collection start: note a mapping key."""
        if self.frames and self.frames[-1][0] and self.frames[-1][2] \
                and isinstance(event, yaml.ScalarEvent):
            self.frames[-1][1] = str(event.value)[:60]

    def done(self) -> None:
        """A node ended (a scalar, an alias, a collection's end): move to the next one."""
        if not self.frames:
            return
        frame = self.frames[-1]
        if frame[0]:
            frame[2] = not frame[2]
        else:
            frame[1] += 1

    def open(self, mapping: bool) -> None:
        """A collection started."""
        self.frames.append([True, None, True] if mapping else [False, 0, False])

    def close(self) -> None:
        """The innermost collection ended."""
        self.frames.pop()
        self.done()


def _tag_problem(event: Any) -> str | None:
    """What is wrong with the explicit tag of a scalar or collection event (None: no tag,
    or one of :data:`ALLOWED_TAGS`)."""
    tag = getattr(event, "tag", None)
    implicit = getattr(event, "implicit", True)
    if not isinstance(tag, str) or implicit is True or tag in ALLOWED_TAGS \
            or (isinstance(implicit, tuple) and implicit[0]):
        return None
    shown = tag.replace("tag:yaml.org,2002:", "!!")[:40]
    return (f"the YAML tag {shown} is not supported (only plain values: text, numbers, "
            f"true/false, null, lists and mappings); write the value without it")


def _check_events(text: str) -> None:
    """Count nodes (aliases expanded) and depth on the event stream, and refuse explicit
    tags (:data:`ALLOWED_TAGS` aside) at their field path; InputError past a limit.

    Linear in the text: a collection's expanded size is the running total at its end less
    the total at its start, remembered for its anchor.
    """
    anchors: dict[str | None, int] = {}  # the stubs let an event's anchor be None
    open_: list[tuple[int, str | None]] = []  # (total before it, anchor) per open collection
    total, aliased = 0, False
    position = _Position()
    for event in yaml.parse(text, Loader=_LOADER):
        if isinstance(event, yaml.ScalarEvent | yaml.CollectionStartEvent):
            problem = _tag_problem(event)
            if problem is not None:
                position.node(event)
                where = position.here()
                if isinstance(event, yaml.ScalarEvent) and position.frames \
                        and position.frames[-1][0] and position.frames[-1][2]:
                    where = where.rpartition(".")[0]  # a tagged key: its mapping's path
                raise InputError(where, problem)
        if isinstance(event, yaml.ScalarEvent | yaml.AliasEvent):
            position.node(event)
            position.done()
        elif isinstance(event, yaml.CollectionStartEvent):
            position.node(event)
            position.open(isinstance(event, yaml.MappingStartEvent))
        elif isinstance(event, yaml.CollectionEndEvent):
            position.close()
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
                raise InputError("", too_deep())
        elif isinstance(event, yaml.CollectionEndEvent):
            before, anchor = open_.pop()
            if anchor:
                anchors[anchor] = total - before
            continue
        else:
            continue
        if total > MAX_NODES:
            mark = event.start_mark
            raise InputError("", too_many_nodes(f"more than {MAX_NODES:,}",
                                                mark.line + 1 if mark else None, aliased))


def dump_yaml(*documents: Any) -> str:
    """YAML text of ``documents`` (plain data) in :data:`YAML_STYLE`: one document as it
    is, several separated by ``---``. Emitted by libyaml's C emitter where PyYAML has it
    (the same text as the pure-Python one, about ten times faster: a results file of
    80,000 rows spent 36 of its 46 s in the pure-Python emitter)."""
    text: str = yaml.dump_all(documents, Dumper=_SAFE_DUMPER, **YAML_STYLE)  # returns the text
    return text


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
        raise InputError("", too_deep(), source=source) from None
    except ValueError as exc:  # a 5,000-digit integer
        raise InputError("", f"cannot read a value: {exc}".split(";")[0], source=source) from None
    finally:
        if loader is not None:
            loader.dispose()
    check_data(data, source, count_nodes=False)
    return data


def _yaml_problem(exc: yaml.YAMLError) -> str:
    if "maximum nesting depth" in str(exc):  # libyaml's own limit, met while scanning ahead
        return too_deep()
    mark = getattr(exc, "problem_mark", None)
    where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
    problem = getattr(exc, "problem", None) or getattr(exc, "reason", None) \
        or str(exc).splitlines()[0]
    if isinstance(exc, yaml.reader.ReaderError):
        problem = f"unacceptable character #x{exc.character:04x} at position {exc.position}"
    elif "unacceptable character" in str(problem) or "control characters" in str(problem):
        problem = f"unacceptable character ({problem})"
    return f"not valid YAML/JSON{where}: {problem}"

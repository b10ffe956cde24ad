"""The measurement-set file (``schema: supernode-measurements/1``): saved sets, file units.

``supernode import results`` writes it; every command that reads results reads it back.
Times in microseconds (``*_us``), bandwidths in GB/s (``*_gbyte_per_s``, 1e9 bytes/s) or
Gb/s (``*_gbit_per_s``, perftest), message sizes in bytes; converted to SI on load.

The file's schema is not declared here: :func:`file_model` derives it from the records of
:mod:`supernode.measurements.model`, each field under its saved name with its file type,
bounds, default and description (:class:`~supernode.measurements.model.Saved`), and both
conversions (:func:`set_document`, :func:`sets_from_document`) walk the same
declarations, so a record and its saved form cannot drift apart.
"""

from __future__ import annotations

import dataclasses
import functools
import operator
from collections.abc import Callable, Mapping
from types import GenericAlias, MappingProxyType, NoneType, UnionType
from typing import Any, Literal, NamedTuple, Union, get_args, get_origin, get_type_hints

from pydantic import Field, create_model

from supernode.measurements.model import RECORD_DEFAULT, SAVED, MeasurementSet, Saved
from supernode.spec.base import StrictModel
from supernode.spec.documents import dump_yaml
from supernode.spec.loader import parse_text, validate_document

SCHEMA = "supernode-measurements/1"
_PLAIN = Saved()


class _MeasuredDoc(StrictModel):
    """Base of the file models of measured records: only the upper unit limit applies."""

    measured_figures = True


def _kept(record: type) -> list[tuple[dataclasses.Field, Saved, Any]]:
    """The fields of ``record`` the file keeps: (field, how it is saved, its type)."""
    hints = _hints(record)
    return [(f, how, hints[f.name]) for f in dataclasses.fields(record)
            if (how := f.metadata.get(SAVED, _PLAIN)).kept]


@functools.cache
def _hints(record: type) -> dict[str, Any]:
    return get_type_hints(record)


def _key(f: dataclasses.Field, how: Saved) -> str:
    return how.name or f.name


class _Way(NamedTuple):
    """One direction of the conversion: how records, sequences and mappings are built."""

    record: Callable[[type, Any], Any]
    sequence: Callable[[Any], Any]
    mapping: Callable[[Any], Any]


def _walk(value: Any, hint: Any, leaf: Callable[[Any], Any], way: _Way) -> Any:
    """``value`` (of type ``hint``) converted: None kept, records by ``way.record``,
    sequences item by item, mappings by ``way.mapping``, everything else by ``leaf``."""
    if value is None:
        return None
    if get_origin(hint) in (Union, UnionType):
        (hint,) = (a for a in get_args(hint) if a is not NoneType)  # X | None
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return way.record(hint, value)
    origin = get_origin(hint)
    if origin is tuple:
        item = get_args(hint)[0]
        return way.sequence(_walk(v, item, leaf, way) for v in value)
    if origin is Mapping:
        return way.mapping(value)
    return leaf(value)


def _scale(how: Saved, unit: Any) -> float | None:
    """SI units per file unit of a field (by the record's ``how.by`` field's value)."""
    if isinstance(how.scale, Mapping):
        return how.scale[unit]
    return how.scale


def _dump_leaf(how: Saved, unit: Any) -> Callable[[Any], Any]:
    if how.values is not None:
        return how.values.__getitem__
    scale = _scale(how, unit)
    return (lambda v: v) if scale is None else (lambda v: v / scale)


def _load_leaf(how: Saved, unit: Any) -> Callable[[Any], Any]:
    if how.values is not None:
        return {v: k for k, v in how.values.items()}.__getitem__
    scale = _scale(how, unit)
    return (lambda v: v) if scale is None else (lambda v: v * scale)


def _dump_record(record: type, obj: Any) -> dict[str, Any]:
    """``obj`` as plain data in file units, keys in field order."""
    out: dict[str, Any] = {}
    for f, how, hint in _kept(record):
        value = getattr(obj, f.name)
        if value is None and how.omit_none:
            continue
        unit = getattr(obj, how.by) if how.by else None
        out[_key(f, how)] = _walk(value, hint, _dump_leaf(how, unit), _DUMP)
    return out


def _load_record(record: type, doc: Any) -> Any:
    """The record of ``doc`` (its file model's instance), in SI units."""
    values: dict[str, Any] = {}
    kept = _kept(record)
    for f, how, hint in sorted(kept, key=lambda k: k[1].by is not None):  # units first
        unit = values[how.by] if how.by else None
        values[f.name] = _walk(getattr(doc, _key(f, how)), hint, _load_leaf(how, unit), _LOAD)
    return record(**values)


_DUMP = _Way(_dump_record, list,
             lambda m: {k: list(v) if isinstance(v, tuple) else v for k, v in dict(m).items()})
_LOAD = _Way(_load_record, tuple, lambda m: MappingProxyType(dict(m)))


def _file_type(hint: Any, how: Saved) -> Any:
    """The file's type of a field: records by their file models, tuples as lists,
    mappings as dicts, a field with ``values`` as the Literal of its file values."""
    if how.values is not None:
        return Literal[tuple(how.values.values())]
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return file_model(hint)
    origin, args = get_origin(hint), get_args(hint)
    if origin in (Union, UnionType):
        return functools.reduce(operator.or_, (_file_type(a, _PLAIN) for a in args))
    if origin is tuple:
        return GenericAlias(list, (_file_type(args[0], _PLAIN),))  # list[...], built
    if origin is Mapping:
        return GenericAlias(dict, args)
    return hint


def _file_field(record: type, f: dataclasses.Field, how: Saved, hint: Any) -> Any:
    """The file field: the record's default in file form (none: required), bounds and
    description."""
    extra: dict[str, Any] = {}
    unit = {g.name: g.default for g in dataclasses.fields(record)}[how.by] if how.by else None
    leaf = _dump_leaf(how, unit)
    if how.ge is not None:
        extra["ge"] = how.ge
    if how.file_default is not RECORD_DEFAULT:
        extra["default"] = how.file_default
    elif f.default is not dataclasses.MISSING:
        extra["default"] = _walk(f.default, hint, leaf, _DUMP)
    elif f.default_factory is not dataclasses.MISSING:
        factory = f.default_factory
        extra["default_factory"] = lambda: _walk(factory(), hint, leaf, _DUMP)
        extra["validate_default"] = True
    return Field(description=how.doc, **extra)


@functools.cache
def file_model(record: type) -> type[StrictModel]:
    """The set file's pydantic model of ``record`` (a model of
    :mod:`supernode.measurements.model`): its kept fields under their saved names."""
    fields: dict[str, Any] = {_key(f, how): (_file_type(hint, how),
                                             _file_field(record, f, how, hint))
                              for f, how, hint in _kept(record)}
    base = _MeasuredDoc if getattr(record, "measured_figures", False) else StrictModel
    return create_model(f"{record.__name__}Doc", __base__=base, __doc__=record.__doc__,
                        __module__=__name__, **fields)


SetDoc = file_model(MeasurementSet)


class MeasurementFile(StrictModel):
    """The whole file."""

    schema_: Literal["supernode-measurements/1"] = Field(alias="schema")
    # SetDoc is a model built at import (create_model), not a type the checker can see
    sets: list[SetDoc] = Field(min_length=1, max_length=10_000)  # type: ignore[valid-type]


def set_document(s: MeasurementSet) -> dict[str, Any]:
    """One set as plain data in file units (one entry of ``sets``)."""
    return _dump_record(MeasurementSet, s)


def measurement_document(sets: list[MeasurementSet]) -> dict[str, Any]:
    """The whole file as plain data."""
    return {"schema": SCHEMA, "sets": [set_document(s) for s in sets]}


def render_yaml(sets: list[MeasurementSet]) -> str:
    """The file as YAML text."""
    header = "# Measurement sets written by `supernode import results` (docs/measurements.md).\n"
    return header + dump_yaml(measurement_document(sets))


def sets_from_document(text: str, source: str) -> list[MeasurementSet]:
    """Measurement sets of a ``supernode-measurements/1`` document (YAML or JSON text)."""
    doc = validate_document(parse_text(text, source=source), MeasurementFile, source=source)
    return [_load_record(MeasurementSet, d) for d in doc.sets]

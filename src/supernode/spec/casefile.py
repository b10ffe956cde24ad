"""The validation case file (``supernode-validation/1``): reading it, and what a source is.

A case file is ``{"schema": "supernode-validation/1", "cases": [...]}``; each case is a
mapping with a ``kind`` and the inputs of its kind (the format is documented in
``docs/validation.md``). Every reader of such a file (``supernode validate``, the
step-model and collective calibrations, their leave-one-source-out checks) goes through
:func:`read_cases`, which reads through the strict document loader (size limit, YAML or
JSON by suffix, errors with the field path).

A case's *source* (:func:`case_source`) is the publication it comes from: the
repository and file, or paper, that its ``source`` citation names, without the commit,
section, table or parenthesis that follow. Leave-one-source-out checks hold out one
source at a time, so that no page the models were fitted on judges them.
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

from supernode.errors import InputError
from supernode.spec.loader import read_document

SCHEMA = "supernode-validation/1"
#: Marks that end the publication part of a ``source`` citation: a commit (`` @sha``), a
#: parenthesis, a list of sections (``,``), a quoted heading.
_SOURCE_ENDS = (" @", " (", ",", " '")


def public_cases_path() -> Path:
    """The packaged public case file: the training set of every calibration."""
    return Path(str(resources.files("supernode") / "data" / "validation" / "public.json"))


def read_cases(path: str | Path | None = None, kind: str | None = None) -> list[dict[str, Any]]:
    """The cases of a validation file (default: the packaged public set), optionally only
    those of ``kind``. Raises :class:`InputError` naming the field when the file is not a
    mapping with a list ``cases`` of mappings that each have a ``kind``, or when its
    ``schema`` is not :data:`SCHEMA`."""
    where = public_cases_path() if path is None else path
    doc = read_document(where)
    if not isinstance(doc, dict) or not isinstance(doc.get("cases"), list):
        raise InputError("cases", "a validation file is a mapping with a list `cases`",
                         source=str(where))
    if doc.get("schema") not in (None, SCHEMA):
        raise InputError("schema", f"expected {SCHEMA!r}, got {doc.get('schema')!r}",
                         source=str(where))
    for index, case in enumerate(doc["cases"]):
        if not isinstance(case, dict) or "kind" not in case:
            raise InputError(f"cases[{index}]", "each case is a mapping with a `kind`",
                             source=str(where))
    cases: list[dict[str, Any]] = doc["cases"]
    return cases if kind is None else [c for c in cases if c.get("kind") == kind]


def source_of(citation: str) -> str:
    """The publication a ``source`` citation names: the text up to its commit, section,
    table or parenthesis (``"NVIDIA/Megatron-LM README.md, section 'X'"`` ->
    ``"NVIDIA/Megatron-LM README.md"``)."""
    text = str(citation or "")
    for mark in _SOURCE_ENDS:
        text = text.split(mark)[0]
    return text.strip()


def case_source(case: Mapping[str, Any]) -> str:
    """The publication of one case (:func:`source_of` of its ``source``; its ``id`` when it
    cites none)."""
    return source_of(str(case.get("source") or "")) or str(case.get("id") or "?")

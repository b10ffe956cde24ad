"""The report's sections: a registry of builders, in report order.

A builder takes the results dict (``results.json``) and returns a
:class:`~supernode.report.blocks.Section`, or None when the section has nothing to show.
Later issues add a section (reliability and monitoring are in
:mod:`~supernode.report.sections_reliability`, scheduling and artefacts in
:mod:`~supernode.report.sections_scheduling`) by putting their
result's ``to_dict()`` under a results key and calling :func:`register_section` with a
builder that reads it; see docs/design.md. This module only holds the registry: the
built-in sections' modules are listed, imported and built in
:mod:`~supernode.report.all_sections`, so none of them is imported from here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from supernode.report.blocks import Section

Builder = Callable[[dict[str, Any]], Section | None]


@dataclass(frozen=True)
class SectionBuilder:
    """A registered section: anchor id, title (for the table of contents), builder."""

    id: str
    title: str
    build: Builder


#: Every section in report order.
SECTIONS: list[SectionBuilder] = []


def register_section(id: str, title: str, build: Builder, after: str | None = None,
                     before: str | None = None) -> None:
    """Add a section (after section ``after``, or before section ``before``, else at the
    end); duplicate ids are refused."""
    if any(s.id == id for s in SECTIONS):
        raise ValueError(f"report section {id!r} is registered twice")
    entry = SectionBuilder(id, title, build)
    anchor = after if after is not None else before
    if anchor is None:
        SECTIONS.append(entry)
        return
    index = next((i for i, s in enumerate(SECTIONS) if s.id == anchor), None)
    if index is None:
        raise ValueError(f"no report section {anchor!r} to insert beside")
    SECTIONS.insert(index + 1 if after is not None else index, entry)

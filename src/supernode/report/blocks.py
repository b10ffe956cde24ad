"""The pieces a section is made of, each value named by its key path in the results.

A key path is a tuple of dict keys and list indices into the results dict
(``("facility", "power", "cluster_at_tdp_w")``). :class:`Num` and :class:`Txt` hold a key
and are resolved against the results when rendered, never computed here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

Key = tuple[str | int, ...]


def lookup(results: dict[str, Any], key: Key) -> Any:
    """The value at ``key`` in ``results`` (KeyError/IndexError when absent)."""
    node: Any = results
    for part in key:
        node = node[part]
    return node


def key_text(key: Key) -> str:
    """A key path as written in ``data-key``: parts joined by ``/`` (list indices too)."""
    return "/".join(str(p).replace("/", "%2F") for p in key)


@dataclass(frozen=True)
class Num:
    """A number from the results, shown as ``kind`` (see :mod:`supernode.report.format`)."""

    key: Key
    kind: str


@dataclass(frozen=True)
class Txt:
    """A string from the results, shown verbatim."""

    key: Key


@dataclass(frozen=True)
class Label:
    """Fixed wording of the report (no figures in it)."""

    text: str


@dataclass(frozen=True)
class Link:
    """A string from the results shown as :class:`Txt`, linked to the relative page
    ``<value><suffix>`` (a design's folder -> its ``report.html``)."""

    key: Key
    suffix: str


Cell = Num | Txt | Label | Link
#: A table cell: one cell, or a run of cells shown together (``1 to 2``).
TableCell = Cell | tuple[Cell, ...]


@dataclass(frozen=True)
class Paragraph:
    """A line of cells run together."""

    cells: tuple[Cell, ...]


@dataclass(frozen=True)
class Table:
    """A table: a title, column labels and rows of cells."""

    title: str
    columns: tuple[str, ...]
    rows: tuple[tuple[TableCell, ...], ...]
    classes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Figure:
    """An inline SVG figure with a caption (the SVG text is drawn from the results)."""

    name: str
    svg: str
    caption: str


@dataclass(frozen=True)
class Heading:
    """A sub-heading made of cells (e.g. a decision's id and title)."""

    cells: tuple[Cell, ...]


@dataclass(frozen=True)
class Details:
    """A collapsible block: a summary label and paragraphs."""

    summary: str
    paragraphs: tuple[Paragraph, ...]


Block = Paragraph | Heading | Table | Figure | Details


@dataclass
class Section:
    """One section of the report: an id (anchor), a title and its blocks."""

    id: str
    title: str
    blocks: list[Block] = field(default_factory=list)

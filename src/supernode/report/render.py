"""Cells to text: HTML (each number marked with its key) and Markdown."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

from markupsafe import escape

from supernode.report.blocks import Label, Link, Num, Txt, key_text, lookup
from supernode.report.format import format_value
from supernode.textsafe import markdown_safe

#: Keys whose value also becomes a CSS class (``v-fail``, ``v-error``) for colour, and
#: lists whose every entry does (a rule's ``statuses`` per design in compare.json).
MARKED = ("status", "severity", "verdict")
MARKED_LISTS = ("statuses",)


def cell_html(cell: Any, results: dict[str, Any]) -> str:
    """One cell (or a run of cells) as HTML; values carry ``data-key`` for checking."""
    if isinstance(cell, tuple):
        return "".join(cell_html(c, results) for c in cell)
    if isinstance(cell, Label):
        return str(escape(cell.text))
    if isinstance(cell, Link):
        href = quote(f"{lookup(results, cell.key)}{cell.suffix}")
        return f'<a href="{escape(href)}">{cell_html(Txt(cell.key), results)}</a>'
    value = lookup(results, cell.key)
    if isinstance(cell, Num):
        raw = json.dumps(value, allow_nan=False)
        return (f'<span class="num" data-key="{escape(key_text(cell.key))}" '
                f'data-kind="{cell.kind}" data-value="{escape(raw)}">'
                f"{escape(format_value(value, cell.kind))}</span>")
    if isinstance(cell, Txt):
        text = "-" if value is None else str(value)
        marked = cell.key[-1] in MARKED or (len(cell.key) > 1 and isinstance(cell.key[-1], int)
                                            and cell.key[-2] in MARKED_LISTS)
        mark = f" v-{text}" if marked and text.isidentifier() else ""
        return (f'<span class="txt{mark}" data-key="{escape(key_text(cell.key))}">'
                f"{escape(text)}</span>")
    raise TypeError(f"not a cell: {cell!r}")


def cell_text(cell: Any, results: dict[str, Any],
              value_text: Callable[[Any], str] = markdown_safe,
              label: Callable[[str], str] = str) -> str:
    """One cell (or a run) as plain text: numbers as the report formats their kind, values
    from the results through ``value_text`` (default: safe for Markdown), labels through
    ``label`` (default: as written; a terminal escapes them for rich too)."""
    if isinstance(cell, tuple):
        return "".join(cell_text(c, results, value_text, label) for c in cell)
    if isinstance(cell, Label):
        return label(cell.text)
    if isinstance(cell, Link):
        return cell_text(Txt(cell.key), results, value_text, label)
    value = lookup(results, cell.key)
    if isinstance(cell, Num):
        return format_value(value, cell.kind)
    if isinstance(cell, Txt):  # a value from the results: may be a user string
        return "-" if value is None else value_text(value)
    raise TypeError(f"not a cell: {cell!r}")


def md_escape(text: str) -> str:
    """Text safe inside a Markdown table cell (a pipe :func:`markdown_safe` escaped already
    is kept)."""
    return re.sub(r"(?<!\\)\|", r"\\|", text).replace("\n", " ")

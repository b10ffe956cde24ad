"""The compare page as GitHub-flavoured Markdown (``compare.md``): the same sections as the
HTML compare page (:mod:`supernode.report.compare_html`: designs, every headline figure
with its winner, every rule's status, the bill-of-materials diff), each table rendered by
the design report's Markdown renderer, every value read from ``compare.json`` at its key."""

from __future__ import annotations

from typing import Any

from supernode.report.compare_html import compare_sections
from supernode.report.markdown import block_md
from supernode.textsafe import markdown_safe


def render_compare_markdown(c: dict[str, Any]) -> str:
    """``compare.md`` text of ``compare.json`` ``c``."""
    names = " vs ".join(markdown_safe(d["cluster"]) for d in c["designs"])
    lines = [f"# Design comparison: {names}", "",
             "Each design's full review is in its folder (" +
             ", ".join(f"`{markdown_safe(d['label'])}/report.md`" for d in c["designs"]) +
             "); the figures below are read from its results.json, never recomputed.", ""]
    for s in compare_sections(c):
        lines += [f"## {s.title}", ""]
        for b in s.blocks:
            lines += block_md(b, c)
    return "\n".join(lines).rstrip() + "\n"

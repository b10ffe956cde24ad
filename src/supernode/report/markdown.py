"""The Markdown report (report.md): the same sections, figures as files beside it."""

from __future__ import annotations

from typing import Any

from supernode.report.blocks import Details, Figure, Heading, Paragraph, Section, Table
from supernode.report.render import cell_text, md_escape
from supernode.textsafe import markdown_safe


def block_md(block: Any, results: dict[str, Any]) -> list[str]:
    """One block as Markdown lines."""
    if isinstance(block, Paragraph):
        return ["".join(cell_text(c, results) for c in block.cells), ""]
    if isinstance(block, Heading):
        return ["### " + "".join(cell_text(c, results) for c in block.cells), ""]
    if isinstance(block, Table):
        lines = [f"**{block.title}**", "",
                 "| " + " | ".join(c or " " for c in block.columns) + " |",
                 "|" + "---|" * len(block.columns)]
        lines += ["| " + " | ".join(md_escape(cell_text(c, results)) for c in row) + " |"
                  for row in block.rows]
        return lines + [""]
    if isinstance(block, Figure):
        return [f"![{block.caption}](figures/{block.name}.svg)", ""]
    if isinstance(block, Details):
        out = [f"<details><summary>{block.summary}</summary>", ""]
        for p in block.paragraphs:
            out += block_md(p, results)
        return out + ["</details>", ""]
    raise TypeError(f"not a block: {block!r}")


def render_markdown(sections: list[Section], results: dict[str, Any]) -> str:
    """The whole report as Markdown."""
    lines = [f"# Design review: {markdown_safe(results['cluster']['name'])} × "
             f"{markdown_safe(results['workload']['name'])}", ""]
    for s in sections:
        lines += [f"## {s.title}", ""]
        for b in s.blocks:
            lines += block_md(b, results)
    return "\n".join(lines).rstrip() + "\n"


def figures_of(sections: list[Section]) -> dict[str, str]:
    """SVG text of every figure by name (written to figures/ beside report.md)."""
    return {b.name: b.svg for s in sections for b in s.blocks if isinstance(b, Figure)}

"""The compare report: one self-contained HTML page of ``compare.json``
(:mod:`supernode.design.compare`), built from the same blocks, cells and page template as
the design report, every value keyed to its place in ``compare.json``."""

from __future__ import annotations

from typing import Any

from markupsafe import Markup

from supernode.report.blocks import Label, Link, Paragraph, Section, Table, TableCell
from supernode.report.html import CSS, PAGE, block_html
from supernode.report.render import cell_html
from supernode.report.sections_core import L, N, T


def _labels(c: dict[str, Any]) -> tuple[str, ...]:
    return tuple(d["label"] for d in c["designs"])


def designs_section(c: dict[str, Any]) -> Section:
    """Which design is which: label and folder, cluster, workload, size."""
    rows = tuple((Link(("designs", i, "folder"), "/report.html"), T("designs", i, "input"),
                  T("designs", i, "cluster"), T("designs", i, "workload"),
                  (N("designs", i, "accelerators", kind="count"), L(" x "),
                   T("designs", i, "accelerator")), T("designs", i, "step_time_source"))
                 for i in range(len(c["designs"])))
    s = Section("designs", "Designs")
    s.blocks.append(Table("Designs compared (each reviewed in full in its folder)",
                          ("folder", "cluster input", "cluster", "workload", "accelerators",
                           "step time from"), rows))
    return s


def _winners(i: int, c: dict[str, Any]) -> tuple:
    won = c["figures"][i]["winners"]
    if not won:
        return (Label("tie"),)
    cells: list = []
    for j in range(len(won)):
        cells += [L(", ")] if j else []
        cells.append(T("figures", i, "winners", j))
    return tuple(cells)


def figures_section(c: dict[str, Any]) -> Section:
    """Every headline figure per design, the direction that wins and the winner."""
    rows = []
    for i, f in enumerate(c["figures"]):
        cells = [N("figures", i, "values", j, kind=f["kind"]) if f["kind"] != "text"
                 else T("figures", i, "values", j) for j in range(len(c["designs"]))]
        rows.append((T("figures", i, "label"), T("figures", i, "direction"), *cells,
                     _winners(i, c)))
    s = Section("figures", "Headline figures")
    s.blocks.append(Table("Headline figures (winner: the direction stated)",
                          ("figure", "wins", *_labels(c), "winner"), tuple(rows),
                          ("figures",)))
    return s


def rules_section(c: dict[str, Any]) -> Section:
    """Every rule's status per design."""
    rows = tuple((T("rules", i, "id"), T("rules", i, "severity"),
                  *(T("rules", i, "statuses", j) for j in range(len(c["designs"]))))
                 for i in range(len(c["rules"])))
    s = Section("rules", "Rules")
    s.blocks.append(Table("Rule status per design", ("rule", "severity", *_labels(c)), rows,
                          ("rules",)))
    return s


def bom_section(c: dict[str, Any]) -> Section:
    """The BOM diff: each component's count per design and its delta from the first."""
    n = len(c["designs"])
    rows: list[tuple[TableCell, ...]] = []
    for i in range(len(c["bom"])):
        counts: list[TableCell] = [N("bom", i, "counts", j, kind="count") for j in range(n)]
        deltas: list[TableCell] = [N("bom", i, "deltas", j, kind="number")
                                   for j in range(1, n)]
        rows.append((T("bom", i, "component"), T("bom", i, "parts", 0), *counts, *deltas))
    first = _labels(c)[0]
    s = Section("bom", "Bill of materials diff")
    s.blocks.append(Table("Component counts per design", (
        "component", f"part ({first})", *_labels(c),
        *(f"{lab} - {first}" for lab in _labels(c)[1:])), tuple(rows), ("bom",)))
    s.blocks.append(Paragraph((L("Each design's full bill of materials is its folder's "
                                 "bom.csv (cables by type and length class, storage "
                                 "appliances and their network ports)."),)))
    return s


def compare_sections(c: dict[str, Any]) -> list[Section]:
    """The compare page's sections (the HTML and the Markdown page render the same)."""
    return [designs_section(c), figures_section(c), rules_section(c), bom_section(c)]


def render_compare_html(c: dict[str, Any]) -> str:
    """The compare page of ``compare.json`` ``c``."""
    title = "Design comparison: " + " vs ".join(d["cluster"] for d in c["designs"])
    subtitle = Markup("".join(
        (", " if i else "") + cell_html((T("designs", i, "label"), L(": "),
                                         T("designs", i, "cluster")), c)
        for i in range(len(c["designs"]))))
    sections = compare_sections(c)
    views = [{"id": s.id, "title": s.title, "html": [block_html(b, c) for b in s.blocks]}
             for s in sections]
    return PAGE.render(title=title, subtitle=subtitle, css=Markup(CSS), sections=views)

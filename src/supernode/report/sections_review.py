"""Sections: findings by rule; decisions."""

from __future__ import annotations

from typing import Any

from supernode.report import sections_run  # noqa: F401  (registered before these)
from supernode.report.blocks import Details, Heading, Paragraph, Section, Table, TableCell
from supernode.report.format import UNIT_KINDS
from supernode.report.sections import register_section
from supernode.report.sections_core import L, N, T

#: A decision figure's unit -> value kind.
FIGURE_KINDS = {"s": "s", "share": "share", "fraction": "fraction", "bytes": "bytes",
                "usd": "usd", "count": "count", "bool": "bool", "w": "w",
                "l_per_min": "l_per_min", "bytes_per_s": "bytes_per_s"}


def findings_section(r: dict[str, Any]) -> Section:
    """Every rule: seed, severity, status, measured vs threshold, detail, fix."""
    s = Section("findings", "Findings by rule")
    rows: list[tuple[TableCell, ...]] = []
    for i, f in enumerate(r["findings"]):
        kind = UNIT_KINDS.get(f["unit"], "float")
        thr = f["threshold"]
        threshold = (L("-") if thr is None else
                     (N("findings", i, "threshold", 0, kind=kind), L(" to "),
                      N("findings", i, "threshold", 1, kind=kind)) if isinstance(thr, list)
                     else N("findings", i, "threshold", kind=kind))
        rows.append((T("findings", i, "id"), T("findings", i, "seed"),
                     T("findings", i, "severity"), T("findings", i, "status"),
                     N("findings", i, "measured", kind=kind), T("findings", i, "comparison"),
                     threshold, T("findings", i, "unit"),
                     T("findings", i, "detail")))
    s.blocks.append(Table("Rules", ("rule", "seed", "severity", "status", "measured", "",
                                    "threshold", "unit", "detail"), tuple(rows),
                          ("findings",)))
    for i, f in enumerate(r["findings"]):
        paras = [Paragraph((T("findings", i, "title"),)),
                 Paragraph((T("findings", i, "rationale"),))]
        if f["fix"]:
            paras.append(Paragraph((L("Fix: "), T("findings", i, "fix"))))
        if f["predicted_effect"]:
            paras.append(Paragraph((L("Predicted: "), T("findings", i, "predicted_effect"))))
        s.blocks.append(Details(f["id"], tuple(paras)))
    return s


def decisions_section(r: dict[str, Any]) -> Section:
    """The decision log: context, options with their figures, decision, consequences."""
    s = Section("decisions", "Decisions")
    for i, d in enumerate(r["decisions"]):
        s.blocks.append(Heading((T("decisions", i, "id"), L(" "), T("decisions", i, "title"))))
        s.blocks.append(Paragraph((L("Context: "), T("decisions", i, "context"))))
        rows = []
        for j, o in enumerate(d["options"]):
            figures: list = []
            for k, fig in enumerate(o["figures"]):
                figures += [T("decisions", i, "options", j, "figures", k, "label"), L(" "),
                            N("decisions", i, "options", j, "figures", k, "value",
                              kind=FIGURE_KINDS.get(fig["unit"], UNIT_KINDS.get(fig["unit"],
                                                                                 "float"))),
                            L("; ")]
            if o.get("note"):
                figures += [T("decisions", i, "options", j, "note")]
            rows.append((T("decisions", i, "options", j, "name"),
                         N("decisions", i, "options", j, "chosen", kind="bool"),
                         *_joined(figures)))
        s.blocks.append(Table("Options considered", ("option", "chosen", "figures"),
                              tuple(rows), ("decision",)))
        s.blocks.append(Paragraph((L("Decision: "), T("decisions", i, "decision"))))
        s.blocks += [Paragraph((L("Consequence: "), T("decisions", i, "consequences", k)))
                     for k in range(len(d["consequences"]))]
    return s


def _joined(cells: list) -> tuple:
    """Cells of one table cell (a run), as a one-element tuple of a tuple."""
    return (tuple(cells),)


register_section("findings", "Findings by rule", findings_section)
register_section("decisions", "Decisions", decisions_section)

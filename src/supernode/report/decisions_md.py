"""decisions.md: the decision log in the MADR style (Markdown Architectural Decision
Records: context and problem, considered options, decision outcome, consequences)."""

from __future__ import annotations

from typing import Any

from supernode.report.format import format_value
from supernode.report.sections_review import FIGURE_KINDS
from supernode.textsafe import markdown_safe as md


def _figures(option: dict[str, Any]) -> str:
    parts = [f"{f['label']} {format_value(f['value'], FIGURE_KINDS.get(f['unit'], 'float'))}"
             for f in option["figures"]]
    if option.get("note"):
        parts.append(option["note"])
    return md("; ".join(parts))


def render_decisions(results: dict[str, Any]) -> str:
    """Every decision record of ``results['decisions']`` as MADR Markdown (every text
    from the results escaped: names are user strings)."""
    lines = [f"# Decision log: {md(results['cluster']['name'])} × "
             f"{md(results['workload']['name'])}",
             "", "Pre-filled by `supernode design` from what the planner, the simulator and "
             "the design rules found. Review each record, then set its status to accepted, "
             "rejected or superseded.", ""]
    for d in results["decisions"]:
        chosen = [md(o["name"]) for o in d["options"] if o["chosen"]] or [md(d["decision"])]
        picked = ("Chosen option: " if len(chosen) == 1 else "Chosen options: ") + \
            " and ".join(f'"{name}"' for name in chosen)
        lines += [f"## {md(d['id'])} {md(d['title'])}", "", f"* Status: {md(d['status'])}",
                  "* Deciders: (fill in)", "", "### Context and problem statement", "",
                  md(d["context"]), "", "### Considered options", ""]
        lines += [f"* {md(o['name'])}" + (f" — {_figures(o)}" if _figures(o) else "")
                  for o in d["options"]]
        lines += ["", "### Decision outcome", "", f"{picked}. "
                  f"Proposed decision: {md(d['decision'])}.", "", "### Consequences", ""]
        lines += [f"* {md(c)}" for c in d["consequences"]] + [""]
    return "\n".join(lines).rstrip() + "\n"

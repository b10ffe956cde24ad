"""Write the report set into a folder, all or nothing (``supernode.outputs.output_folder``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from supernode.outputs import output_folder
from supernode.report.decisions_md import render_decisions
from supernode.report.html import render_html
from supernode.report.markdown import figures_of, render_markdown
from supernode.report.sections import build_sections

#: Files of a report folder (and figures/NAME.svg for report.md).
REPORT_FILES = ("report.html", "report.md", "results.json", "decisions.md")


def results_json(results: dict[str, Any]) -> str:
    """``results.json`` text (strict JSON: no NaN or infinity)."""
    return json.dumps(results, indent=1, allow_nan=False) + "\n"


def write_report(results: dict[str, Any], directory: str | Path, option: str = "--out"
                 ) -> list[Path]:
    """Render and write every report file into ``directory``; the files written (final paths).

    Nothing is left in ``directory`` if rendering or writing fails (an OSError is an
    InputError at ``option``).
    """
    sections = build_sections(results)
    html = render_html(sections, results)
    markdown = render_markdown(sections, results)
    decisions = render_decisions(results)
    text = results_json(results)
    figures = figures_of(sections)
    target = Path(directory)
    with output_folder(directory, option) as staging:
        (staging / "report.html").write_text(html, encoding="utf-8")
        (staging / "report.md").write_text(markdown, encoding="utf-8")
        (staging / "results.json").write_text(text, encoding="utf-8")
        (staging / "decisions.md").write_text(decisions, encoding="utf-8")
        (staging / "figures").mkdir()
        for name, svg in figures.items():
            (staging / "figures" / f"{name}.svg").write_text(svg, encoding="utf-8")
    names = list(REPORT_FILES) + [f"figures/{n}.svg" for n in figures]
    return [target / n for n in names]

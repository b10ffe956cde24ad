"""Section: the CLI command beside each stage's figures that gives them again
(``results.json`` -> ``reproduce``, :mod:`supernode.design.reproduce`); left out when the
results have none (an older run)."""

from __future__ import annotations

from typing import Any

from supernode.report import sections_scheduling  # noqa: F401  (registered before this)
from supernode.report.blocks import Cell, Paragraph, Section, Table
from supernode.report.sections import register_section
from supernode.report.sections_core import L, T

R = "reproduce"


def reproduce_section(r: dict[str, Any]) -> Section | None:
    """Per stage: the report section, the command and the results keys it reproduces."""
    rep = r.get(R)
    if not rep:
        return None
    s = Section(R, "Reproduce these figures")
    intro: list[Cell] = [L("Run from "), T(R, "run_from"),
                         L(": each command gives the figures of its section again (same "
                           "inputs, same seed)")]
    if rep["plan_file"] is not None:
        intro += [L("; the reviewed plan, every knob resolved, is "), T(R, "plan_file")]
    s.blocks.append(Paragraph((*intro, L("."))))
    rows = []
    for i, entry in enumerate(rep["commands"]):
        figures = tuple(cell for j in range(len(entry["figures"]))
                        for cell in ((L(", ") if j else L("")),
                                     T(R, "commands", i, "figures", j, "results")))
        rows.append((T(R, "commands", i, "section"), T(R, "commands", i, "command"), figures))
    s.blocks.append(Table("Commands", ("section", "command", "reproduces"), tuple(rows),
                          ("reproduce",)))
    if rep["stages_without_command"]:  # none since every stage has a command (older runs)
        s.blocks.append(Paragraph((L("Computed only by design and check (no command of "
                                     "their own): "),
                                   *(cell for j in range(len(rep["stages_without_command"]))
                                     for cell in ((L(", ") if j else L("")),
                                                  T(R, "stages_without_command", j))),
                                   L("."))))
    else:
        s.blocks.append(Paragraph((L("Every stage's figures have a command here; check "
                                     "fails (a non-zero exit) when an error-severity rule "
                                     "does, as the verdict says."),)))
    return s


register_section(R, "Reproduce", reproduce_section, after="artefacts")

"""``results.json`` -> ``reproduce``: the commands that give the review's figures again
(:mod:`supernode.design.reproduce`)."""

from __future__ import annotations

from typing import Any

from supernode.design.results.base import ResultModel, field


class ReproducedFigure(ResultModel):
    """One figure a command reproduces."""

    results: str = field("Key path in results.json, parts joined by /.")
    command_json: str | None = field("Key path in the command's --json output (empty: the "
                                     "whole output; null: the command's files are compared "
                                     "instead).")


class ReproduceCommand(ResultModel):
    """A command and the figures it reproduces."""

    stage: str = field("The review stage (topology, plan, serving, simulate, facility, "
                       "memory, reliability, scheduling, artefacts, rules).")
    section: str = field("The report section whose figures it reproduces (its anchor id).")
    command: str = field("The command line, shell-quoted, run from the report folder.")
    figures: list[ReproducedFigure] = field("What it reproduces.")


class Reproduce(ResultModel):
    """How to reproduce the review's figures from the CLI."""

    plan_file: str | None = field("The reviewed plan written beside the report; null when "
                                  "no plan fits.")
    plan_document: dict[str, Any] | None = field("The reviewed plan's fields (what the plan "
                                                 "file holds).")
    run_from: str = field("Where to run the commands.")
    commands: list[ReproduceCommand] = field("Per stage, the command.")
    stages_without_command: list[str] = field("Stages whose figures only design/check "
                                              "compute (none since every stage with figures "
                                              "has a command).")

"""The typed contract of ``compare.json`` (:mod:`supernode.design.compare`): closed
objects, finite numbers, one value per design in every per-design list."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import model_validator

from supernode.design.results.base import ResultModel, field


class ComparedDesign(ResultModel):
    """One design of the comparison."""

    label: str = field("a, b or c: the design's folder.")
    folder: str = field("The folder holding its full report.")
    input: str = field("The cluster argument as given.")
    cluster: str = field("Cluster name.")
    workload: str = field("Workload name.")
    accelerators: int = field("Accelerators.")
    accelerator: str = field("Accelerator part.")
    step_time_source: str | None = field("simulated or estimated; null when no plan fits.")


class ComparedFigure(ResultModel):
    """One headline figure per design and its winner."""

    id: str = field("Figure id.")
    label: str = field("What it is.")
    key: str = field("Its key path in each design's results.json (parts joined by /).")
    kind: str = field("How the report shows it (a report value kind).")
    direction: str = field("Which way wins: lower, higher or better verdict.")
    values: list[float | int | str | None] = field("The value per design (null: none).")
    winners: list[str] = field("Labels of the winning designs (empty: a tie or too few "
                               "values).")


class ComparedRule(ResultModel):
    """One rule's status per design."""

    id: str = field("Rule id.")
    title: str = field("Rule title.")
    severity: str = field("Its severity in the first design that evaluated it.")
    statuses: list[str | None] = field("Status per design (null: not evaluated there).")
    failed: list[bool] = field("Whether it failed, per design.")


class ComparedComponent(ResultModel):
    """One bill-of-materials component across the designs."""

    component: str = field("Component id.")
    parts: list[str | None] = field("The part per design (null: absent).")
    counts: list[int] = field("Units per design (0: absent).")
    deltas: list[int] = field("Each design's count less the first design's.")


class Comparison(ResultModel):
    """``compare.json`` of ``supernode design A B [C]``."""

    schema_: Literal["supernode-compare/1"] = field("Document kind and version.",
                                                    alias="schema")
    designs: list[ComparedDesign] = field("The designs, in argument order.")
    figures: list[ComparedFigure] = field("Every headline figure.")
    rules: list[ComparedRule] = field("Every rule any design evaluated.")
    bom: list[ComparedComponent] = field("The bill-of-materials diff.")

    @model_validator(mode="after")
    def _one_value_per_design(self) -> Comparison:
        n = len(self.designs)
        lists = [f.values for f in self.figures] + [r.statuses for r in self.rules] + \
            [r.failed for r in self.rules] + [c.counts for c in self.bom] + \
            [c.deltas for c in self.bom] + [c.parts for c in self.bom]
        if any(len(values) != n for values in lists):
            raise ValueError(f"every per-design list must have {n} entries")
        return self


def check_comparison(data: dict[str, Any]) -> Comparison:
    """``data`` (a ``compare.json`` dict) as :class:`Comparison`; pydantic's
    ``ValidationError`` naming every key that does not match."""
    return Comparison.model_validate(data)

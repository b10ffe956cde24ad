"""docs/workload.md: its example runs (examples are tests, docs/architecture.md) and its
tables list every schema field."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from supernode.spec.plan import ParallelPlan
from supernode.spec.stack import StackSpec
from supernode.spec.workload import MLASpec, MoESpec, WorkloadSpec

DOC = Path(__file__).resolve().parents[1] / "docs" / "workload.md"


def test_examples_run() -> None:
    """Every Python example of docs/workload.md runs, and checks the figures it shows with its own
    asserts (an example without one would prove nothing but that it runs)."""
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    assert blocks
    for block in blocks:
        assert re.search(r"^\s*assert ", block, re.M), block
        exec(compile(block, str(DOC), "exec"), {})  # noqa: S102 - our own documentation


@pytest.mark.parametrize(("model", "prefix"), [(WorkloadSpec, ""), (MoESpec, "moe."),
                                               (MLASpec, "mla."), (StackSpec, "stack."),
                                               (ParallelPlan, "")])
def test_every_field_documented(model: type, prefix: str) -> None:
    text = DOC.read_text(encoding="utf-8")
    for name, field in model.model_fields.items():
        row = next((r for r in text.splitlines() if r.startswith(f"| `{prefix}{name}` |")), None)
        assert row is not None, f"{prefix}{name} missing from docs/workload.md"
        assert field.description in row, f"{prefix}{name}: description differs from schema"

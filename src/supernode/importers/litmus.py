"""Read the results of ``supernode memory litmus``'s program back (``supernode import
litmus FILE``): the outcome counts of MP, SB and IRIW and, per test, whether an outcome
sequential consistency forbids was seen (:func:`supernode.memory.litmus.verdicts`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from supernode.memory.litmus import read_results, verdicts
from supernode.spec.loader import read_document


def import_litmus(path: Path) -> dict[str, Any]:
    """The machine, variant and per-test verdicts of a litmus results file."""
    data = read_results(read_document(path), str(path))
    return {"machine": data.get("machine"), "system": data.get("system"),
            "variant": data.get("variant"), "tests": verdicts(data),
            "note": data.get("note")}

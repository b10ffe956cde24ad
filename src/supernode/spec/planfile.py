"""Plan fields from a plan file plus inline overrides, with DP filling the GPUs by default.

Shared by every command that takes a plan (``estimate``, ``simulate``): the file (YAML or
JSON mapping of :class:`~supernode.spec.plan.ParallelPlan` fields) is read, inline values
that are not None override it, and ``dp`` defaults to ``gpus / (tp * pp * cp)``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from supernode.errors import InputError
from supernode.spec.loader import read_document

#: Plan fields a command line may set inline, in the order commands list them.
INLINE_PLAN_FIELDS = ("tp", "pp", "dp", "cp", "ep", "vpp", "micro_batch",
                      "global_batch_sequences", "recompute", "sequence_parallel", "zero_stage",
                      "distributed_optimizer", "precision")


def plan_document(plan: dict[str, Any] | str | Path | None) -> dict[str, Any]:
    """Plan fields from a mapping or a plan file (empty when None)."""
    if plan is None:
        return {}
    if isinstance(plan, dict):
        return dict(plan)
    doc = read_document(plan)
    if not isinstance(doc, dict):
        raise InputError("", "a plan file is a mapping of plan fields", source=str(plan))
    return doc


def fill_dp(data: dict[str, Any], gpus: int, who: str = "the cluster") -> dict[str, Any]:
    """Set ``dp`` to fill ``gpus`` when absent; InputError when tp*pp*cp does not divide."""
    if "dp" not in data:
        mp = int(data.get("tp", 1)) * int(data.get("pp", 1)) * int(data.get("cp", 1))
        if mp <= 0 or gpus % mp:
            raise InputError("plan.dp", f"tp*pp*cp = {mp} does not divide {who}'s {gpus} "
                                        "GPUs; give --dp explicitly")
        data["dp"] = gpus // mp
    return data


def plan_data(plan_file: str | Path | None, inline: dict[str, Any], gpus: int,
              who: str = "the cluster") -> dict[str, Any]:
    """Plan file fields, overridden by the non-None ``inline`` values, with ``dp`` filled."""
    data = plan_document(plan_file)
    data.update({k: v for k, v in inline.items() if v is not None})
    return fill_dp(data, gpus, who)

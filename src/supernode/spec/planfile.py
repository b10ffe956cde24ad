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


def option_name(field: str) -> str:
    """The command-line option of an inline plan field (``micro_batch`` -> ``--micro-batch``)."""
    return "--global-batch" if field == "global_batch_sequences" else \
        "--" + field.replace("_", "-")


def check_plan_fields(data: dict[str, Any], source: str | None = None,
                      as_options: bool = False) -> None:
    """Validate the plan fields present in ``data`` by the plan schema, before anything is
    computed from them (a ``tp: x`` or ``pp: null`` is an InputError naming the field,
    never a TypeError). Absent fields are not required here. ``as_options`` names the
    command-line option (``--tp``) instead of the field (inline values)."""
    from supernode.spec.plan import plan_from_data

    probe = {"global_batch_sequences": 1, **data}
    try:
        plan_from_data(probe)
    except InputError as exc:
        field = exc.path.split(".")[0].split("[")[0]
        if as_options and field in data:
            raise InputError(option_name(field), exc.message) from None
        raise InputError(exc.path, exc.message, source=source) from None


def fill_dp(data: dict[str, Any], gpus: int, who: str = "the cluster") -> dict[str, Any]:
    """Set ``dp`` to fill ``gpus`` when absent; InputError when tp*pp*cp does not divide.
    The fields are validated first (:func:`check_plan_fields`)."""
    check_plan_fields(data)
    if "dp" not in data:
        mp = int(data.get("tp", 1)) * int(data.get("pp", 1)) * int(data.get("cp", 1))
        if gpus % mp:
            raise InputError("plan.dp", f"tp*pp*cp = {mp} does not divide {who}'s {gpus} "
                                        "GPUs; give --dp explicitly")
        data["dp"] = gpus // mp
    return data


def merged_plan(plan_file: str | Path | None, inline: dict[str, Any]) -> dict[str, Any]:
    """Plan file fields overridden by the non-None ``inline`` values, each side validated
    (a bad file field names the file, a bad inline value names its option)."""
    data = plan_document(plan_file)
    check_plan_fields(data, source=str(plan_file) if plan_file is not None else None)
    flags = {k: v for k, v in inline.items() if v is not None}
    check_plan_fields(flags, as_options=True)
    data.update(flags)
    return data


def plan_data(plan_file: str | Path | None, inline: dict[str, Any], gpus: int,
              who: str = "the cluster") -> dict[str, Any]:
    """Plan file fields, overridden by the non-None ``inline`` values, with ``dp`` filled."""
    return fill_dp(merged_plan(plan_file, inline), gpus, who)

"""The base of every part of ``results.json``: unknown keys are refused and every number is
finite (the JSON writer refuses NaN and infinity; the reliability stage writes a non-finite
figure as null, :func:`supernode.design.reliability.finite`)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

#: A figure a decision record or a check shows: a count, a measure or a yes/no.
Scalar = bool | int | float | None


class ResultModel(BaseModel):
    """One part of ``results.json`` (a JSON object with fixed keys): a key a stage adds
    without declaring it here, a value of the wrong type, NaN or infinity are errors."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, frozen=True)


def field(description: str, **kwargs: Any) -> Any:
    """A required field with its description (the JSON Schema's ``description``)."""
    return Field(description=description, **kwargs)


def optional(description: str) -> Any:
    """A field a stage may leave out of its object (null when it is given)."""
    return Field(None, description=description)

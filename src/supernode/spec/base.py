"""Shared pydantic base for every document the toolkit reads.

Each field is declared once with its type, unit (in its name), bounds and a one-line
description; the loader, the JSON Schema and the docs table are generated from it
(STYLE.md §1). Unknown fields are refused (``extra="forbid"``).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

Precision = Literal["fp64", "fp32", "tf32", "fp16", "bf16", "fp8", "fp6", "fp4", "int8"]
Confidence = Literal["high", "medium", "low"]


class FieldError(ValueError):
    """A validator's error about one field of its model: the loader appends ``field`` to the path.

    Model-level validators raise it so the error names ``scale_up.dims``, not ``scale_up``.
    """

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


class StrictModel(BaseModel):
    """A document node: unknown fields are errors, values are validated on assignment."""

    model_config = ConfigDict(
        extra="forbid", frozen=True, populate_by_name=True, allow_inf_nan=False
    )

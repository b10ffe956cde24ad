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


class StrictModel(BaseModel):
    """A document node: unknown fields are errors, values are validated on assignment."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

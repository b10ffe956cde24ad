"""Shared pydantic base for every document the toolkit reads.

Each field is declared once with its type, unit (in its name), bounds and a one-line
description; the loader, the JSON Schema and the docs table are generated from it
(one schema, many readers: docs/architecture.md). Unknown fields are refused (``extra="forbid"``).

A field's unit suffix also bounds it (:data:`UNIT_LIMITS`): a value far beyond any real
part in that unit is a unit slip (a bit/s figure written into a ``*_gbit_per_s`` field,
watts into ``*_kw``) and is refused with the field's path, on every document model,
including those added later. A model holding *measured* figures sets
``measured_figures = True``: its rates keep the upper limit but not the lower one (an
8-byte collective really runs at 0.0008 GB/s, and nccl-tests prints it as 0.00).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, model_validator

Precision = Literal["fp64", "fp32", "tf32", "fp16", "bf16", "fp8", "fp6", "fp4", "int8"]
Confidence = Literal["high", "medium", "low"]


class FieldError(ValueError):
    """A validator's error about one field of its model: the loader appends ``field`` to the path.

    Model-level validators raise it so the error names ``scale_up.dims``, not ``scale_up``.
    """

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


@dataclass(frozen=True)
class UnitLimit:
    """The plausible range of a field by its unit suffix, and what a slip there looks like."""

    low: float
    high: float
    unit: str
    slip: str


#: Field-name suffix -> range. Each bound is orders of magnitude beyond today's parts
#: (ports: 1.6 Tb/s; links: 0.9 TB/s; HBM: 8 TB/s and 288 GB; accelerators: ~10 PFLOP/s
#: dense FP4 and 1.4 kW; racks: 140 kW; latencies: microseconds) on both sides (rates at
#: least 1 Mb/s or 1 MFLOP/s), so only a unit slip or a typo reaches them.
UNIT_LIMITS: dict[str, UnitLimit] = {
    "_gbit_per_s": UnitLimit(1e-3, 1e5, "Gb/s (1e9 bit/s)", "a bit/s or Tb/s figure"),
    "_gbyte_per_s": UnitLimit(1e-3, 1e5, "GB/s (1e9 byte/s)", "a byte/s, bit/s or TB/s "
                                                           "figure"),
    "_tbyte_per_s": UnitLimit(1e-6, 1e3, "TB/s (1e12 byte/s)", "a GB/s or byte/s figure"),
    "_tflops": UnitLimit(1e-6, 1e6, "TFLOP/s (1e12 FLOP/s)", "a FLOP/s or PFLOP/s figure"),
    "_gbyte": UnitLimit(0, 1e6, "GB (1e9 bytes)", "a byte or MB figure"),
    "_ns": UnitLimit(0, 1e9, "ns", "a picosecond figure"),
    "_w": UnitLimit(0, 1e6, "W", "a milliwatt figure"),
    "_kw": UnitLimit(0, 1e7, "kW", "a watt figure"),
    "_kg": UnitLimit(0, 1e6, "kg", "a gram figure"),
    "_c": UnitLimit(-100, 200, "degrees C", "a Fahrenheit or kelvin figure"),
}


def unit_limit(field: str) -> UnitLimit | None:
    """The range that ``field``'s unit suffix implies (None for a field without one)."""
    return next((limit for suffix, limit in UNIT_LIMITS.items() if field.endswith(suffix)),
                None)


def _numbers(value: Any) -> Iterator[float]:
    """Numbers in a field's value: itself, or the items of a list or mapping."""
    items = value.values() if isinstance(value, dict) else value \
        if isinstance(value, list | tuple) else (value,)
    for item in items:
        if isinstance(item, int | float) and not isinstance(item, bool):
            yield item


_UNIT_FIELDS: dict[type, tuple[tuple[str, UnitLimit], ...]] = {}


class StrictModel(BaseModel):
    """A document node: unknown fields are errors, values are validated on assignment."""

    model_config = ConfigDict(
        extra="forbid", frozen=True, populate_by_name=True, allow_inf_nan=False,
        defer_build=True,
    )
    #: True for nodes of measured figures: only the upper unit limit applies.
    measured_figures: ClassVar[bool] = False

    @model_validator(mode="after")
    def _within_unit_limits(self) -> StrictModel:
        cls = type(self)
        fields = _UNIT_FIELDS.get(cls)
        if fields is None:
            fields = tuple((name, limit) for name in cls.model_fields
                           if (limit := unit_limit(name)) is not None)
            _UNIT_FIELDS[cls] = fields
        for name, limit in fields:
            low = min(limit.low, 0.0) if self.measured_figures else limit.low
            for number in _numbers(getattr(self, name)):
                if not low <= number <= limit.high:
                    shown = f"{int(number):,}" if float(number).is_integer() else f"{number:,}"
                    raise FieldError(name, f"{shown} is outside {low:,g}.."
                                           f"{limit.high:,g} {limit.unit}, beyond any real "
                                           f"part: this field is in {limit.unit}; was "
                                           f"{limit.slip} written here?")
        return self

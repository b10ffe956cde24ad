"""Board power of an accelerator over a step, and prices per accelerator-hour.

Both are catalog data with their stated source (``data/catalog/power.yaml``,
``data/catalog/prices.yaml``); both are assumptions, said so in the files and in every
output that uses them. The planner's energy objective, the design's energy and cost per
token and the facility's power at the planned load read them here, so they agree.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from pydantic import Field

from supernode.spec.base import StrictModel
from supernode.spec.loader import ModelT, parse_text, validate_document


class PowerAssumptions(StrictModel):
    """``data/catalog/power.yaml``."""

    source: str = Field(min_length=1, description="Where the figures come from.")
    waiting_fraction_of_tdp: float = Field(
        gt=0, le=1, description="Board power while waiting, as a share of TDP.")
    fallback_tdp_w: float = Field(gt=0, description="Board power of a part without a TDP (W).")


class PriceTable(StrictModel):
    """``data/catalog/prices.yaml``."""

    source: str = Field(min_length=1, description="Where the prices come from.")
    fallback_usd_per_gpu_hour: float = Field(gt=0, description="Price of a part not listed.")
    usd_per_gpu_hour: dict[str, float] = Field(description="USD per accelerator-hour by name.")


def _read(name: str, model: type[ModelT]) -> ModelT:
    text = (resources.files("supernode") / "data" / "catalog" / name).read_text("utf-8")
    return validate_document(parse_text(text, source=name), model, source=name)


@lru_cache(maxsize=1)
def power_assumptions() -> PowerAssumptions:
    """The board-power assumptions (validated once)."""
    return _read("power.yaml", PowerAssumptions)


@lru_cache(maxsize=1)
def price_table() -> PriceTable:
    """The price table (validated once)."""
    return _read("prices.yaml", PriceTable)


@dataclass(frozen=True)
class ListedPrice:
    """A part's price per accelerator-hour (USD) and whether the table lists it."""

    usd_per_gpu_hour: float
    listed: bool
    source: str


def listed_price(accelerator: str) -> ListedPrice:
    """The table's price of ``accelerator`` (catalog name, any case), or the fallback."""
    table = price_table()
    key = accelerator.lower()
    if key in table.usd_per_gpu_hour:
        return ListedPrice(table.usd_per_gpu_hour[key], True, table.source)
    return ListedPrice(table.fallback_usd_per_gpu_hour, False, table.source)


def board_power_w(tdp_w: float | None) -> tuple[float, float]:
    """(busy, waiting) board power of one accelerator in W: its TDP (the fallback when the
    catalog gives none) and the waiting share of it."""
    power = power_assumptions()
    busy = float(tdp_w or power.fallback_tdp_w)
    return busy, power.waiting_fraction_of_tdp * busy

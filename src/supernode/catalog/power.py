"""Board power of an accelerator over a step, and prices per accelerator-hour.

Both are catalog data with their stated source (``data/catalog/power.yaml``,
``data/catalog/prices.yaml``); both are assumptions, said so in the files and in every
output that uses them. The planner's energy objective, the design's energy and cost per
token and the facility's power at the planned load read them here, so they agree.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from pydantic import Field

from supernode.errors import InputError
from supernode.spec.base import StrictModel
from supernode.spec.loader import ModelT, parse_text, validate_document


class DvfsCurve(StrictModel):
    """``dvfs`` in ``data/catalog/power.yaml``: board power against SM clock under a cap."""

    source: str = Field(min_length=1, description="Where the curve comes from.")
    static_share: float = Field(ge=0, lt=1, description="Share of the full-clock draw that "
                                "does not scale with the SM clock.")
    clock_exponent: float = Field(gt=0, description="Dynamic power ~ clock ** exponent.")
    min_cap_fraction_of_tdp: float = Field(gt=0, le=1, description="Lowest cap the curve "
                                           "covers, as a share of TDP.")
    measured: dict[str, list[tuple[float, float]]] = Field(
        description="Per part: (cap over full-clock draw, throughput over uncapped).")


class PowerAssumptions(StrictModel):
    """``data/catalog/power.yaml``."""

    source: str = Field(min_length=1, description="Where the figures come from.")
    waiting_fraction_of_tdp: float = Field(
        gt=0, le=1, description="Board power while waiting, as a share of TDP.")
    fallback_tdp_w: float = Field(gt=0, description="Board power of a part without a TDP (W).")
    dvfs: DvfsCurve = Field(description="Sustained clock under a power cap.")


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


def board_power_w(tdp_w: float | None, power_limit_w: float | None = None
                  ) -> tuple[float, float]:
    """(busy, waiting) board power of one accelerator in W: its TDP (the fallback when the
    catalog gives none) and the waiting share of it; under a power cap below TDP both are
    at most the cap (busy: the SM clock falls until board power equals the cap; waiting
    draws under the cap, so its clock and power are the uncapped part's)."""
    power = power_assumptions()
    tdp = float(tdp_w or power.fallback_tdp_w)
    cap = tdp if power_limit_w is None else min(float(power_limit_w), tdp)
    return cap, min(power.waiting_fraction_of_tdp * tdp, cap)


def locked_clock_power_w(tdp_w: float | None, clock_ratio: float) -> tuple[float, float]:
    """(busy, waiting) board power in W of an uncapped part whose SM clock is locked at
    ``clock_ratio`` of full: busy on the DVFS curve ``tdp (s + (1 - s) x^n)``; waiting as
    uncapped (tensor cores idle: the SM clock adds little)."""
    power = power_assumptions()
    curve = power.dvfs
    tdp = float(tdp_w or power.fallback_tdp_w)
    x = min(max(float(clock_ratio), 0.0), 1.0)
    busy = tdp * (curve.static_share + (1.0 - curve.static_share) * x ** curve.clock_exponent)
    return busy, power.waiting_fraction_of_tdp * tdp


def clock_at_cap(cap_fraction: float) -> float:
    """Sustained SM clock over full clock under a cap of ``cap_fraction`` of the full-clock
    draw: the inverse of the DVFS curve, ``((c - s) / (1 - s)) ** (1 / n)``, at most 1."""
    curve = power_assumptions().dvfs
    if cap_fraction >= 1.0:
        return 1.0
    share = max(cap_fraction - curve.static_share, 0.0) / (1.0 - curve.static_share)
    return float(share ** (1.0 / curve.clock_exponent))


def sustained_clock_ratio(tdp_w: float | None, power_limit_w: float | None,
                          path: str = "power_limit_w") -> float:
    """SM clock over full clock of a part capped at ``power_limit_w`` W (1.0 uncapped or at
    or above TDP); :class:`InputError` at ``path`` for a cap the curve does not cover or a
    part without a TDP."""
    if power_limit_w is None:
        return 1.0
    if not tdp_w:
        raise InputError(path, "the part publishes no TDP, so a cap below it cannot be "
                               "priced; give the part's tdp_w or leave the cap out")
    power = power_assumptions()
    tdp = float(tdp_w)
    lowest = power.dvfs.min_cap_fraction_of_tdp * tdp
    if not (math.isfinite(power_limit_w) and power_limit_w >= lowest):
        raise InputError(path, f"must be at least {lowest:g} W "
                               f"({power.dvfs.min_cap_fraction_of_tdp:.0%} of the {tdp:g} W "
                               f"TDP: the lowest cap the DVFS curve covers), got "
                               f"{power_limit_w:g}")
    return clock_at_cap(power_limit_w / tdp)


def power_cap_note(tdp_w: float | None, power_limit_w: float | None) -> str | None:
    """One line saying what a cap below TDP does (None uncapped)."""
    power = power_assumptions()
    tdp = float(tdp_w or power.fallback_tdp_w)
    if power_limit_w is None or power_limit_w >= tdp:
        return None
    x = sustained_clock_ratio(tdp_w, power_limit_w)
    return (f"power cap {power_limit_w:g} W (TDP {tdp:g} W): SM clock {x:.1%} of full "
            f"(generic DVFS curve, no published one for this part), GEMMs and attention "
            f"at that clock, HBM and links not")

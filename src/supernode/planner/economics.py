"""Prices and power used to rank plans by cost or energy (documented assumptions).

**Prices are assumptions, not quotes**: the catalog's price table
(``data/catalog/prices.yaml``, read by :mod:`supernode.catalog.power`) holds round US-dollar
prices per accelerator-hour so that cost per token can be compared *between designs*;
every command that uses them takes ``--price-per-gpu-hour`` to override, and a part
missing from the table takes its fallback and says so.

Energy: a GPU draws its board power (TDP, or its power cap below TDP) while computing and
a share of TDP (at most the cap) while waiting on communication, bubbles and fixed
overheads (``data/catalog/power.yaml``). GPU
board energy only: hosts, network and cooling (PUE) are not included.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from supernode.catalog.power import board_power_w, listed_price
from supernode.errors import InputError

#: Largest price accepted, USD per GPU-hour (a thousand times today's rental prices; past
#: it, costs per token overflow nothing but mean nothing either).
MAX_PRICE_PER_GPU_HOUR = 10_000.0


@dataclass(frozen=True)
class Economics:
    """Price per GPU-hour (USD) and board power (W) of the accelerator used."""

    price_per_gpu_hour: float
    tdp_w: float
    price_note: str
    power_limit_w: float | None = None

    @property
    def energy_weights(self) -> tuple[float, float]:
        """(busy, waiting) power per GPU in W at the power cap, if any
        (:func:`supernode.catalog.power.board_power_w`)."""
        return board_power_w(self.tdp_w, self.power_limit_w)


def default_economics(accelerator: str, tdp_w: float | None = None,
                      price_per_gpu_hour: float | None = None,
                      power_limit_w: float | None = None) -> Economics:
    """Economics of ``accelerator`` (catalog name): table price unless overridden; board
    power at ``power_limit_w`` when it caps the part below TDP.

    A given price must be finite and > 0 (:class:`InputError` otherwise).
    """
    if price_per_gpu_hour is not None:
        if not (math.isfinite(price_per_gpu_hour)
                and 0 < price_per_gpu_hour <= MAX_PRICE_PER_GPU_HOUR):
            raise InputError("price_per_gpu_hour", f"must be a number in (0, "
                                                   f"{MAX_PRICE_PER_GPU_HOUR:,.0f}] (USD per "
                                                   f"GPU-hour, --price-per-gpu-hour), got "
                                                   f"{price_per_gpu_hour}")
        note = f"price ${price_per_gpu_hour:.2f}/GPU-hour (given)"
        price = float(price_per_gpu_hour)
    else:
        listed = listed_price(accelerator)
        price = listed.usd_per_gpu_hour
        note = (f"price ${price:.2f}/GPU-hour ({listed.source})" if listed.listed else
                f"price ${price:.2f}/GPU-hour: {accelerator} is not in the price table "
                f"({listed.source})")
    return Economics(price, board_power_w(tdp_w)[0], note, power_limit_w)


def cost_per_million_tokens(step_time_s: float, gpus: int, tokens_per_step: float,
                            economics: Economics) -> float:
    """USD per million tokens: GPU-hours of one step times the price, per token."""
    return economics.price_per_gpu_hour * gpus * step_time_s / 3600.0 / tokens_per_step * 1e6


def energy_per_step_j(busy_s: float, step_time_s: float, gpus: int,
                      economics: Economics) -> float:
    """Joules of GPU board energy per step (busy at TDP, waiting at a fraction of it)."""
    busy_w, waiting_w = economics.energy_weights
    return gpus * (busy_w * busy_s + waiting_w * (step_time_s - busy_s))

"""Prices and power used to rank plans by cost or energy (documented assumptions).

**Prices are assumptions, not quotes.** The table holds round US-dollar prices per
accelerator-hour in the range of 2024-2025 public cloud and GPU-rental listings for
reserved capacity (on-demand list prices are often 1.5-3x higher); they exist so that
cost per token can be compared *between designs*, and every command that uses them
takes ``--price-per-gpu-hour`` to override. Parts missing from the table fall back to
:data:`FALLBACK_PRICE_PER_GPU_HOUR` and say so.

Energy: a GPU draws its board power (TDP) while computing and
:data:`WAITING_POWER_FRACTION` of it while waiting on communication, bubbles and fixed
overheads (assumption: HBM and links stay busy, tensor cores idle). GPU board energy
only: hosts, network and cooling (PUE) are not included.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from supernode.errors import InputError

#: USD per accelerator-hour. ASSUMPTIONS (see module docstring), keyed by catalog name.
PRICE_PER_GPU_HOUR_USD: dict[str, float] = {
    "a100-sxm-80gb": 1.50,
    "h100-sxm-80gb": 2.50,
    "h200-sxm-141gb": 3.50,
    "b200-sxm-180gb": 5.00,
    "gb200": 6.00,  # NVL72 rack-scale system, per GPU
    "gb300": 7.00,
    "mi300x": 2.50,
    "mi325x": 3.00,
    "mi355x": 4.00,
    "gaudi3": 1.80,
    "tpu-v4": 1.50,
    "tpu-v5p": 2.50,
    "tpu-v6e": 1.50,
}
PRICE_SOURCE = ("assumption: round 2024-2025 reserved-capacity rental prices per "
                "accelerator-hour; override with --price-per-gpu-hour")
FALLBACK_PRICE_PER_GPU_HOUR = 2.50
#: Largest price accepted, USD per GPU-hour (a thousand times today's rental prices; past
#: it, costs per token overflow nothing but mean nothing either).
MAX_PRICE_PER_GPU_HOUR = 10_000.0
#: Board power drawn while waiting, as a fraction of TDP (assumption, see module doc).
WAITING_POWER_FRACTION = 0.4
#: Board power assumed when the accelerator publishes no TDP (W).
FALLBACK_TDP_W = 700.0


@dataclass(frozen=True)
class Economics:
    """Price per GPU-hour (USD) and board power (W) of the accelerator used."""

    price_per_gpu_hour: float
    tdp_w: float
    price_note: str

    @property
    def energy_weights(self) -> tuple[float, float]:
        """(busy, waiting) power per GPU in W."""
        return self.tdp_w, WAITING_POWER_FRACTION * self.tdp_w


def default_economics(accelerator: str, tdp_w: float | None = None,
                      price_per_gpu_hour: float | None = None) -> Economics:
    """Economics of ``accelerator`` (catalog name): table price unless overridden.

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
    elif accelerator.lower() in PRICE_PER_GPU_HOUR_USD:
        price = PRICE_PER_GPU_HOUR_USD[accelerator.lower()]
        note = f"price ${price:.2f}/GPU-hour ({PRICE_SOURCE})"
    else:
        price = FALLBACK_PRICE_PER_GPU_HOUR
        note = (f"price ${price:.2f}/GPU-hour: {accelerator} is not in the price table "
                f"({PRICE_SOURCE})")
    return Economics(price, float(tdp_w or FALLBACK_TDP_W), note)


def cost_per_million_tokens(step_time_s: float, gpus: int, tokens_per_step: float,
                            economics: Economics) -> float:
    """USD per million tokens: GPU-hours of one step times the price, per token."""
    return economics.price_per_gpu_hour * gpus * step_time_s / 3600.0 / tokens_per_step * 1e6


def energy_per_step_j(busy_s: float, step_time_s: float, gpus: int,
                      economics: Economics) -> float:
    """Joules of GPU board energy per step (busy at TDP, waiting at a fraction of it)."""
    busy_w, waiting_w = economics.energy_weights
    return gpus * (busy_w * busy_s + waiting_w * (step_time_s - busy_s))

"""Schema of a cluster's optional ``economics`` block: the prices the design review uses.

Every field is optional; a figure left out takes the toolkit's assumption, and the review
prints each figure with where it came from (``user-supplied`` for a figure set here; the
price table's source, ``data/catalog/prices.yaml``, otherwise). Energy price and PUE are
the facility block's (``facility.energy_price_usd_per_kwh``, ``facility.pue``): one figure
each, stated once.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from supernode.spec.base import StrictModel


class EconomicsSpec(StrictModel):
    """Prices of one cluster (USD)."""

    price_per_gpu_hour_usd: float | None = Field(
        None, gt=0, le=10_000, description="All-in price of one accelerator-hour in USD "
                                           "(rental, or capex and opex over the life); "
                                           "null: the catalog's price table.")
    supernode_premium: float | None = Field(
        None, ge=0, le=10, description="Extra share of the GPU-hour price a supernode "
                                       "(scale-up domain > 8) costs over 8-GPU servers of "
                                       "the same chips (decision D2); null: 0.25.")
    unit_prices_usd: dict[str, Annotated[float, Field(gt=0, le=1e10)]] = Field(
        default_factory=dict, description="Price of one unit of a bill-of-materials "
        "component (USD), by its component id (docs/design.md, 'Bill of materials'); a "
        "component left out is shown with no price.")
    source: str | None = Field(None, description="Where your prices come from (a quote, a "
                                                 "contract); printed beside them.")

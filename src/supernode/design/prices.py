"""The review's one price model: every price a figure of the review is computed from, each
with where it comes from.

GPU-hour price: the cluster's ``economics.price_per_gpu_hour_usd`` (``user-supplied``), else
the catalog's price table (``data/catalog/prices.yaml``, an assumption with its stated
source). Supernode premium (decision D2's price of a scale-up domain over 8-GPU servers):
``economics.supernode_premium``, else the planner's 0.25 (docs/planner.md). Energy price and
PUE: the facility block's (``user-supplied`` when the cluster file states them, else the
facility defaults, assumptions). The GPU-hour price is all-in (what the cost per token of
the plans, D2 and the summary use); the energy cost per token is shown beside it as the part
of an owner's cost that is electricity, not added to it.
``results.json`` -> ``economics``.
"""

from __future__ import annotations

from typing import Any

from supernode.catalog.power import listed_price
from supernode.planner.fit import CONVENTIONAL_DOMAIN, DEFAULT_SUPERNODE_PREMIUM
from supernode.spec.cluster import FacilitySpec
from supernode.spec.resolved import Cluster

USER = "user-supplied"


def _figure(value: float, unit: str, source: str) -> dict[str, Any]:
    return {"value": float(value), "unit": unit, "source": source}


def price_model(cluster: Cluster) -> dict[str, Any]:
    """Each price of the review (USD) with its unit and source."""
    econ = cluster.spec.economics
    stated = f"{USER} ({econ.source})" if econ is not None and econ.source else USER
    if econ is not None and econ.price_per_gpu_hour_usd is not None:
        gpu_hour = _figure(econ.price_per_gpu_hour_usd, "usd_per_gpu_hour", stated)
    else:
        listed = listed_price(cluster.accelerator.name)
        note = "" if listed.listed else f" ({cluster.accelerator.name} not in the table: " \
                                        "its fallback)"
        gpu_hour = _figure(listed.usd_per_gpu_hour, "usd_per_gpu_hour",
                           f"price table data/catalog/prices.yaml: {listed.source}{note}; "
                           "in the design set economics.price_per_gpu_hour_usd")
    if econ is not None and econ.supernode_premium is not None:
        premium = _figure(econ.supernode_premium, "share", stated)
    else:
        premium = _figure(DEFAULT_SUPERNODE_PREMIUM, "share",
                          "assumption: the planner's default (docs/planner.md)")
    facility = cluster.spec.facility
    given = facility.model_fields_set if facility is not None else set()
    fac = facility or FacilitySpec()

    def fac_source(name: str) -> str:
        return f"{USER} (facility.{name})" if name in given else \
            f"assumption: the facility default (facility.{name}, docs/facility.md)"

    return {"gpu_hour": gpu_hour, "supernode_premium": premium,
            "energy": _figure(fac.energy_price_usd_per_kwh, "usd_per_kwh",
                              fac_source("energy_price_usd_per_kwh")),
            "pue": _figure(fac.pue, "ratio", fac_source("pue"))}


def stated_prices(cluster: Cluster) -> tuple[float | None, float | None]:
    """(GPU-hour price, supernode premium) the cluster file states (None: not stated), for
    the planner and the workload fit."""
    econ = cluster.spec.economics
    if econ is None:
        return None, None
    return econ.price_per_gpu_hour_usd, econ.supernode_premium


def server_price(cluster: Cluster) -> tuple[float, float]:
    """(USD per GPU-hour of the same chips in 8-GPU servers, the supernode premium) at the
    price model's prices: the cluster's GPU-hour price less the premium when its own domain
    is larger than 8 (what the workload and serving fits price their baseline at)."""
    prices = price_model(cluster)
    price, premium = prices["gpu_hour"]["value"], prices["supernode_premium"]["value"]
    if cluster.scale_up.size > CONVENTIONAL_DOMAIN:
        price /= 1.0 + premium
    return price, premium


#: The source of a bill-of-materials part with no price: the bundled catalog
#: (data/catalog/prices.yaml) holds GPU-hour prices only, no hardware prices.
NO_PRICE = "no price (not in the catalog)"


def unit_price(cluster: Cluster, component: str) -> tuple[float | None, str]:
    """Price of one unit of bill-of-materials ``component`` (USD) and its source: the
    cluster's ``economics.unit_prices_usd`` (``user-supplied``), else none (the catalog
    prices no hardware)."""
    econ = cluster.spec.economics
    if econ is not None and component in econ.unit_prices_usd:
        stated = f"{USER} ({econ.source})" if econ.source else USER
        return float(econ.unit_prices_usd[component]), stated
    return None, NO_PRICE

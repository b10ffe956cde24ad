"""Default component failure rates, derived from sourced fleet statistics.

The data file ``data/reliability/rates.yaml`` holds the raw published figures; this module
does the arithmetic once (docs/reliability.md, "Rates"):

* the **level** is the geometric mean of Meta RSC-1 and RSC-2's 6.50 and 2.34 job-interrupting
  failures per 1,000 node-days (Kokolis et al., HPCA 2025), per GPU at 8 GPUs per node;
* the **mix** is Llama 3's Table 5 (Dubey et al. 2024): each root cause's share of the 419
  unexpected interruptions is given to one component;
* a component's rate per unit is ``level x reference GPUs x share / reference units``, the
  reference being the 16,384-GPU Llama 3 job's inventory.

So the Llama 3 count is a *check* of the model (a validation case), not a constant of it:
its share only splits the level among components. Rates are in failures per unit-second
inside (SI); files speak ``failures_per_unit_year``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Literal

from pydantic import Field, NonNegativeFloat, PositiveFloat, PositiveInt

from supernode.bounds import check_number
from supernode.errors import InputError
from supernode.spec.base import StrictModel
from supernode.spec.loader import parse_text, validate_document

DAY_S = 86_400.0
YEAR_S = 365.0 * DAY_S
Basis = Literal["mix", "network_link", "network_link_half", "network_switch", "fixed"]


class LevelSpec(StrictModel):
    """Fleet-wide failures per 1,000 node-days (combined by geometric mean)."""

    failures_per_1000_node_days: list[PositiveFloat] = Field(min_length=1)
    #: The cluster each level was measured on (same order).
    names: list[str] | None = None
    gpus_per_node: PositiveInt
    source: str


class MixCategory(StrictModel):
    """One root-cause row of a published interruption table."""

    cause: str
    count: NonNegativeFloat
    component: str


class MixSpec(StrictModel):
    """Root causes of a job's unexpected interruptions (their shares split the level)."""

    total: PositiveFloat
    window_days: PositiveFloat
    gpus: PositiveInt
    source: str
    categories: list[MixCategory]
    network_split: dict[Literal["switch", "link"], NonNegativeFloat]


class ComponentSpec(StrictModel):
    """How one component's default rate is obtained, what it counts, its repair time."""

    per: str
    basis: Basis
    repair_h: NonNegativeFloat
    what: str
    failures_per_unit_year: NonNegativeFloat | None = None
    assumption: str | None = None


class RatesFile(StrictModel):
    """The whole data file ``data/reliability/rates.yaml``."""

    schema_: Literal["supernode-reliability-rates/1"] = Field(alias="schema")
    level: LevelSpec
    mix: MixSpec
    reference_inventory: dict[str, PositiveFloat]
    components: dict[str, ComponentSpec]


@dataclass(frozen=True)
class ComponentRate:
    """A component's failure rate per unit (1/s), its repair time (s) and provenance."""

    name: str
    per: str
    rate_per_unit_s: float
    repair_s: float
    what: str
    source: str
    assumption: str | None = None

    @property
    def failures_per_unit_year(self) -> float:
        """The same rate in failures per unit-year."""
        return self.rate_per_unit_s * YEAR_S



#: Largest override a cluster file or ``--rate`` may give: a million failures per unit
#: and year (one every 32 s), a repair of ten years.
OVERRIDE_LIMITS = {"failures_per_unit_year": (1e6, "failures per unit-year"),
                   "repair_h": (87_600.0, "h")}


@lru_cache(maxsize=1)
def rates_file() -> RatesFile:
    """The bundled rates data file, validated."""
    name = "data/reliability/rates.yaml"
    text = resources.files("supernode").joinpath(name).read_text(encoding="utf-8")
    return validate_document(parse_text(text, source=name), RatesFile, source=name)


def level_per_gpu_s(data: RatesFile | None = None) -> float:
    """Fleet level: job-interrupting failures per GPU-second (geometric mean of the sources)."""
    lv = (data or rates_file()).level
    values = lv.failures_per_1000_node_days
    per_node_day = math.exp(sum(math.log(v) for v in values) / len(values)) / 1000.0
    return per_node_day / lv.gpus_per_node / DAY_S


def _shares(mix: MixSpec) -> dict[str, float]:
    out: dict[str, float] = {}
    for row in mix.categories:
        out[row.component] = out.get(row.component, 0.0) + row.count / mix.total
    return out


def _rate(name: str, spec: ComponentSpec, data: RatesFile, shares: dict[str, float]) -> float:
    """Failures per unit-second of one component (see the module docstring)."""
    if spec.basis == "fixed":
        return (spec.failures_per_unit_year or 0.0) / YEAR_S
    job_rate_s = level_per_gpu_s(data) * data.mix.gpus
    ref = data.reference_inventory
    split = data.mix.network_split
    if spec.basis == "mix":
        return job_rate_s * shares.get(name, 0.0) / ref[name]
    network = job_rate_s * shares.get("network", 0.0)
    if spec.basis == "network_switch":
        return network * split["switch"] / ref["network_switch"]
    per_link = network * split["link"] / ref["network_link"]
    return per_link / 2.0 if spec.basis == "network_link_half" else per_link


@lru_cache(maxsize=1)
def default_rates() -> dict[str, ComponentRate]:
    """Every component's default rate, by component name."""
    data = rates_file()
    shares = _shares(data.mix)
    out = {}
    for name, spec in data.components.items():
        source = {"mix": f"{data.level.source}; shares: {data.mix.source}",
                  "fixed": "assumption"}.get(spec.basis, f"{data.level.source}; network "
                                                       f"share: {data.mix.source}")
        out[name] = ComponentRate(name, spec.per, _rate(name, spec, data, shares),
                                  spec.repair_h * 3600.0, spec.what, source, spec.assumption)
    return out


def with_overrides(rates: dict[str, ComponentRate], per_year: dict[str, float],
                   repair_h: dict[str, float], path: str = "reliability"
                   ) -> dict[str, ComponentRate]:
    """``rates`` with some components' rates (per unit-year) and repair times (h) replaced.

    Unknown component names and negative or non-finite values raise :class:`InputError`.
    """
    out = dict(rates)
    for field, values in (("failures_per_unit_year", per_year), ("repair_h", repair_h)):
        for name, value in values.items():
            where = f"{path}.{field}.{name}"
            if name not in out:
                raise InputError(where, f"unknown component; known: {', '.join(sorted(out))}")
            check_number(where, value, 0, OVERRIDE_LIMITS[field][0], OVERRIDE_LIMITS[field][1])
            old = out[name]
            out[name] = ComponentRate(
                name, old.per,
                value / YEAR_S if field == "failures_per_unit_year" else old.rate_per_unit_s,
                value * 3600.0 if field == "repair_h" else old.repair_s, old.what,
                "cluster override" if field == "failures_per_unit_year" else old.source,
                old.assumption)
    return out


def expected_interruptions(gpus: int, duration_s: float) -> float:
    """Expected job interruptions of ``gpus`` GPUs over ``duration_s`` at the fleet level.

    The level alone (no inventory): for quick answers (``supernode fit``); the full model
    counts each component (:func:`supernode.reliability.inventory.interruption_rates`).
    """
    return level_per_gpu_s() * gpus * duration_s


def job_mtbf_s(gpus: int) -> float:
    """Mean time between interruptions of a job spanning ``gpus`` GPUs at the fleet level (s)."""
    return 1.0 / (level_per_gpu_s() * gpus)

"""The fleet failure level: its two published sources, and how the answer moves between them.

The default level is the **geometric mean** of Meta's two A100 research clusters (Kokolis et
al., HPCA 2025, arXiv:2410.21680): RSC-1 6.50 and RSC-2 2.34 job-interrupting failures per
1,000 node-days, so 3.90. Every sourced component rate is proportional to it (the mix only
splits it), so at either cluster's level those rates scale by ``level / 3.90`` (1.667 or
0.600); rates the data file assumes with no fleet basis (``fixed``: the CDU) and rates a
cluster or ``--rate`` overrides stay. :func:`level_sensitivity` gives the interruptions per
day and the analytic goodput at the default level and at each source's.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

from supernode.reliability.montecarlo import RESTART
from supernode.reliability.rates import DAY_S, ComponentRate, rates_file

#: How the default combines the sources.
COMBINED = "geometric mean"


def level_sources() -> list[tuple[str, float]]:
    """(name, failures per 1,000 node-days) of each published level."""
    lv = rates_file().level
    names = lv.names or [f"source {i + 1}" for i in range(len(lv.failures_per_1000_node_days))]
    return list(zip(names, lv.failures_per_1000_node_days, strict=True))


def default_level() -> float:
    """The default level (failures per 1,000 node-days): the sources' geometric mean."""
    values = [v for _, v in level_sources()]
    return math.exp(sum(math.log(v) for v in values) / len(values))


def scaled_components(rates: dict[str, ComponentRate]) -> set[str]:
    """Components whose rate follows the level: sourced (not ``fixed``), not overridden."""
    spec = rates_file().components
    return {n for n, r in rates.items() if n in spec and spec[n].basis != "fixed"
            and r.source != "cluster override"}


def level_sensitivity(scenario: Any, rates: dict[str, ComponentRate], times: Any
                      ) -> dict[str, Any]:
    """The default level, its sources, and interruptions per day and analytic goodput at
    each (``scenario``: a :class:`~supernode.reliability.scenario.Scenario`)."""
    from supernode.reliability.scenario import analytic_figures

    base = default_level()
    follow = scaled_components(rates)
    spec = scenario.spec
    rows = []
    for name, value in [("default", base), *level_sources()]:
        factor = value / base
        classes = tuple(replace(c, rate_per_s=c.rate_per_s * factor) if c.name in follow
                        else c for c in spec.classes)
        a = analytic_figures(classes, times, scenario.checkpoint.blocking_s,
                             scenario.checkpoint.min_interval_s, scenario.design.interval_s,
                             spec.horizon_s, scenario.design.spare_hosts)
        stops = sum(c.rate_per_s for c in classes if c.kind == RESTART) * DAY_S
        rows.append({"name": name, "failures_per_1000_node_days": value, "factor": factor,
                     "interruptions_per_day": stops, "analytic_goodput": a.goodput})
    return {"failures_per_1000_node_days": base, "combined": COMBINED,
            "source": rates_file().level.source, "at": rows}

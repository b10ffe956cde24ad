"""The reliability result: every figure ``supernode reliability`` shows, and the design rules.

:class:`ReliabilityResult` ``.to_dict()`` is the ``--json`` output and the interface of the
design report's reliability section (docs/reliability.md, "Library interface"); its
:meth:`~ReliabilityResult.rule_checks` are the design rules ``recovery_time_objective`` (RTO
<= 10 min) and ``hot_standby_bandwidth`` (>= 10 %) with their measured values, under the
ids and default thresholds of the rule pack (docs/rules.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from supernode.reliability.level import level_sensitivity
from supernode.reliability.montecarlo import METRICS
from supernode.reliability.rates import DAY_S
from supernode.reliability.recovery import RecoveryTimes, recovery_objective
from supernode.reliability.standby import HOT_STANDBY_OBJECTIVE, HotStandby

HISTOGRAM_BINS = 40
#: Rule ids of the design rules this result feeds (supernode.rules.reliability_rules).
RTO_RULE, HOT_STANDBY_RULE = "recovery_time_objective", "hot_standby_bandwidth"


@dataclass(frozen=True)
class WhatIf:
    """Goodput with one design knob changed (``delta_vs_base``: paired Monte Carlo)."""

    knob: str
    current: float
    value: float
    analytic_goodput: float
    monte_carlo_goodput: float
    delta_vs_base: float
    interval_s: float

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready row."""
        return dict(self.__dict__)


def mc_summary(scenario: Any, rows: np.ndarray) -> dict[str, Any]:
    """Distribution of goodput at the chosen interval, the grid's means, run metrics."""
    grid = list(scenario.spec.intervals_s)
    goodput = rows[:, len(METRICS):]
    chosen = goodput[:, grid.index(scenario.interval_s)]
    means = goodput.mean(axis=0)
    n = rows.shape[0]
    best = int(np.argmax(means))
    counts, edges = np.histogram(chosen, bins=HISTOGRAM_BINS)
    return {
        "runs": n, "seed": scenario.spec.seed, "weibull_shape": scenario.spec.weibull_shape,
        "horizon_s": scenario.spec.horizon_s,
        "goodput": {"mean": float(chosen.mean()),
                    "std": float(chosen.std(ddof=1)) if n > 1 else 0.0,
                    "standard_error": float(chosen.std(ddof=1) / np.sqrt(n)) if n > 1 else 0.0,
                    **{f"p{q}": float(np.percentile(chosen, q)) for q in (5, 50, 95)},
                    "min": float(chosen.min()), "max": float(chosen.max())},
        "histogram": {"counts": counts.tolist(), "edges": edges.tolist()},
        "interval_grid_s": grid, "goodput_by_interval": means.tolist(),
        "best_interval_s": grid[best], "best_goodput": float(means[best]),
        "per_run_mean": {m: float(rows[:, i].mean()) for i, m in enumerate(METRICS)},
        "goodput_samples": chosen.tolist(),
    }


@dataclass
class ReliabilityResult:
    """Everything assessed for one job (SI units inside; see :meth:`to_dict`)."""

    cluster: str
    workload: str
    job: Any
    inventory: Any
    rates: dict
    scenario: Any
    times: RecoveryTimes
    options: Any
    monte_carlo: dict[str, Any]
    what_if: list[WhatIf] = field(default_factory=list)
    standby: HotStandby | None = None

    def interruptions(self) -> dict[str, Any]:
        """Failures and job interruptions per day, by component."""
        failures: dict[str, float] = {}
        stops: dict[str, float] = {}
        for m in self.scenario.modes:
            failures[m.component] = failures.get(m.component, 0.0) + m.rate_per_s * DAY_S
            if m.effect == "interrupt":
                stops[m.component] = stops.get(m.component, 0.0) + m.rate_per_s * DAY_S
        # rates no public fleet statistic backs (an ASSUMPTION in the data file, not
        # overridden by the cluster): their share of the interruptions is shown
        assumed = sorted(c for c in failures if c in self.rates
                         and self.rates[c].assumption
                         and self.rates[c].source != "cluster override")
        assumed_stops = sum(stops.get(c, 0.0) for c in assumed)
        total = sum(stops.values())
        return {"failures_per_day": sum(failures.values()),
                "interruptions_per_day": total,
                "failures_per_day_by_component": failures,
                "interruptions_per_day_by_component": stops,
                "job_mtbf_s": self.scenario.mtbf_s,
                "assumed_rates": {"components": assumed,
                                  "interruptions_per_day": assumed_stops,
                                  "share": assumed_stops / total if total > 0 else 0.0}}

    def recovery(self) -> dict[str, Any]:
        """Recovery paths and the 10-minute objective."""
        return {**recovery_objective(self.times, self.scenario.checkpoint.read_s),
                "times": self.times.to_dict(), "policy": self.scenario.design.recovery,
                "mean_spare_wait_s_per_run": self.monte_carlo["per_run_mean"]["spare_wait_s"]}

    def hot_standby(self) -> dict[str, Any]:
        """Hot-standby share against seed 001's 10 %, where it comes from (``topology``:
        spare switch ports, ``stated`` in the cluster, ``option``: a what-if, ``none``), and
        the largest single scale-up loss."""
        # one failed link or chip, before the standby: from the modes (a two-level domain's
        # spine chips too) and from the domain itself (HGX counts its board's in ``gpu``)
        losses = [m.domain_loss for m in self.scenario.modes if m.domain_loss > 0]
        if self.standby is not None and self.standby.largest_single_loss > 0:
            losses.append(self.standby.largest_single_loss)
        share = self.scenario.design.hot_standby_share
        worst = max(losses, default=0.0)
        origin = self.standby.to_dict() if self.standby else {"source": "option"}
        return {"share": share, "source": origin["source"],
                "measured_share": origin.get("measured_share"), "tier": origin.get("tier"),
                "objective": HOT_STANDBY_OBJECTIVE,
                "meets_objective": share >= HOT_STANDBY_OBJECTIVE,
                "largest_single_failure_loss": worst,
                "covers_single_failure": share >= worst if losses else True}

    def checkpoint(self) -> dict[str, Any]:
        """Checkpoint size, cost, and the Young, Daly and simulated intervals."""
        s = self.scenario
        return {**s.checkpoint.to_dict(), "young_interval_s": s.young_s,
                "daly_interval_s": s.daly_s, "chosen_interval_s": s.interval_s,
                "simulated_best_interval_s": self.monte_carlo["best_interval_s"],
                "mtbf_s": s.mtbf_s}

    def rule_checks(self) -> list[dict[str, Any]]:
        """The design rules this result feeds, at their default thresholds: RTO <= 10 min
        (``recovery_time_objective``), hot standby >= 10 % (``hot_standby_bandwidth``)."""
        rec, hot = self.recovery(), self.hot_standby()
        return [{"id": RTO_RULE, "metric": "rto_s", "value": rec["rto_s"],
                 "threshold": rec["objective_s"], "comparison": "<=",
                 "passes": rec["meets_objective"], "source": "seed 001 §4.1"},
                {"id": HOT_STANDBY_RULE, "metric": "hot_standby_share",
                 "value": hot["share"], "threshold": HOT_STANDBY_OBJECTIVE, "comparison": ">=",
                 "passes": hot["meets_objective"], "source": "seed 001 §4.1"}]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready result with stable keys (docs/reliability.md lists every one)."""
        j, s = self.job, self.scenario
        mc = dict(self.monte_carlo)
        mc.pop("goodput_samples", None)
        return {
            "cluster": self.cluster, "workload": self.workload,
            "job": {"gpus": j.nominal.gpus, "hosts": self.inventory.hosts,
                    "plan": j.nominal.plan, "step_time_s": j.nominal.step_time_s,
                    "tokens_per_s": j.nominal.tokens_per_s},
            "design": {**s.design.__dict__},
            "inventory": [{"component": u.component, "location": u.location,
                           "count": u.count} for u in self.inventory.units],
            "rates": {n: {"failures_per_unit_year": r.failures_per_unit_year,
                          "repair_s": r.repair_s, "per": r.per, "source": r.source,
                          "assumption": r.assumption}
                      for n, r in self.rates.items() if n in self.inventory.components()},
            "interruptions": self.interruptions(),
            "level": level_sensitivity(s, self.rates, self.times),
            "blast_radius": [m.to_dict() for m in s.modes],
            "degraded_modes": [{"component": m.component, "location": m.location,
                                "effect": m.effect, "speed": m.speed,
                                "step_time_s": j.nominal.step_time_s / m.speed if m.speed
                                else None, "repair_s": m.repair_s}
                               for m in s.modes if m.effect in ("degrade", "shrink",
                                                                "absorbed") or m.speed < 1],
            "checkpoint": self.checkpoint(), "recovery": self.recovery(),
            "goodput": {"analytic": s.analytic_goodput, "degraded_share": s.degraded_share,
                        "spare_wait_share": s.spare_wait_share,
                        "monte_carlo": mc},
            "hot_standby": self.hot_standby(), "what_if": [w.to_dict() for w in self.what_if],
            "rules": self.rule_checks(),
        }

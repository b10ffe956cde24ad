"""``results.json`` -> ``reliability``: what fails and what each failure does — the
job's inventory, failure rates, the failure level, interruptions, blast radius and
degraded modes (the failure half of :mod:`.reliability`). SI units; shares are
fractions."""

from __future__ import annotations

from supernode.design.results.base import ResultModel, field


class InventoryRow(ResultModel):
    """Units of one component at one location."""

    component: str = field("Component (gpu, nic, leaf_switch, ...).")
    location: str = field("Where it sits.")
    count: float = field("Units in the job.")


class FailureRate(ResultModel):
    """The failure rate of one component."""

    failures_per_unit_year: float = field("Failures per unit and year.")
    repair_s: float = field("Time to repair (s).")
    per: str = field("What a unit is.")
    source: str = field("Where the rate comes from.")
    assumption: str | None = field("The assumption made, or null.")


class AssumedRates(ResultModel):
    """The components whose default rate no public fleet statistic backs."""

    components: list[str] = field("Components with an assumed rate (data file).")
    interruptions_per_day: float = field("Their job interruptions per day.")
    share: float = field("Their share of the job interruptions.")


class LevelRow(ResultModel):
    """The answer at one failure level."""

    name: str = field("default, or the cluster the level was measured on (RSC-1, RSC-2).")
    failures_per_1000_node_days: float = field("Job-interrupting failures per 1,000 "
                                               "node-days.")
    factor: float = field("Scale of the sourced rates against the default level.")
    interruptions_per_day: float = field("Job interruptions per day at this level.")
    analytic_goodput: float = field("Analytic goodput at this level.")


class FailureLevel(ResultModel):
    """The fleet failure level and how the answer moves between its sources."""

    failures_per_1000_node_days: float = field("Default level (per 1,000 node-days).")
    combined: str = field("How the sources are combined (geometric mean).")
    source: str = field("The publication.")
    at: list[LevelRow] = field("The answer at the default level and at each source's.")


class Interruptions(ResultModel):
    """Failures and job interruptions per day."""

    failures_per_day: float = field("Failures per day.")
    interruptions_per_day: float = field("Job interruptions per day.")
    failures_per_day_by_component: dict[str, float] = field("Failures per day by component.")
    interruptions_per_day_by_component: dict[str, float] = field(
        "Interruptions per day by component.")
    job_mtbf_s: float | None = field("Mean time between job interruptions (s); null when "
                                     "nothing interrupts the job.")
    assumed_rates: AssumedRates = field("Interruptions from rates with no public source.")


class BlastRadiusRow(ResultModel):
    """What one failure of a component does to the job."""

    component: str = field("Component.")
    location: str = field("Where it sits.")
    units: float = field("Units in the job.")
    failures_per_day: float = field("Failures per day, every unit.")
    repair_s: float = field("Time to repair (s).")
    detection: str = field("How it is detected.")
    takes_down: str = field("What it takes down.")
    gpus_out: int = field("GPUs out.")
    hosts_out: int = field("Hosts out.")
    effect: str = field("interrupt, degrade, shrink or absorbed.")
    bandwidth_loss: float = field("Share of the tier's bandwidth lost.")
    tier: str | None = field("Tier whose bandwidth is lost, or null.")
    speed: float = field("Throughput while degraded, over nominal.")
    netsim_spec: str | None = field("The failure as a simulator spec, or null.")
    notes: list[str] = field("Notes.")
    domain_loss: float = field("Share of its scale-up domain's bandwidth the unit carried "
                               "(before hot standby); 0 off the scale-up tier.")


class DegradedMode(ResultModel):
    """A failure the job runs through, slower."""

    component: str = field("Component.")
    location: str = field("Where it sits.")
    effect: str = field("degrade, shrink or absorbed.")
    speed: float = field("Throughput over nominal.")
    step_time_s: float | None = field("Step time while degraded (s); null when stopped.")
    repair_s: float = field("Time to repair (s).")

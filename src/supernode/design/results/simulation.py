"""``results.json`` -> ``simulation``: one iteration of the reviewed plan on the fabric
(``supernode simulate --json``, :meth:`~supernode.netsim.scenario.SimResult.to_dict`) plus
the report's heatmap and timeline summaries (:mod:`supernode.design.simulation`). Seconds,
bytes; utilisations are shares of a link's capacity."""

from __future__ import annotations

from supernode.design.results.base import ResultModel, field, optional
from supernode.design.results.planning import StepBreakdown
from supernode.design.results.straddle import StraddleCheck
from supernode.spec.plan import ParallelPlan


class SimulatedJob(ResultModel):
    """One simulated job: its step time against the analytic estimate."""

    name: str = field("Job name.")
    step_time_s: float = field("Simulated step time (s).")
    estimate_step_time_s: float = field("The analytic estimate (s).")
    slowdown_vs_estimate: float = field("Simulated over estimated step time.")
    gpus: int = field("GPUs of the job.")
    plan: ParallelPlan = field("The plan simulated (its fields that are set).")
    estimate_breakdown_s: StepBreakdown = field("The estimate's step by part (s).")


class HotFlow(ResultModel):
    """One flow label that loaded a hot link."""

    label: str = field("Flow label (job: dimension collective).")
    bytes: float = field("Bytes it put on the link.")
    share: float = field("Its share of the link's listed bytes.")


class HotLink(ResultModel):
    """A link hot for part of the iteration, with the flows that loaded it."""

    link: str = field("Link name.")
    tier: str = field("Its tier.")
    utilization: float = field("Time-averaged utilisation.")
    peak: float = field("Peak utilisation.")
    hot_share: float = field("Share of the run it was hot.")
    bytes: float = field("Bytes it carried.")
    flows: list[HotFlow] = field("The flows that loaded it most (at most 5).")


class TierUtilization(ResultModel):
    """Time-averaged utilisation of the links of one tier in service."""

    links: int = field("Links in service.")
    mean: float = field("Mean utilisation.")
    p50: float = field("Median utilisation.")
    p99: float = field("99th percentile.")
    max: float = field("Largest.")
    peak: float = field("Largest instantaneous utilisation.")


class CollectiveTimes(ResultModel):
    """Completion times of one kind of collective (s)."""

    count: int = field("Collectives completed.")
    mean_s: float = field("Mean (s).")
    p50_s: float = field("Median (s).")
    p90_s: float = field("90th percentile (s).")
    p99_s: float = field("99th percentile (s).")
    max_s: float = field("Longest (s).")
    total_s: float = field("Sum (s).")


class SimOptions(ResultModel):
    """The simulator's knobs."""

    seed: int = field("ECMP hash seed.")
    routing: str = field("Scale-out routing.")
    scale_up_routing: str = field("Scale-up routing.")
    rail_aligned: bool = field("Rail-aligned routing.")
    aggregate: bool = field("Replica flows aggregated.")
    mode: str = field("Collective decomposition mode.")
    efficiency: bool = field("Protocol efficiency applied.")


class HeatmapTier(ResultModel):
    """Utilisation per time bin of one tier's busiest links (at most 16)."""

    links: list[str] = field("Link names, most bytes first.")
    edges_s: list[float] = field("Bin edges (s).")
    utilization: list[list[float]] = field("One row per link: utilisation per bin.")
    hot: list[bool] = field("Per link: hot for part of the run.")


class TimelineLane(ResultModel):
    """Busy intervals of one parallel dimension (or compute), merged across lanes."""

    intervals: list[list[float]] = field("[start, end] pairs (s), at most 400 + 1 (a "
                                         "group row: the exact union of its parts').")
    busy_s: float = field("Time covered (s).")
    busy_share: float = field("Time covered over the run.")
    transfers: int = field("Transfers or delays merged.")
    parts: list[str] | None = optional("A group row's part rows (communication: every "
                                       "communication row); absent on a part row.")


class Timeline(ResultModel):
    """The iteration's timeline per parallel dimension."""

    duration_s: float = field("Simulated duration (s).")
    lanes: dict[str, TimelineLane] = field("Per category (compute, tp, dp, ...).")


class RoutingWhatIf(ResultModel):
    """The same iteration with adaptive routing (run when the engines differ by more than
    10 % or a link is over the line)."""

    routing: str = field("Routing of the what-if.")
    step_time_s: float = field("Simulated step time with it (s).")
    busiest_link_utilization: float = field("Busiest link's time-averaged utilisation.")


class SimulationResults(ResultModel):
    """One simulated iteration of the reviewed plan (SI units)."""

    step_time_s: float = field("Slowest job's step time (s).")
    estimate_step_time_s: float | None = field("Its analytic estimate (s).")
    jobs: list[SimulatedJob] = field("Each job simulated.")
    hot_links: list[HotLink] = field("Hot links, most time hot first (at most 20).")
    hot_link_counts: dict[str, int] = field("Hot links per tier.")
    link_utilization: dict[str, TierUtilization] = field("Per tier.")
    collectives: dict[str, CollectiveTimes] = field("Per kind of collective.")
    events: int = field("Simulator events.")
    flow_classes: int = field("Flow classes.")
    max_min_solves: int = field("Max-min fair-share solves.")
    wall_time_s: float = field("Wall time of the simulation (s).")
    simulated_time_s: float = field("Simulated duration (s).")
    failures: list[str] = field("Failures applied.")
    options: SimOptions = field("The simulator's knobs.")
    notes: list[str] = field("Notes of the run.")
    heatmap: dict[str, HeatmapTier] = field("Per tier: the busiest links' utilisation.")
    timeline_by_dimension: Timeline = field("Busy intervals per parallel dimension.")
    routing_what_if: RoutingWhatIf | None = field("The adaptive-routing what-if, or null.")
    straddle_check: StraddleCheck | None = optional("A straddling best plan simulated "
                                                    "against the best plan inside.")

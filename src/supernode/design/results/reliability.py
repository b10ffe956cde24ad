"""``results.json`` -> ``reliability``: failures, recovery and goodput of the reviewed plan
(``supernode reliability --json``,
:meth:`~supernode.reliability.result.ReliabilityResult.to_dict`, docs/reliability.md). SI
units; goodput and shares are fractions; a non-finite figure (the MTBF of a job nothing
stops) is null."""

from __future__ import annotations

from supernode.design.results.base import ResultModel, field
from supernode.design.results.failures import (
    BlastRadiusRow,
    DegradedMode,
    FailureLevel,
    FailureRate,
    Interruptions,
    InventoryRow,
)
from supernode.spec.plan import ParallelPlan


class ReliabilityJob(ResultModel):
    """The job assessed."""

    gpus: int = field("GPUs of the job.")
    hosts: int = field("Hosts it runs on.")
    plan: ParallelPlan = field("The plan, with the knobs the estimate chose.")
    step_time_s: float = field("Nominal step time (s).")
    tokens_per_s: float = field("Nominal throughput (tokens/s).")


class RecoveryDesign(ResultModel):
    """The recovery design knobs (bandwidths aggregate, bytes/s)."""

    spare_hosts: int = field("Spare hosts ready.")
    hot_standby_share: float = field("Hot-standby share of the scale-up bandwidth.")
    write_bytes_per_s: float = field("Checkpoint write bandwidth (bytes/s).")
    read_bytes_per_s: float = field("Checkpoint read bandwidth (bytes/s).")
    checkpoint_mode: str = field("sync or async checkpoints.")
    recovery: str = field("Recovery policy: restart or shrink.")
    dual_homed: bool = field("True when hosts are dual-homed to the fabric.")
    interval_s: float | None = field("Stated checkpoint interval (s), or null (Daly's).")


class Checkpoint(ResultModel):
    """Checkpoint size, cost and the intervals."""

    size_bytes: float = field("One checkpoint (bytes).")
    mode: str = field("sync or async.")
    write_bytes_per_s: float = field("Write bandwidth (bytes/s).")
    read_bytes_per_s: float = field("Read bandwidth (bytes/s).")
    write_s: float = field("Time to write one (s).")
    read_s: float = field("Time to read one (s).")
    blocking_s: float = field("Training stop per checkpoint (s).")
    min_interval_s: float = field("Shortest interval (an async write must finish) (s).")
    young_interval_s: float = field("Young's interval (s).")
    daly_interval_s: float = field("Daly's interval (s).")
    chosen_interval_s: float = field("The interval used (s).")
    simulated_best_interval_s: float = field("The Monte Carlo's best interval (s).")
    mtbf_s: float | None = field("Job MTBF (s); null when nothing interrupts the job.")


class RecoveryPaths(ResultModel):
    """Seconds to resume after one failure, per path."""

    restart_hardware: float = field("Restart on a spare host (s).")
    restart_software: float = field("Restart in place (s).")
    shrink: float = field("Shrink data parallelism (s).")


class RecoveryTimes(ResultModel):
    """Seconds of each recovery step."""

    detection_s: float = field("Detection (s).")
    diagnosis_s: float = field("Diagnosis (s).")
    reschedule_s: float = field("Rescheduling (s).")
    warmup_s: float = field("Warm-up (s).")
    shrink_s: float = field("Shrinking (s).")
    failover_s: float = field("Failover (s).")


class Recovery(ResultModel):
    """Recovery paths against the 10-minute objective."""

    paths_s: RecoveryPaths = field("Per path (s).")
    rto_s: float = field("Time to resume after one failure: the slower restart path (s).")
    objective_s: float = field("The objective (s).")
    meets_objective: bool = field("True when rto_s is within it.")
    checkpoint_load_s: float = field("Loading the checkpoint (s).")
    note: str = field("What the times assume.")
    times: RecoveryTimes = field("The steps (s).")
    policy: str = field("restart or shrink.")
    mean_spare_wait_s_per_run: float = field("Mean wait for a spare per run (s).")


class GoodputStats(ResultModel):
    """Distribution of the Monte Carlo goodput at the chosen interval."""

    mean: float = field("Mean.")
    std: float = field("Standard deviation.")
    standard_error: float = field("Standard error of the mean.")
    p5: float = field("5th percentile.")
    p50: float = field("Median.")
    p95: float = field("95th percentile.")
    min: float = field("Smallest.")
    max: float = field("Largest.")


class Histogram(ResultModel):
    """A histogram: counts per bin and the bin edges."""

    counts: list[int] = field("Runs per bin.")
    edges: list[float] = field("Bin edges.")


class RunMeans(ResultModel):
    """Means per Monte Carlo run."""

    interruptions: float = field("Interruptions.")
    degradations: float = field("Degradations.")
    shrinks: float = field("Shrinks.")
    downtime_s: float = field("Downtime (s).")
    spare_wait_s: float = field("Waiting for a spare (s).")


class MonteCarlo(ResultModel):
    """The seeded Monte Carlo of the run."""

    runs: int = field("Runs.")
    seed: int = field("Seed.")
    weibull_shape: float = field("Shape of the failure-time law.")
    horizon_s: float = field("Length of one run (s).")
    goodput: GoodputStats = field("Goodput at the chosen interval.")
    histogram: Histogram = field("Its histogram.")
    interval_grid_s: list[float] = field("Intervals scored (s).")
    goodput_by_interval: list[float] = field("Mean goodput per interval.")
    best_interval_s: float = field("The best interval (s).")
    best_goodput: float = field("Its mean goodput.")
    per_run_mean: RunMeans = field("Means per run.")


class Goodput(ResultModel):
    """Goodput: analytic and Monte Carlo."""

    analytic: float = field("Daly's model, less degraded running.")
    degraded_share: float = field("Share of time lost to degraded running.")
    spare_wait_share: float = field("Expected wait for spare hosts per unit of wall time "
                                    "(the analytic goodput is divided by 1 + this).")
    monte_carlo: MonteCarlo = field("The Monte Carlo.")


class HotStandby(ResultModel):
    """Hot-standby share against seed 001's 10 %."""

    share: float = field("Share in use (fraction of the scale-up bandwidth).")
    source: str = field("stated, topology, option or none.")
    measured_share: float | None = field("The topology's own figure, or null.")
    tier: str | None = field("The scale-up switch tier measured, or null.")
    objective: float = field("The objective (0.1).")
    meets_objective: bool = field("True when share reaches it.")
    largest_single_failure_loss: float = field("Largest share one scale-up failure removes.")
    covers_single_failure: bool = field("True when share covers it.")


class WhatIf(ResultModel):
    """Goodput with one design knob changed (paired Monte Carlo)."""

    knob: str = field("The knob.")
    current: float = field("Its value now.")
    value: float = field("The value tried.")
    analytic_goodput: float = field("Analytic goodput with it.")
    monte_carlo_goodput: float = field("Monte Carlo goodput with it.")
    delta_vs_base: float = field("Goodput change on the same runs.")
    interval_s: float = field("The interval with it (s).")


class ReliabilityRuleCheck(ResultModel):
    """A design rule this result feeds, at its default threshold."""

    id: str = field("Rule id.")
    metric: str = field("The figure checked.")
    value: float = field("Its value.")
    threshold: float = field("The limit.")
    comparison: str = field("<= or >=.")
    passes: bool = field("True when it holds.")
    source: str = field("Seed section.")


class PolicyFigures(ResultModel):
    """One recovery policy's figures (the decision record's options)."""

    policy: str = field("restart or shrink.")
    rto_s: float = field("Recovery-time objective of the policy (s).")
    recovery_s: float = field("One recovery on the policy's path (s).")
    analytic_goodput: float = field("Analytic goodput (share of wall time training).")
    monte_carlo_goodput: float = field("Monte Carlo goodput (share of wall time training).")
    standard_error: float = field("Standard error of the Monte Carlo mean.")
    interval_s: float = field("Checkpoint interval of the policy (s).")


class RecoveryDecision(ResultModel):
    """The review's one recovery policy: the one every section, the verdict and decision D6
    use."""

    policy: str = field("restart or shrink.")
    why: str = field("Why: stated by the cluster file, or the better Monte Carlo goodput.")
    stated: bool = field("True when the cluster file states it.")
    alternative: PolicyFigures = field("The other policy's figures.")


class ReliabilityResults(ResultModel):
    """Everything assessed for the reviewed plan's job (SI units)."""

    cluster: str = field("Cluster name.")
    workload: str = field("Workload name.")
    job: ReliabilityJob = field("The job.")
    design: RecoveryDesign = field("The recovery design knobs.")
    inventory: list[InventoryRow] = field("Units per component and location.")
    rates: dict[str, FailureRate] = field("Failure rate per component.")
    interruptions: Interruptions = field("Failures and interruptions per day.")
    level: FailureLevel = field("The failure level and the answer at each source's.")
    blast_radius: list[BlastRadiusRow] = field("What each failure does.")
    degraded_modes: list[DegradedMode] = field("The failures the job runs through.")
    checkpoint: Checkpoint = field("Checkpoint size, cost, intervals.")
    recovery: Recovery = field("Recovery paths and the objective.")
    goodput: Goodput = field("Goodput.")
    hot_standby: HotStandby = field("Hot standby.")
    what_if: list[WhatIf] = field("Goodput with one knob changed.")
    rules: list[ReliabilityRuleCheck] = field("The design rules it feeds.")
    recovery_decision: RecoveryDecision = field("The one recovery policy of the review.")


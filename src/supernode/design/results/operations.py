"""``results.json`` -> ``monitoring`` (the alert rules generated for the cluster,
:mod:`supernode.design.monitoring`), ``scheduling`` (the placement replay,
:mod:`supernode.design.scheduling`) and ``artefacts`` (the files written beside the report,
:mod:`supernode.design.artefacts`). Seconds, bytes; utilisations and shares are
fractions."""

from __future__ import annotations

from typing import Literal

from supernode.design.results.base import ResultModel, field


class Alert(ResultModel):
    """One generated alert rule."""

    id: str = field("Alert name.")
    seed: str = field("Seed section it comes from.")
    severity: str = field("info, warning or critical.")
    for_s: int = field("How long the condition holds before it fires (s).")
    scope: str = field("What one alert is about (gpu, link, rack, ...).")
    component: str = field("The component watched.")
    summary: str = field("The summary annotation (Prometheus template).")
    expression: str = field("The PromQL expression.")
    text: str = field("The summary with its template actions as <label> and <value>.")
    description: str = field("The description annotation.")
    runbook: str = field("What to do when it fires.")


class AlertCounts(ResultModel):
    """Alerts per severity."""

    critical: int = field("Critical alerts.")
    warning: int = field("Warnings.")
    info: int = field("Info alerts.")


class MonitoringResults(ResultModel):
    """The alert rules generated for the cluster, with counts and notes."""

    alerts: list[Alert] = field("Every alert rule, in group order.")
    count: int = field("Alert rules.")
    by_severity: AlertCounts = field("Per severity.")
    recording_rules: int = field("Recording rules.")
    notes: list[str] = field("Rules left out, and why.")
    racks_per_cdu: int = field("Racks labelled with one CDU (the facility's cooling "
                               "topology; 0 when no rack is liquid-cooled).")
    cdu_labels: int = field("Distinct CDU labels the coolant alerts use.")


class TraceSource(ResultModel):
    """How the replayed trace was made (:func:`supernode.design.scheduling.design_trace`)."""

    jobs: int = field("Jobs replayed.")
    trace_jobs: int = field("Jobs in the bundled Philly trace.")
    every_nth: float = field("Philly jobs per job kept.")
    philly_capped_jobs: int = field("Philly jobs larger than the cluster.")
    philly_capped_gpu_seconds_share: float = field("Share of GPU-seconds capping removes.")
    max_capped_share: float = field("Largest share allowed before a synthetic trace.")
    load_asked: float = field("Offered load asked for.")
    jobs_per_gpu: int = field("Jobs per GPU of the cluster.")
    min_jobs: int = field("Fewest jobs.")
    max_jobs: int = field("Most jobs.")
    kind: Literal["philly", "synthetic"] = field("The trace replayed.")
    reason: str = field("Why that one.")
    trace: str = field("Trace name.")
    time_factor: float = field("Arrival times multiplied by this.")
    load: float = field("Offered load reached.")
    window_s: float = field("Arrival window (s).")
    gpu_seconds: float = field("GPU-seconds of the jobs.")


class SeedReference(ResultModel):
    """The seed's figures for topology-aware placement (seed 001 §4.2)."""

    section: str = field("Seed section.")
    before: float = field("Variation between tenants without it.")
    after: float = field("With it.")


class PolicyKind(ResultModel):
    """One policy compared and whether it sees the topology."""

    policy: str = field("Policy name.")
    kind: Literal["topology-blind", "topology-aware"] = field("Whether it sees the topology.")
    description: str = field("What it does.")


class Comparison(ResultModel):
    """The topology-blind against the topology-aware policy."""

    blind: str = field("The topology-blind policy.")
    aware: str = field("The topology-aware policy.")
    blind_index: int = field("Its index in policies.")
    aware_index: int = field("Its index in policies.")
    goodput_gain: float = field("Goodput utilisation gained by the aware one.")
    tp_crossing_jobs_avoided: int = field("TP jobs no longer across supernodes.")
    queue_ratio: float | None = field("Blind over aware mean queue, or null.")


class ScheduleCluster(ResultModel):
    """The cluster as the scheduler sees it."""

    name: str = field("Cluster name.")
    gpus: int = field("GPUs.")
    hosts: int = field("Hosts.")
    supernodes: int = field("Supernodes.")
    supernode_gpus: int = field("GPUs per supernode.")
    port_groups: int = field("Leaf port groups.")
    pods: int = field("Pods.")
    fabric_tiers: int = field("Fabric tiers.")
    oversubscription: list[float] = field("Per fabric tier.")


class TraceSummary(ResultModel):
    """Counts and spans of the trace replayed."""

    name: str = field("Trace name.")
    format: str = field("Trace format.")
    jobs: int = field("Jobs.")
    gpu_seconds: float = field("GPU-seconds.")
    submit_span_s: float = field("Submit span (s).")
    max_gpus: int = field("Largest job (GPUs).")
    skipped_rows: int = field("Rows skipped.")
    ignored_rows: int = field("Rows ignored.")


class EngineOptions(ResultModel):
    """Knobs of the scheduling engine."""

    backfill_depth: int = field("Jobs backfilled past the head of the queue.")
    stretch: bool = field("True when a slowed job runs longer.")
    preempt_after_s: float = field("Queue time before preemption (s).")
    checkpoint_interval_s: float = field("Checkpoint interval of preempted jobs (s).")
    restart_s: float = field("Restart cost of a preempted job (s).")
    shapes: str = field("How job TP sizes were chosen: memory-tp or uniform-tp.")
    pricing: str = field("How a split placement is priced: per-group or all-split.")


class Shapes(ResultModel):
    """The job shapes drawn."""

    models: dict[str, int] = field("Jobs per model.")
    tp: dict[str, int] = field("Jobs per TP size.")
    step_times_estimated: int = field("Step-time estimates made.")


class PolicyMetrics(ResultModel):
    """One policy's results on the trace."""

    policy: str = field("Policy name.")
    utilisation: float = field("GPU-seconds held over the cluster's.")
    goodput_utilisation: float = field("Useful GPU-seconds over the cluster's.")
    mean_queue_s: float = field("Mean queue time (s).")
    mean_queue_high_priority_s: float = field("Mean queue time, high priority (s).")
    p50_queue_s: float = field("Median queue time (s).")
    p95_queue_s: float = field("95th percentile queue time (s).")
    max_queue_s: float = field("Longest queue time (s).")
    fragmentation: float = field("Mean share of GPUs free but unusable.")
    tp_crossing_share: float = field("Share of TP jobs across supernodes.")
    tp_jobs: int = field("TP jobs.")
    tp_crossing_jobs: int = field("TP jobs across supernodes.")
    multi_supernode_jobs: int = field("Jobs across supernodes.")
    mean_slowdown: float = field("Mean slowdown of multi-GPU jobs.")
    p95_slowdown: float = field("95th percentile slowdown.")
    max_slowdown: float = field("Largest slowdown.")
    slowdown_spread: float = field("Spread of slowdowns between tenants.")
    window_s: float = field("Measurement window (s).")
    makespan_s: float = field("First submit to last end (s).")
    preemptions: int = field("Preemptions.")
    restart_gpu_s: float = field("GPU-seconds lost to restarts.")
    immediate_kill_loss_gpu_s: float = field("GPU-seconds lost to immediate kills.")
    reserved_idle_gpu_s: float = field("GPU-seconds reserved and idle.")
    wall_time_s: float = field("Wall time of the replay (s).")
    cpu_time_s: float = field("CPU time of the replay (s).")


class PolicyTimeline(ResultModel):
    """One policy's utilisation, queue and fragmentation over time."""

    t_s: list[float] = field("Sample times (s).")
    utilisation: list[float] = field("Share of GPUs busy.")
    queued_jobs: list[int] = field("Jobs queued.")
    fragmentation: list[float] = field("Share of GPUs fragmented.")


class SkippedRow(ResultModel):
    """A trace row skipped."""

    line: int = field("Line (header = 1).")
    column: str = field("Column.")
    message: str = field("What is wrong.")


class ScheduleRun(ResultModel):
    """The replay (``supernode schedule --json``, docs/scheduler.md)."""

    cluster: ScheduleCluster = field("The cluster.")
    trace: TraceSummary = field("The trace.")
    seed: int = field("Seed of the shapes and the random policy.")
    options: EngineOptions = field("Engine knobs.")
    shapes: Shapes = field("Job shapes.")
    policies: list[PolicyMetrics] = field("Per policy.")
    timelines: dict[str, PolicyTimeline] = field("Per policy.")
    skipped_rows: list[SkippedRow] = field("Trace rows skipped.")
    notes: list[str] = field("Notes.")


class SlowdownQuantiles(ResultModel):
    """Quantiles of the multi-GPU jobs' slowdowns, per policy."""

    q: list[float] = field("The quantiles (0 to 1).")
    by_policy: dict[str, list[float]] = field("Per policy, the slowdown at each.")


class SchedulingResults(ResultModel):
    """Topology-blind against topology-aware placement of a shared cluster's jobs."""

    trace_source: TraceSource = field("How the trace was made.")
    seed_reference: SeedReference = field("The seed's figures.")
    policies: list[PolicyKind] = field("The policies compared.")
    comparison: Comparison = field("Blind against aware.")
    schedule: ScheduleRun = field("The replay.")
    slowdown_quantiles: SlowdownQuantiles = field("Slowdown distributions.")
    notes: list[str] = field("Notes.")


class ArtefactFile(ResultModel):
    """One file written beside the report."""

    path: str = field("Path inside the design folder.")
    group: Literal["exports", "monitoring"] = field("exports/ or monitoring/.")
    format: str = field("Export format, or monitor-rules.")
    loaded_by: str = field("What loads it.")
    bytes: int = field("Size (bytes).")
    sha256: str = field("SHA-256 of its bytes (hex).", pattern=r"^[0-9a-f]{64}$")


class NotApplicable(ResultModel):
    """An export format that does not apply to the cluster."""

    format: str = field("The format.")
    reason: str = field("Why.")


class ArtefactsListing(ResultModel):
    """The files written beside the report, and what was not exported."""

    files: list[ArtefactFile] = field("Every file.")
    count: int = field("Files.")
    export_formats: list[str] = field("Formats exported.")
    not_applicable: list[NotApplicable] = field("Formats that do not apply.")
    export_notes: list[str] = field("Notes of the exporters.")
    monitoring_notes: list[str] = field("Notes of the monitoring generator.")
    prometheus_major: int = field("Prometheus major the test values follow.")

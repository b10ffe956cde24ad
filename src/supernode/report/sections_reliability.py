"""Sections: reliability (blast radius, degraded modes, checkpoint interval, recovery, hot
standby, goodput with its distribution, what-ifs) and monitoring (the generated alerts).

Both read their results key only (``reliability``: :meth:`ReliabilityResult.to_dict`;
``monitoring``: :func:`supernode.design.monitoring.monitoring_summary`) and are left out
when it is absent (a results dict of an older design run).
"""

from __future__ import annotations

from typing import Any

from supernode.report import sections_run  # noqa: F401  (facility registered before these)
from supernode.report.blocks import Details, Figure, Paragraph, Section, Table
from supernode.report.fig_reliability import components_svg, goodput_svg, interval_svg
from supernode.report.sections import register_section
from supernode.report.sections_core import L, N, T

R = "reliability"


def _kv(title: str, rows: list[tuple]) -> Table:
    return Table(title, ("item", "value"), tuple(rows))


def _blast_tables(rel: dict[str, Any]) -> list[Table]:
    """One row per failure mode; the degraded modes with their step times."""
    blast = tuple((T(R, "blast_radius", i, "component"), T(R, "blast_radius", i, "location"),
                   N(R, "blast_radius", i, "failures_per_day", kind="float"),
                   T(R, "blast_radius", i, "detection"), T(R, "blast_radius", i, "takes_down"),
                   N(R, "blast_radius", i, "gpus_out", kind="count"),
                   T(R, "blast_radius", i, "effect"),
                   N(R, "blast_radius", i, "repair_s", kind="h"))
                  for i in range(len(rel["blast_radius"])))
    degraded = tuple((T(R, "degraded_modes", i, "component"),
                      T(R, "degraded_modes", i, "location"), T(R, "degraded_modes", i, "effect"),
                      N(R, "degraded_modes", i, "speed", kind="ratio"),
                      N(R, "degraded_modes", i, "step_time_s", kind="s"),
                      N(R, "degraded_modes", i, "repair_s", kind="h"))
                     for i in range(len(rel["degraded_modes"])))
    out = [Table("Blast radius: what one failure of each kind takes down",
                 ("component", "where", "per day", "detected by", "takes down", "GPUs out",
                  "effect", "repair"), blast)]
    if degraded:
        out.append(Table("Degraded modes (step time from the estimate model)",
                         ("component", "where", "effect", "speed", "step time", "repair"),
                         degraded))
    return out


def _checkpoint_tables() -> list[Table]:
    """Checkpoint size, cost and intervals; recovery paths against the objective."""
    c, rec = (R, "checkpoint"), (R, "recovery")
    checkpoint = _kv("Checkpoint and its interval", [
        (L("size (weights and optimizer states)"), N(*c, "size_bytes", kind="bytes")),
        (L("mode"), T(*c, "mode")),
        (L("write bandwidth to storage"), N(*c, "write_bytes_per_s", kind="bytes_per_s")),
        (L("training stops per checkpoint"), N(*c, "blocking_s", kind="s")),
        (L("write time"), N(*c, "write_s", kind="s")), (L("read time"), N(*c, "read_s", kind="s")),
        (L("mean time between restarts"), N(*c, "mtbf_s", kind="h")),
        (L("interval by Young"), N(*c, "young_interval_s", kind="min")),
        (L("interval by Daly"), N(*c, "daly_interval_s", kind="min")),
        (L("interval chosen"), N(*c, "chosen_interval_s", kind="min")),
        (L("best interval simulated"), N(*c, "simulated_best_interval_s", kind="min"))])
    recovery = _kv("Recovery against the objective", [
        (L("policy (the one the decision log, the verdict and every figure here use)"),
         T(*rec, "policy")),
        (L("why"), T(R, "recovery_decision", "why")),
        (L("detection"), N(*rec, "times", "detection_s", kind="s")),
        (L("diagnosis"), N(*rec, "times", "diagnosis_s", kind="s")),
        (L("rescheduling"), N(*rec, "times", "reschedule_s", kind="s")),
        (L("checkpoint load"), N(*rec, "checkpoint_load_s", kind="s")),
        (L("warm-up"), N(*rec, "times", "warmup_s", kind="s")),
        (L("restart after a hardware failure"), N(*rec, "paths_s", "restart_hardware",
                                                  kind="min")),
        (L("restart after a software failure"), N(*rec, "paths_s", "restart_software",
                                                  kind="min")),
        (L("isolate and shrink"), N(*rec, "paths_s", "shrink", kind="min")),
        (L("recovery time (RTO)"), N(*rec, "rto_s", kind="min")),
        (L("objective"), N(*rec, "objective_s", kind="min")),
        (L("meets the objective"), N(*rec, "meets_objective", kind="bool")),
        (L("mean wait for a spare host per run"), N(*rec, "mean_spare_wait_s_per_run",
                                                    kind="h"))])
    return [checkpoint, recovery]


def _goodput_tables(rel: dict[str, Any]) -> list[Table]:
    """Hot standby; goodput (analytic and Monte Carlo); the what-ifs."""
    h, g = (R, "hot_standby"), (R, "goodput")
    mc = g + ("monte_carlo", "goodput")
    standby = _kv("Hot standby", [
        (L("share in use"), N(*h, "share", kind="share")), (L("from"), T(*h, "source")),
        (L("spare switch ports in the topology"), N(*h, "measured_share", kind="share")),
        (L("objective"), N(*h, "objective", kind="share")),
        (L("largest single scale-up loss"), N(*h, "largest_single_failure_loss",
                                              kind="share")),
        (L("covers a single failure"), N(*h, "covers_single_failure", kind="bool"))])
    goodput = _kv("Goodput (kept progress over wall time)", [
        (L("analytic (Daly, with degraded running)"), N(*g, "analytic", kind="fraction")),
        (L("lost to degraded running"), N(*g, "degraded_share", kind="share")),
        (L("Monte Carlo mean"), N(*mc, "mean", kind="fraction")),
        (L("standard error"), N(*mc, "standard_error", kind="float")),
        (L("percentiles: fifth / median / ninety-fifth"), (N(*mc, "p5", kind="fraction"), L(" / "),
                               N(*mc, "p50", kind="fraction"), L(" / "),
                               N(*mc, "p95", kind="fraction"))),
        (L("runs"), N(*g, "monte_carlo", "runs", kind="count")),
        (L("days per run"), N(*g, "monte_carlo", "horizon_s", kind="days")),
        (L("seed"), N(*g, "monte_carlo", "seed", kind="count"))])
    what = tuple((T(R, "what_if", i, "knob"), N(R, "what_if", i, "current", kind="number"),
                  N(R, "what_if", i, "value", kind="number"),
                  N(R, "what_if", i, "analytic_goodput", kind="fraction"),
                  N(R, "what_if", i, "monte_carlo_goodput", kind="fraction"),
                  N(R, "what_if", i, "delta_vs_base", kind="float"),
                  N(R, "what_if", i, "interval_s", kind="min"))
                 for i in range(len(rel["what_if"])))
    out = [standby, goodput]
    if what:
        out.append(Table("What if (Monte Carlo on common draws)", ("knob", "now", "what if",
                                                                  "analytic", "Monte Carlo",
                                                                  "vs now", "interval"), what))
    return out


def reliability_section(r: dict[str, Any]) -> Section | None:
    """Failures, blast radius, degraded modes, checkpoints, recovery, goodput, what-ifs."""
    if R not in r:
        return None
    rel = r[R]
    s = Section("reliability", "Reliability")
    if rel is None:
        s.blocks.append(Paragraph((L("Not assessed: no plan fits."),)))
        return s
    i = (R, "interruptions")
    s.blocks.append(Paragraph((
        L("The job on "), N(R, "job", "gpus", kind="count"), L(" GPUs ("),
        N(R, "job", "hosts", kind="count"), L(" hosts) sees "),
        N(*i, "failures_per_day", kind="float"), L(" failures and "),
        N(*i, "interruptions_per_day", kind="float"), L(" job interruptions per day (mean "),
        N(*i, "job_mtbf_s", kind="h"), L(" between interruptions); step time "),
        N(R, "job", "step_time_s", kind="s"), L("."))))
    s.blocks += _blast_tables(rel) + _checkpoint_tables()
    s.blocks.append(Paragraph((L("Recovery times: "), T(R, "recovery", "note"))))
    s.blocks += _goodput_tables(rel)
    for name, svg, caption in (
            ("goodput", goodput_svg(rel), "Goodput distribution (Monte Carlo)"),
            ("checkpoint-interval", interval_svg(rel), "Goodput against the checkpoint "
                                                       "interval"),
            ("failures", components_svg(rel), "Failures per day by component")):
        if svg:
            s.blocks.append(Figure(name, svg, caption))
    return s


def monitoring_section(r: dict[str, Any]) -> Section | None:
    """The alert rules generated for the cluster: id, seed, severity, for, summary."""
    mon = r.get("monitoring")
    if mon is None:
        return None
    m = ("monitoring",)
    s = Section("monitoring", "Monitoring")
    s.blocks.append(Paragraph((
        N(*m, "count", kind="count"), L(" alert rules for this cluster ("),
        N(*m, "by_severity", "critical", kind="count"), L(" critical, "),
        N(*m, "by_severity", "warning", kind="count"), L(" warning, "),
        N(*m, "by_severity", "info", kind="count"), L(" info), over "),
        N(*m, "recording_rules", kind="count"), L(" recording rules with topology labels: "
                                                  "the pack supernode monitor rules writes "
                                                  "for Prometheus."))))
    rows = tuple((T(*m, "alerts", i, "id"), T(*m, "alerts", i, "seed"),
                  T(*m, "alerts", i, "severity"), N(*m, "alerts", i, "for_s", kind="min"),
                  T(*m, "alerts", i, "scope"), T(*m, "alerts", i, "text"))
                 for i in range(len(mon["alerts"])))
    s.blocks.append(Table("Alert rules", ("alert", "seed", "severity", "for", "one alert per",
                                          "summary"), rows, ("alerts",)))
    s.blocks += [Details(a["id"], (Paragraph((T(*m, "alerts", i, "description"),)),
                                   Paragraph((L("Runbook: "), T(*m, "alerts", i, "runbook"))),
                                   Paragraph((L("Expression: "),
                                              T(*m, "alerts", i, "expression")))))
                 for i, a in enumerate(mon["alerts"])]
    s.blocks += [Paragraph((L("Left out: "), T(*m, "notes", i)))
                 for i in range(len(mon["notes"]))]
    return s


register_section("reliability", "Reliability", reliability_section, after="facility")
register_section("monitoring", "Monitoring", monitoring_section, after="reliability")

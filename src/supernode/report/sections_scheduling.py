"""Sections: scheduling (topology-blind against topology-aware placement of the cluster's
jobs, with the seed's figures) and artefacts (the exported files written beside the report).

Both read their results key only (``scheduling``: :func:`supernode.design.scheduling.
run_scheduling`; ``artefacts``: :func:`supernode.design.artefacts.design_artefacts`) and are
left out when it is absent (a results dict of an older design run, or written without its
files).
"""

from __future__ import annotations

from typing import Any

from supernode.report import sections_reliability  # noqa: F401  (registered before these)
from supernode.report.blocks import Cell, Figure, Paragraph, Section, Table
from supernode.report.fig_scheduling import policies_svg, slowdowns_svg
from supernode.report.sections import register_section
from supernode.report.sections_core import L, N, T

S = "scheduling"
SRC = (S, "trace_source")
POL = (S, "schedule", "policies")


def _trace_paragraph(sch: dict[str, Any]) -> Paragraph:
    """Which trace, how it was scaled to the cluster, the seed and the bound."""
    cells: list[Cell] = [N(*SRC, "jobs", kind="count"), L(" jobs: "), T(*SRC, "reason")]
    if sch["trace_source"]["kind"] == "philly":
        cells += [L(" — one in every "), N(*SRC, "every_nth", kind="float"), L(" of its "),
                  N(*SRC, "trace_jobs", kind="count"), L(" jobs ("),
                  N(*SRC, "philly_capped_jobs", kind="count"), L(" capped, ")]
    else:
        cells += [L(" ("), L("capping the Philly sample would remove ")]
    cells += [N(*SRC, "philly_capped_gpu_seconds_share", kind="share"),
              L(" of the GPU-seconds; at most "), N(*SRC, "max_capped_share", kind="share"),
              L(" allowed). Arrival times scaled by "), N(*SRC, "time_factor", kind="float"),
              L(" for an offered load of "), N(*SRC, "load", kind="share"),
              L(" over an arrival window of "), N(*SRC, "window_s", kind="h"),
              L("; job shapes and random placement seeded with "),
              N(S, "schedule", "seed", kind="count"), L("; "),
              N(S, "schedule", "shapes", "step_times_estimated", kind="count"),
              L(" step times estimated (one per model, GPUs, TP and placement class, shared "
                "by the policies).")]
    return Paragraph(tuple(cells))


def _seed_paragraph(sch: dict[str, Any]) -> Paragraph:
    """The seed's before/after against the blind and aware policies here."""
    c, ref = (S, "comparison"), (S, "seed_reference")
    b, a = sch["comparison"]["blind_index"], sch["comparison"]["aware_index"]
    return Paragraph((
        L("Seed reference ("), T(*ref, "section"), L("): the slowdown spread among co-located "
                                                     "tenants fell from more than "),
        N(*ref, "before", kind="share"), L(" to less than "), N(*ref, "after", kind="share"),
        L(" once each job had one port group. Here "), T(*c, "blind"),
        L(" (topology-blind) spreads "), N(*POL, b, "slowdown_spread", kind="share"),
        L(" and puts TP groups of "), N(*POL, b, "tp_crossing_share", kind="share"),
        L(" of the TP jobs across supernodes; "), T(*c, "aware"),
        L(" (topology-aware, what the exported topology files let the scheduler do) spreads "),
        N(*POL, a, "slowdown_spread", kind="share"), L(" with "),
        N(*POL, a, "tp_crossing_share", kind="share"),
        L(" across, and its useful GPU share (GPUs held / slowdown) is higher by "),
        N(*c, "goodput_gain", kind="share"),
        L(" of the cluster's GPU time.")))


def _policy_table(sch: dict[str, Any]) -> Table:
    """One row per policy: the scheduler's metrics."""
    rows = tuple((T(*POL, i, "policy"), T(S, "policies", i, "kind"),
                  N(*POL, i, "utilisation", kind="share"),
                  N(*POL, i, "goodput_utilisation", kind="share"),
                  N(*POL, i, "mean_queue_s", kind="h"), N(*POL, i, "p95_queue_s", kind="h"),
                  N(*POL, i, "fragmentation", kind="share"),
                  N(*POL, i, "tp_crossing_share", kind="share"),
                  N(*POL, i, "tp_crossing_jobs", kind="count"),
                  N(*POL, i, "mean_slowdown", kind="fraction"),
                  N(*POL, i, "p95_slowdown", kind="fraction"),
                  N(*POL, i, "slowdown_spread", kind="share"))
                 for i in range(len(sch["schedule"]["policies"])))
    return Table("Placement policies on this cluster (same jobs, same seed)",
                 ("policy", "sees", "GPUs held", "useful GPU share", "mean queue", "p95 queue",
                  "fragmented", "TP across", "TP jobs across", "mean slowdown",
                  "p95 slowdown", "spread"), rows)


def scheduling_section(r: dict[str, Any]) -> Section | None:
    """The replay of the cluster's jobs under blind and aware placement policies."""
    if S not in r:
        return None
    sch = r[S]
    s = Section("scheduling", "Scheduling")
    if sch is None:
        s.blocks.append(Paragraph((L("Not replayed: see the notes of the verdict."),)))
        return s
    s.blocks += [_trace_paragraph(sch), _seed_paragraph(sch), _policy_table(sch)]
    s.blocks.append(Table("The policies", ("policy", "sees", "rule"),
                          tuple((T(S, "policies", i, "policy"), T(S, "policies", i, "kind"),
                                 T(S, "policies", i, "description"))
                                for i in range(len(sch["policies"])))))
    s.blocks += [Paragraph((L("Note: "), T(S, "notes", i))) for i in range(len(sch["notes"]))]
    s.blocks += [Paragraph((L("Scheduler note: "), T(S, "schedule", "notes", i)))
                 for i in range(len(sch["schedule"]["notes"]))]
    for name, svg, caption in (
            ("scheduling-policies", policies_svg(sch), "Placement policies: crossings, "
                                                       "slowdowns, utilisation"),
            ("scheduling-slowdowns", slowdowns_svg(sch), "Distribution of the multi-GPU "
                                                         "jobs' slowdowns")):
        if svg:
            s.blocks.append(Figure(name, svg, caption))
    return s


def artefacts_section(r: dict[str, Any]) -> Section | None:
    """Every file written beside the report: path, what loads it, size."""
    art = r.get("artefacts")
    if art is None:
        return None
    a = ("artefacts",)
    s = Section("artefacts", "Artefacts")
    s.blocks.append(Paragraph((
        N(*a, "count", kind="count"), L(" files written beside the report: the cluster's "
                                        "topology for the schedulers and NCCL in exports/ "
                                        "(what supernode export writes, one folder per "
                                        "format) and its monitoring pack in monitoring/ "
                                        "(what supernode monitor rules writes; test values "
                                        "for Prometheus "),
        N(*a, "prometheus_major", kind="count"), L(")."))))
    rows = tuple((T(*a, "files", i, "path"), T(*a, "files", i, "loaded_by"),
                  N(*a, "files", i, "bytes", kind="count"))
                 for i in range(len(art["files"])))
    s.blocks.append(Table("Files", ("file", "loaded by", "bytes"), rows, ("artefacts",)))
    s.blocks += [Paragraph((L("Not exported: "), T(*a, "not_applicable", i, "format"), L(" — "),
                            T(*a, "not_applicable", i, "reason")))
                 for i in range(len(art["not_applicable"]))]
    s.blocks += [Paragraph((L("Export note: "), T(*a, "export_notes", i)))
                 for i in range(len(art["export_notes"]))]
    s.blocks += [Paragraph((L("Monitoring note: "), T(*a, "monitoring_notes", i)))
                 for i in range(len(art["monitoring_notes"]))]
    return s


register_section("scheduling", "Scheduling", scheduling_section, after="reliability")
register_section("artefacts", "Artefacts", artefacts_section, after="monitoring")

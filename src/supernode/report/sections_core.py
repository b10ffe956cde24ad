"""Sections: verdict and top findings; cluster and topology; the plans."""

from __future__ import annotations

from typing import Any

from supernode.report.blocks import Cell, Figure, Label, Num, Paragraph, Section, Table, Txt
from supernode.report.fig_run import comm_compute_svg
from supernode.report.fig_topology import fabric_svg, supernode_svg
from supernode.report.sections import register_section

L = Label


def N(*key: str | int, kind: str) -> Num:  # noqa: N802 - reads like a cell constructor
    """A number cell at ``key``."""
    return Num(tuple(key), kind)


def T(*key: str | int) -> Txt:  # noqa: N802
    """A text cell at ``key``."""
    return Txt(tuple(key))


def verdict_section(r: dict[str, Any]) -> Section:
    """Verdict, failure counts and the top findings."""
    s = Section("verdict", "Verdict and top findings")
    s.blocks.append(Paragraph((L("Verdict: "), T("verdict", "verdict"), L(" — errors "),
                               N("verdict", "failed_by_severity", "error", kind="count"),
                               L(", warnings "),
                               N("verdict", "failed_by_severity", "warning", kind="count"),
                               L(", info "),
                               N("verdict", "failed_by_severity", "info", kind="count"),
                               L(" of "), N("verdict", "rules_evaluated", kind="count"),
                               L(" rules evaluated."))))
    rec = (r.get("summary") or {}).get("reconciliation")
    if rec is not None:
        s.blocks.append(Paragraph((L("Simulate and estimate disagree: "),
                                   T("summary", "reconciliation", "text"))))
    s.blocks += [Paragraph((L("Note: "), T("notes", i))) for i in range(len(r["notes"]))]
    s.blocks += [Paragraph((L("Planner note: "), T("plans", "notes", i)))
                 for i in range(len(r["plans"]["notes"]))]
    index = {f["id"]: i for i, f in enumerate(r["findings"])}
    rows = tuple((T("findings", index[i], "id"), T("findings", index[i], "severity"),
                  T("findings", index[i], "detail"), T("findings", index[i], "fix"))
                 for i in r["verdict"]["top_findings"])
    if rows:
        s.blocks.append(Table("Top findings", ("rule", "severity", "finding", "suggested fix"),
                              rows, ("findings",)))
    return s


def cluster_section(r: dict[str, Any]) -> Section:
    """The cluster's parts and sizes, topology counts and ratios, and two diagrams."""
    s = Section("cluster", "Cluster and topology")
    c = ("cluster",)
    rows: list[tuple[Cell, ...]]
    rows = [(L("cluster"), T(*c, "name")), (L("accelerator"), T(*c, "accelerator")),
            (L("accelerators"), N(*c, "accelerators", kind="count")),
            (L("hosts"), N(*c, "hosts", kind="count")),
            (L("supernodes"), N(*c, "supernodes", kind="count")),
            (L("scale-up kind"), T(*c, "scale_up", "kind")),
            (L("supernode size"), N(*c, "scale_up", "size", kind="count")),
            (L("scale-up per accelerator (one direction)"),
             N(*c, "scale_up", "bandwidth_per_accelerator_bytes_per_s", kind="bytes_per_s")),
            (L("HBM bandwidth"), N(*c, "memory_bandwidth_bytes_per_s", kind="bytes_per_s"))]
    if r["cluster"]["scale_out"] is not None:
        rows += [(L("scale-out switch"), T(*c, "scale_out", "switch")),
                 (L("scale-out tiers"), N(*c, "scale_out", "tiers", kind="count")),
                 (L("NIC ports per host"), N(*c, "scale_out", "nics_per_host", kind="count"))]
    s.blocks.append(Table("Cluster", ("item", "value"), tuple(rows)))
    t = r["topology"]
    tiers = [k for k in ("host", "scale_up_l1", "scale_up_l2", "leaf", "spine", "core")
             if k in t["links"] or k in t["switches"]]
    count_rows = tuple((L(k), N("topology", "switches", k, kind="count") if k in t["switches"]
                        else L("-"), N("topology", "links", k, kind="count"),
                        N("topology", "cables", k, kind="count") if k in t["cables"] else L("-"),
                        N("topology", "optical_transceivers", k, kind="count")
                        if k in t["optical_transceivers"] else L("-")) for k in tiers)
    s.blocks.append(Table("Counts per tier", ("tier", "switches", "links", "cables", "optics"),
                          count_rows))
    kinds = ["bytes_per_s" if c["metric"].endswith("bytes_per_s") else
             "count" if "hops" in c["metric"] else "ratio" for c in t["checks"]]
    checks = tuple((T("topology", "checks", i, "metric"),
                    N("topology", "checks", i, "value", kind=kinds[i]),
                    T("topology", "checks", i, "comparison"),
                    N("topology", "checks", i, "threshold", kind=kinds[i]),
                    T("topology", "checks", i, "source"))
                   for i in range(len(t["checks"])))
    s.blocks.append(Table("Ratios against the seeds' thresholds",
                          ("metric", "value", "", "threshold", "source"), checks))
    s.blocks.append(Figure("supernode", supernode_svg(r["cluster"]),
                           "One supernode: hosts, accelerators and the scale-up switches"))
    fabric = fabric_svg(r["cluster"])
    if fabric:
        s.blocks.append(Figure("fabric", fabric, "The scale-out fabric joining the supernodes"))
    return s


def plans_section(r: dict[str, Any]) -> Section:
    """The planner's best plans, the seeds' communication-computation table, the reasons."""
    s = Section("plans", "Plans and the communication–computation table")
    p = r["plans"]
    rows: tuple[tuple[Cell, ...], ...]
    rows = tuple((N("plans", "plans", i, "rank", kind="count"),
                  *(N("plans", "plans", i, k, kind="count") for k in ("tp", "pp", "dp", "cp",
                                                                       "ep")),
                  T("plans", "plans", i, "rank_order"),
                  N("plans", "plans", i, "step_time_s", kind="s"),
                  N("plans", "plans", i, "step_time_interval_s", 0, kind="s"),
                  N("plans", "plans", i, "step_time_interval_s", 1, kind="s"),
                  N("plans", "plans", i, "tokens_per_s", kind="tokens_per_s"),
                  N("plans", "plans", i, "mfu", kind="share"),
                  N("plans", "plans", i, "memory_per_gpu_bytes", kind="bytes"))
                 for i in range(len(p["plans"])))
    s.blocks.append(Table("Best plans (planner)", ("#", "TP", "PP", "DP", "CP", "EP", "order",
                                                    "step", "interval low", "interval high",
                                                    "tokens/s", "MFU", "memory/GPU"),
                          rows))
    cc = tuple((N("plans", "comm_compute_table", i, "rank", kind="count"),
                N("plans", "comm_compute_table", i, "compute_s", kind="s"),
                N("plans", "comm_compute_table", i, "comm_issued_s", kind="s"),
                N("plans", "comm_compute_table", i, "comm_exposed_s", kind="s"),
                N("plans", "comm_compute_table", i, "comm_to_compute", kind="ratio"),
                N("plans", "comm_compute_table", i, "share", kind="share"),
                N("plans", "comm_compute_table", i, "threshold", kind="share"),
                N("plans", "comm_compute_table", i, "over_threshold", kind="bool"))
               for i in range(len(p["comm_compute_table"])))
    s.blocks.append(Table("Communication vs computation per card and step (seed 000 §5.2)",
                          ("#", "compute", "comm issued", "comm exposed", "comm/compute",
                           "share", "line", "over"), cc))
    s.blocks.append(Table("Software stack the plans assume (docs/workload.md)",
                          ("framework", "element-wise kernels", "TP overlap",
                           "attention kernel", "cross-entropy", "defaults from"),
                          ((T("plans", "stack", "framework"),
                            T("plans", "stack", "elementwise"),
                            N("plans", "stack", "tp_comm_overlap", kind="bool"),
                            T("plans", "stack", "attention_kernel"),
                            T("plans", "stack", "cross_entropy"),
                            T("plans", "stack", "source")),)))
    view = r["reviewed_plan"]
    if view is not None and view["source"] == "given":
        s.blocks.append(Table("The plan under review (given)", ("TP", "PP", "DP", "CP", "EP",
                                                                 "step", "MFU", "exposed comm",
                                                                 "rank", "best is faster by"),
                              ((*(N("reviewed_plan", k, kind="count") for k in
                                  ("tp", "pp", "dp", "cp", "ep")),
                                N("reviewed_plan", "step_time_s", kind="s"),
                                N("reviewed_plan", "mfu", kind="share"),
                                N("reviewed_plan", "exposed_comm_share", kind="share"),
                                N("reviewed_plan", "rank", kind="count"),
                                N("reviewed_plan", "best_speedup", kind="ratio")),)))
    s.blocks += [Paragraph((T("plans", "explanation", i),))
                 for i in range(len(p["explanation"]))]
    svg = comm_compute_svg(p)
    if svg:
        s.blocks.append(Figure("comm-compute", svg, "Step breakdown and communication share "
                                                    "of the best plans"))
    return s


register_section("verdict", "Verdict", verdict_section)
register_section("cluster", "Cluster and topology", cluster_section)
register_section("plans", "Plans", plans_section)

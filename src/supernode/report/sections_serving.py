"""Section: serving (``design --serve``): the workload served with 8-GPU domains and with
the cluster's own, under the serve file's targets (``results.json`` -> ``serving``,
:mod:`supernode.design.serving`); left out without a serve file."""

from __future__ import annotations

from typing import Any

from supernode.report import sections_run  # noqa: F401  (registered before this)
from supernode.report.blocks import Paragraph, Section, Table, TableCell
from supernode.report.sections import register_section
from supernode.report.sections_core import L, N, T

S = "serving"


def serving_section(r: dict[str, Any]) -> Section | None:
    """One row per domain size (the best deployment under the targets), then the verdict."""
    serving = r.get(S)
    if not serving:
        return None
    s = Section(S, "Serving")
    s.blocks.append(Paragraph((
        L("Serving "), T(S, "model"), L(" on "), N(S, "gpus", kind="count"), L(" "),
        T(S, "accelerator"), L(" GPUs, the serve file's lengths, load and targets: the best "
                              "deployment with the baseline's eight-GPU scale-up domains "
                              "and with the cluster's (larger domains priced at the "
                              "GPU-hour plus a premium of "),
        N(S, "supernode_premium", kind="share"), L("). Decode communication above "),
        N(S, "comm_share_line", kind="share"),
        L(" of the decode step is the seeds' bottleneck line."))))
    rows: list[tuple[TableCell, ...]] = []
    for i, row in enumerate(serving["sizes"]):
        k = (S, "sizes", i)
        if not row["feasible"]:
            rows.append((N(*k, "scale_up_size", kind="count"), T(*k, "mode"), L("-"), L("-"),
                         L("-"), L("-"), L("-"), L("-"), T(*k, "reason")))
            continue
        lay = (*k, "layout")
        rows.append((N(*k, "scale_up_size", kind="count"), T(*k, "mode"),
                     N(*k, "output_tokens_per_s_per_gpu", kind="tokens_per_s"),
                     N(*k, "speedup_vs_8", kind="ratio") if "speedup_vs_8" in row
                     else L("-"),
                     N(*k, "ttft_ms", kind="number"), N(*k, "tpot_ms", kind="number"),
                     N(*k, "decode_comm_share", kind="share"),
                     N(*k, "usd_per_million_output_tokens", kind="usd"),
                     (L("TP"), N(*lay, "tp", kind="count"), L(" PP"), N(*lay, "pp", kind="count"),
                      L(" DP"), N(*lay, "dp", kind="count"), L(" EP"),
                      N(*lay, "ep", kind="count"))))
    s.blocks.append(Table("Best deployment per scale-up domain size",
                          ("domain GPUs", "mode", "tokens/s per GPU", "vs eight", "TTFT ms",
                           "TPOT ms", "decode comm", "USD per M tokens", "layout (decode)"),
                          tuple(rows)))
    s.blocks.append(Paragraph((L("Verdict: "), T(S, "questions", "verdict"))))
    return s


register_section(S, "Serving", serving_section, after="plans")

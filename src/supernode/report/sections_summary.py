"""Section: the executive summary, at the top of the report (``results.json`` ->
``summary`` and ``economics``, :mod:`supernode.design.headline` and
:mod:`supernode.design.prices`): the decision, the five figures a buyer asks for from one
stated step time (the other engine's beside it), the three largest risks with their rule,
what was simulated and what estimated, the engines' reconciliation when they differ by more
than the line, and the price model with each price's source."""

from __future__ import annotations

from typing import Any

from supernode.report.blocks import Paragraph, Section, Table
from supernode.report.sections import register_section
from supernode.report.sections_core import L, N, T

S = "summary"


def _figures() -> Table:
    return Table("The figures a buyer asks for (one stated step time; the other beside it)",
                 ("figure", "value", "80 % interval", "beside it"), (
        (L("step time"), N(S, "step_time_s", kind="s"),
         (N(S, "step_time_interval_s", 0, kind="s"), L(" to "),
          N(S, "step_time_interval_s", 1, kind="s")),
         (L("estimate "), N(S, "estimate_step_time_s", kind="s"))),
        (L("stated step from"), T(S, "step_time_source"), L(""), L("")),
        (L("MFU"), N(S, "mfu", kind="share"),
         (N(S, "mfu_interval", 0, kind="share"), L(" to "),
          N(S, "mfu_interval", 1, kind="share")), L("")),
        (L("tokens/s"), N(S, "tokens_per_s", kind="tokens_per_s"), L(""), L("")),
        (L("cluster power at the workload"), N(S, "power_w", kind="w"), L(""), L("")),
        (L("cost per million tokens (GPU-hours)"),
         N(S, "cost_per_million_tokens_usd", kind="usd"), L(""),
         (L("of which electricity "), N(S, "energy_cost_per_million_tokens_usd", kind="usd"))),
        (L("goodput"), N(S, "goodput", kind="fraction"), L(""), T(S, "goodput_definition")),
        (L("recovery policy"), T(S, "recovery_policy"), L(""), L(""))))


def _prices() -> Table:
    rows = tuple((L(label), N("economics", key, "value", kind=kind),
                  T("economics", key, "source"))
                 for label, key, kind in (("GPU-hour", "gpu_hour", "usd"),
                                          ("supernode premium", "supernode_premium", "share"),
                                          ("energy per kWh", "energy", "usd"),
                                          ("PUE", "pue", "ratio")))
    return Table("Price model (every cost in the review uses these)",
                 ("price", "value", "source"), rows)


def summary_section(r: dict[str, Any]) -> Section | None:
    """Decision, figures, risks, what was simulated vs estimated, reconciliation, prices."""
    summ = r.get(S)
    if summ is None:
        return None
    s = Section("summary", "Executive summary")
    s.blocks.append(Paragraph((L("Decision: "), T(S, "decision"))))
    s.blocks.append(_figures())
    rec = summ["reconciliation"]
    if rec is not None:
        s.blocks.append(Paragraph((L("The two engines differ: "),
                                   T(S, "reconciliation", "text"))))
        s.blocks.append(Table("Reconciliation of simulate and estimate", (
            "cause", "measured", "share of the gap", "figures"), tuple(
            (T(S, "reconciliation", "causes", i, "cause"),
             T(S, "reconciliation", "causes", i, "measure"),
             N(S, "reconciliation", "causes", i, "share_of_gap", kind="share"),
             T(S, "reconciliation", "causes", i, "detail"))
            for i in range(len(rec["causes"])))))
    if summ["risks"]:
        s.blocks.append(Table("The largest risks", ("rule", "severity", "finding"), tuple(
            (T(S, "risks", i, "id"), T(S, "risks", i, "severity"),
             T(S, "risks", i, "detail")) for i in range(len(summ["risks"])))))
    s.blocks.append(Table("Simulated and estimated", ("simulated", "estimated"), tuple(
        (T(S, "simulated", i) if i < len(summ["simulated"]) else L(""),
         T(S, "estimated", i) if i < len(summ["estimated"]) else L(""))
        for i in range(max(len(summ["simulated"]), len(summ["estimated"]))))))
    s.blocks.append(_prices())
    return s


register_section("summary", "Executive summary", summary_section, before="verdict")

"""``results.json`` -> ``economics`` (the one price model, :mod:`supernode.design.prices`)
and ``summary`` (the executive summary with the one stated step time and the two engines'
reconciliation, :mod:`supernode.design.headline`)."""

from __future__ import annotations

from supernode.design.results.base import ResultModel, field


class PriceFigure(ResultModel):
    """One price with its unit and where it comes from."""

    value: float = field("The price.")
    unit: str = field("usd_per_gpu_hour, usd_per_kwh, share or ratio.")
    source: str = field("user-supplied (the cluster file), or the assumption's source.")


class Economics(ResultModel):
    """Every price the review's figures are computed from."""

    gpu_hour: PriceFigure = field("All-in price of one accelerator-hour (USD).")
    supernode_premium: PriceFigure = field("Price share a supernode costs over 8-GPU "
                                           "servers of the same chips (decision D2).")
    energy: PriceFigure = field("Energy price (USD/kWh).")
    pue: PriceFigure = field("Power usage effectiveness.")


class Cause(ResultModel):
    """One measured cause of the gap between the engines."""

    cause: str = field("routing, exposed communication, hot links or pipeline stalls.")
    measure: str = field("What was measured.")
    value_s: float | None = field("The measured time (s), when it is one.")
    share_of_gap: float | None = field("Share of the gap it explains, when measurable.")
    detail: str = field("The figures, in words.")


class Closes(ResultModel):
    """The what-if that brings the simulated step within the line of the estimate."""

    what_if: str = field("The change.")
    step_time_s: float = field("Simulated step time with it (s).")
    gap: float = field("Its gap to the estimate (share).")


class Reconciliation(ResultModel):
    """Why simulate and estimate differ by more than the line."""

    gap: float = field("(simulated - estimated) / estimated.")
    line: float = field("The line past which the review reconciles (share).")
    cause: str = field("The cause that explains most of the gap, or 'not one measured "
                       "cause'.")
    causes: list[Cause] = field("Every cause measured.")
    closes: Closes | None = field("The what-if that closes the gap, or null.")
    text: str = field("The verdict's sentence.")


class Risk(ResultModel):
    """One of the three largest risks: a failed rule."""

    id: str = field("Rule id.")
    severity: str = field("error, warning or info.")
    detail: str = field("The rule's finding.")


class Summary(ResultModel):
    """The executive summary: what a buyer asks for, from one stated step time."""

    decision: str = field("The plan and cluster reviewed, and the verdict.")
    step_time_s: float = field("The stated step time (s): every figure below uses it.")
    step_time_source: str = field("simulated or estimated.")
    estimate_step_time_s: float = field("The analytic estimate (s).")
    simulated_step_time_s: float | None = field("The simulated step (s), or null.")
    step_time_interval_s: list[float] = field("80 % interval of the step (s), the "
                                              "estimate's scaled to the stated step.")
    mfu: float = field("Model FLOPs utilisation at the stated step.")
    mfu_interval: list[float] = field("80 % interval of the MFU.")
    tokens_per_s: float = field("Tokens per second at the stated step.")
    power_w: float = field("Cluster IT power at the workload (W).")
    cost_per_million_tokens_usd: float = field("GPU-hour cost per million tokens at the "
                                               "stated step (USD).")
    energy_cost_per_million_tokens_usd: float | None = field(
        "Of an owner's cost, the electricity per million tokens (USD).")
    goodput: float | None = field("Reliability goodput (share of wall time).")
    goodput_definition: str = field("What goodput means here.")
    recovery_policy: str | None = field("The review's one recovery policy.")
    risks: list[Risk] = field("The three largest risks.")
    simulated: list[str] = field("Figures simulated.")
    estimated: list[str] = field("Figures estimated.")
    reconciliation: Reconciliation | None = field("Why the engines differ by more than the "
                                                  "line; null when they agree.")

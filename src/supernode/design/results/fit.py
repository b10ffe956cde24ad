"""``results.json`` -> ``fit``: does this workload need a supernode (the workload fit,
``supernode fit --json``, seed 001 §1.3). SI units; prices in USD."""

from __future__ import annotations

from supernode.design.results.base import ResultModel, field, optional
from supernode.design.results.planning import SizesOnly


class FitSize(ResultModel):
    """The best plan with scale-up domains of one size."""

    scale_up_size: int = field("GPUs per scale-up domain.")
    feasible: bool = field("True when a plan fits.")
    price_per_gpu_hour_usd: float = field("Price of one GPU-hour at this size (USD).")
    reason: str | None = optional("Why nothing fits (when infeasible).")
    step_time_s: float | None = optional("Step time (s).")
    tokens_per_s: float | None = optional("Training throughput (tokens/s).")
    mfu: float | None = optional("Model FLOPs utilisation.")
    comm_share: float | None = optional("Issued communication share.")
    exposed_comm_share: float | None = optional("Exposed communication share.")
    over_20pct: bool | None = optional("True when the comm share is above 20 %.")
    cost_per_million_tokens_usd: float | None = optional("Cost per million tokens (USD).")
    plan: SizesOnly | None = optional("The plan's sizes.")
    speedup_vs_8: float | None = optional("Speedup over 8-GPU domains.")


class CommunicationBound(ResultModel):
    """Seed 001 §1.3 question 1: is the model communication-bound?"""

    comm_share_on_8_gpu_servers: float | None = field("Comm share on 8-GPU servers.")
    exposed_comm_share_on_8_gpu_servers: float | None = field(
        "Exposed comm share on 8-GPU servers.")
    communication_bound: bool | None = field("True above 20 % (null when nothing fits).")
    best_scale_up_size: int | None = field("Smallest domain within 1 % of the best speed.")
    best_speedup: float | None = field("Its speedup over 8-GPU servers.")
    params: float = field("Total parameters.")
    large_model: bool = field("True at 100B parameters or more.")


class BlastRadius(ResultModel):
    """Seed 001 §1.3 question 2: the blast radius of one failure."""

    blast_radius_gpus: int = field("GPUs one failure stalls.")
    blast_radius_vs_8: float = field("That over 8.")
    job_interruptions_per_day: float = field("Job interruptions per day (fleet rate).")
    share_of_job_lost_per_failure_until_repair: float = field(
        "Share of the job's GPUs out until the repair.")


class CostAnswer(ResultModel):
    """Seed 001 §1.3 question 3: does the scale justify the cost?"""

    cost_per_million_tokens_8: float | None = field("Cost per million tokens, 8-GPU (USD).")
    cost_per_million_tokens_best: float | None = optional(
        "Cost per million tokens at the best size (USD).")
    break_even_premium: float | None = optional("Premium at which the best size breaks even.")
    pays_off: bool | None = optional("True when the best size is cheaper per token.")


class FitQuestions(ResultModel):
    """The seed's three questions, answered with the numbers."""

    communication_bound: CommunicationBound = field("Question 1.")
    blast_radius: BlastRadius = field("Question 2.")
    cost: CostAnswer = field("Question 3.")
    verdict: str = field("The answer in a sentence.")


class FitResults(ResultModel):
    """Does this workload need a supernode? (``supernode fit --json``, seed 001 §1.3.)"""

    workload: str = field("Workload name.")
    accelerator: str = field("Accelerator name.")
    gpus: int = field("GPUs of the job.")
    global_batch_sequences: int = field("Sequences per step.")
    price_note: str = field("Where the price comes from.")
    supernode_premium: float = field("Extra price per GPU-hour in domains above 8 (share).")
    sizes: list[FitSize] = field("One row per domain size, 8 first.")
    questions: FitQuestions = field("The three questions.")

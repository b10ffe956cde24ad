"""``results.json`` -> ``serving``: the serving fit of ``design --serve``
(:mod:`supernode.design.serving`; ``supernode fit --serve --json`` prints the same object
without ``serve_file``)."""

from __future__ import annotations

from supernode.design.results.base import ResultModel, field, optional


class ServeLayout(ResultModel):
    """A serving instance's layout (decode side when disaggregated)."""

    tp: int = field("Tensor-parallel size.")
    pp: int = field("Pipeline stages.")
    dp: int = field("Attention data-parallel ranks.")
    ep: int = field("Expert-parallel size.")


class ServingSize(ResultModel):
    """The best deployment with scale-up domains of one size."""

    scale_up_size: int = field("GPUs per scale-up domain.")
    feasible: bool = field("True when a deployment meets the targets.")
    mode: str = field("aggregated, disaggregated or none.")
    price_per_gpu_hour_usd: float = field("Price of one GPU-hour at this size (USD).")
    reason: str | None = optional("Why nothing meets the targets (when infeasible).")
    output_tokens_per_s_per_gpu: float | None = optional("Output tokens/s per GPU.")
    ttft_ms: float | None = optional("Time to first token (ms).")
    tpot_ms: float | None = optional("Time per output token (ms).")
    layout: ServeLayout | None = optional("The (decode) layout.")
    decode_batch_per_dp_rank: int | None = optional("Sequences per attention-DP rank.")
    decode_comm_share: float | None = optional("Exposed communication over the decode "
                                               "step.")
    usd_per_million_output_tokens: float | None = optional("USD per million output "
                                                           "tokens.")
    over_20pct: bool | None = optional("True when the decode comm share is above 20 %.")
    speedup_vs_8: float | None = optional("Tokens/s per GPU over 8-GPU domains.")


class ServingCommunication(ResultModel):
    """Question 1 for serving: is it communication-bound on 8-GPU servers?"""

    decode_comm_share_on_8_gpu_servers: float | None = field("Decode comm share, 8-GPU.")
    communication_bound: bool | None = field("True above 20 % (null: nothing meets).")
    best_scale_up_size: int | None = field("The size serving the most tokens/s per GPU.")
    tokens_per_s_per_gpu_gain: float | None = field("Its gain over 8-GPU servers.")


class ServingBlast(ResultModel):
    """Question 2: the blast radius of the chosen domain."""

    blast_radius_gpus: int = field("GPUs one failure takes down.")


class ServingCost(ResultModel):
    """Question 3: the cost per million output tokens."""

    usd_per_million_8: float | None = field("On 8-GPU servers (USD).")
    usd_per_million_best: float | None = optional("At the best size (USD).")
    break_even_premium: float | None = optional("Premium at which the best size breaks "
                                                "even.")
    pays_off: bool | None = optional("True when the best size is cheaper per token.")


class ServingQuestions(ResultModel):
    """The seed's questions for serving."""

    communication_bound: ServingCommunication = field("Question 1.")
    blast_radius: ServingBlast = field("Question 2.")
    cost: ServingCost = field("Question 3.")
    verdict: str = field("The answer in a sentence.")


class ServingResults(ResultModel):
    """Does serving this workload need a supernode?"""

    model: str = field("Model served.")
    accelerator: str = field("Accelerator name.")
    gpus: int = field("GPUs that serve.")
    supernode_premium: float = field("Extra price per GPU-hour in domains above 8 (share).")
    comm_share_line: float = field("The seeds' 20 % line.")
    sizes: list[ServingSize] = field("One row per domain size, 8 first.")
    questions: ServingQuestions = field("The questions.")
    serve_file: str | None = optional("The serve file reviewed.")

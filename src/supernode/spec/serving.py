"""The serving workload document (``serve:`` block or file): model, lengths, load, targets.

Units are in the field names (``_tokens``, ``_ms``, ``_per_s``); the CLI flags of
``supernode serve`` override the file's fields one by one.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from supernode.spec.base import StrictModel
from supernode.spec.model_errors import fail as _fail

#: Longest prompt or generation a serving workload may name (tokens).
MAX_SERVE_TOKENS = 10_000_000


class ServeSpec(StrictModel):
    """What to serve: one model, mean request lengths (or a trace of them), the load
    (concurrency or request rate, neither: offline), precisions and latency targets."""

    model: str | None = Field(None, min_length=1,
                              description="Workload file or preset name of the model.")
    input_tokens: float | None = Field(None, gt=0, le=MAX_SERVE_TOKENS,
                                       description="Mean prompt length (tokens).")
    output_tokens: float | None = Field(None, gt=0, le=MAX_SERVE_TOKENS,
                                        description="Mean generated length (tokens).")
    trace_file: str | None = Field(
        None, min_length=1, description="CSV of request lengths (columns input_tokens, "
        "output_tokens); its means replace input_tokens and output_tokens.")
    concurrency: float | None = Field(None, gt=0, le=1e9,
                                      description="Requests in flight in the whole system.")
    request_rate_per_s: float | None = Field(None, gt=0, le=1e9,
                                             description="Open-loop arrivals, requests/s.")
    precision: Literal["bf16", "fp8", "fp4"] = Field(
        "bf16", description="Math of the dominant GEMMs (every linear layer of a dense "
                            "model, the routed experts of a MoE model).")
    weights_precision: Literal["bf16", "fp8", "fp4"] | None = Field(
        None, description="Storage of those weights; null = precision.")
    kv_cache_precision: Literal["bf16", "fp8"] | None = Field(
        None, description="KV cache; null = fp8 with 8-bit or narrower weights on a part "
                          "with FP8, else bf16.")
    ttft_ms: float | None = Field(None, gt=0, le=1e7, description="Time-to-first-token "
                                                                 "target (ms).")
    tpot_ms: float | None = Field(None, gt=0, le=1e7, description="Time-per-output-token "
                                                                 "target (ms).")
    gpus: int | None = Field(None, gt=0, le=10_000_000,
                             description="GPUs that serve (default: the cluster's).")

    @model_validator(mode="after")
    def _check(self) -> ServeSpec:
        if self.concurrency is not None and self.request_rate_per_s is not None:
            raise _fail("request_rate_per_s", "give concurrency or request_rate_per_s, "
                                              "not both")
        return self

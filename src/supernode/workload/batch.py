"""The default global batch of a training job: the one rule every command applies.

A job without a stated global batch takes 4 Mi tokens a step, at least one sequence per
8 GPUs (Llama 3 405B trained with 2,048 sequences of 8K tokens on 16,384 GPUs: Dubey et
al., "The Llama 3 Herd of Models", 2024, table 4), rounded up so that data parallelism
can take any odd factor of the GPU count.
"""

from __future__ import annotations

import math
from typing import Any

from supernode.spec.workload import WorkloadSpec

#: Default tokens per optimizer step when no global batch is given (4 Mi tokens), and
#: at least one sequence per 8 GPUs (Llama 3 405B: 2,048 x 8K sequences on 16,384 GPUs).
DEFAULT_TOKENS_PER_STEP = 4 * 2**20
DEFAULT_GPUS_PER_SEQUENCE = 8
#: The default batch is a multiple of the GPUs' odd part times 2**this, so that data
#: parallelism can take any odd factor of the GPU count (504 GPUs -> batches of 504).
BATCH_POWER_OF_TWO = 5


def default_global_batch(w: WorkloadSpec, gpus: int) -> int:
    """Sequences per step: 4 Mi tokens, at least one sequence per 8 GPUs, rounded up to
    a multiple of ``odd(gpus) * 2**min(5, twos(gpus))``."""
    return default_batch_reason(w, gpus)[0]


def default_batch_reason(w: WorkloadSpec, gpus: int) -> tuple[int, str]:
    """The default global batch (sequences) and the rule that set it, in words."""
    by_tokens = max(math.ceil(DEFAULT_TOKENS_PER_STEP / w.seq_len), 1)
    by_gpus = math.ceil(gpus / DEFAULT_GPUS_PER_SEQUENCE)
    want = max(by_tokens, by_gpus)
    twos = (gpus & -gpus).bit_length() - 1
    quantum = (gpus >> twos) << min(twos, BATCH_POWER_OF_TWO)
    batch = math.ceil(want / quantum) * quantum
    if by_gpus > by_tokens:
        why = (f"one sequence per {DEFAULT_GPUS_PER_SEQUENCE} GPUs ({by_gpus:,}; 4 Mi tokens "
               f"would be {by_tokens:,})")
    else:
        why = f"4 Mi tokens ({by_tokens:,} sequences)"
    if batch != want:
        why += f", rounded up to a multiple of {quantum:,} (the GPUs' odd factors)"
    return batch, why


def with_default_batch(data: dict[str, Any], w: WorkloadSpec) -> dict[str, Any]:
    """A plan document's fields with ``global_batch_sequences`` set to the default (the
    rule above, on the plan's ``tp x pp x dp x cp`` GPUs), rounded up to a multiple of
    ``micro_batch x dp`` so the plan is legal, when the plan does not give one; ``data``
    unchanged otherwise. Every command that takes explicit plan flags applies this, as
    ``plan`` and ``design`` apply :func:`default_global_batch` to the plans they search."""
    if "global_batch_sequences" in data or "dp" not in data:
        return data
    gpus = (int(data.get("tp", 1)) * int(data.get("pp", 1)) * int(data["dp"])
            * int(data.get("cp", 1)))
    quantum = int(data.get("micro_batch", 1)) * int(data["dp"])
    batch = default_global_batch(w, max(gpus, 1))
    return {**data, "global_batch_sequences": -(-batch // quantum) * quantum}

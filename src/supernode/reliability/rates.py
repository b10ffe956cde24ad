"""Default component failure rates, from published fleet statistics.

Meta's Llama 3 report (Dubey et al., "The Llama 3 Herd of Models", 2024, §3.3.4,
Table 5) counts 419 unexpected interruptions in a 54-day snapshot of pre-training on
16,384 H100 GPUs (GPUs, HBM, hosts, network, software all included). As a rate per GPU
that is 419 / (16,384 x 54 x 24 h) = 1.97e-5 interruptions per GPU-hour, i.e. a mean
time between job interruptions of about 50,700 GPU-hours per GPU. A job spanning n GPUs
is interrupted n times as often (MODELS.md: M_job = M_component / n).
"""

from __future__ import annotations

#: Unexpected interruptions per GPU-hour of a large synchronous training job
#: (Llama 3 report, Table 5: 419 in 54 days on 16,384 H100).
UNEXPECTED_INTERRUPTIONS_PER_GPU_HOUR = 419 / (16_384 * 54 * 24)


def expected_interruptions(gpus: int, duration_s: float) -> float:
    """Expected unexpected interruptions of one job over ``gpus`` GPUs for ``duration_s`` s."""
    return UNEXPECTED_INTERRUPTIONS_PER_GPU_HOUR * gpus * duration_s / 3600.0


def job_mtbf_s(gpus: int) -> float:
    """Mean time between interruptions of a job spanning ``gpus`` GPUs, in seconds."""
    return 3600.0 / (UNEXPECTED_INTERRUPTIONS_PER_GPU_HOUR * gpus)

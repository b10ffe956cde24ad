"""Build a :class:`~supernode.planner.search.PlanTarget` from a cluster and a workload.

Shared by the ``plan``, ``size``, ``fit`` and ``sweep`` commands: load (or take) the
cluster document, grow it to the job's GPUs by whole units
(:mod:`supernode.planner.scaling`), build the step model's system view and pick a
default global batch when none is given.
"""

from __future__ import annotations

import math
from pathlib import Path

from supernode.errors import InputError
from supernode.estimate.system import system_from_cluster
from supernode.planner.economics import default_economics
from supernode.planner.scaling import ScaledCluster, scale_cluster
from supernode.planner.search import PlanTarget
from supernode.spec.cluster import ClusterSpec
from supernode.spec.clusterfile import load_cluster_spec
from supernode.spec.plan import MAX_GLOBAL_BATCH
from supernode.spec.workload import WorkloadSpec
from supernode.workload.presets import load_workload

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


def build_target(cluster: str | Path | ClusterSpec, workload: str | Path | WorkloadSpec,
                 gpus: int | None = None, global_batch: int | None = None,
                 precision: str = "bf16", price_per_gpu_hour: float | None = None,
                 add_tiers: bool = False) -> tuple[PlanTarget, ScaledCluster]:
    """The planning target for ``workload`` on ``cluster`` (grown to ``gpus`` if needed).

    ``cluster``: preset name, file path or an already validated spec. Raises
    :class:`InputError` for bad references or sizes. ``add_tiers``: see
    :func:`~supernode.planner.scaling.scale_cluster` (for derived variants).
    """
    spec = cluster if isinstance(cluster, ClusterSpec) else load_cluster_spec(cluster)
    w = workload if isinstance(workload, WorkloadSpec) else load_workload(workload)
    if gpus is not None and gpus < 1:
        raise InputError("gpus", f"must be >= 1, got {gpus}")
    if global_batch is not None and not 1 <= global_batch <= MAX_GLOBAL_BATCH:
        raise InputError("global_batch", f"must be in [1, {MAX_GLOBAL_BATCH:,}], got "
                                         f"{global_batch}")
    scaled = scale_cluster(spec, gpus, add_tiers=add_tiers)
    system = system_from_cluster(scaled.cluster, precision)
    job = scaled.job_gpus
    notes = list(scaled.notes) + list(system.notes)
    if global_batch is None:
        global_batch, why = default_batch_reason(w, job)
        notes.append(f"global batch {global_batch:,} sequences ({global_batch * w.seq_len:,} "
                     f"tokens) by default: {why}; set --global-batch")
    chip = scaled.cluster.accelerator
    economics = default_economics(chip.name, chip.tdp_w, price_per_gpu_hour)
    target = PlanTarget(w, system, job, global_batch, precision,
                        scaled.cluster.host.accelerators_per_host, economics, tuple(notes))
    return target, scaled

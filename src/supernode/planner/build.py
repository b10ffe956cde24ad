"""Build a :class:`~supernode.planner.search.PlanTarget` from a cluster and a workload.

Shared by the ``plan``, ``size``, ``fit`` and ``sweep`` commands: load (or take) the
cluster document, grow it to the job's GPUs by whole units
(:mod:`supernode.cluster.scaling`), build the step model's system view and pick a
default global batch when none is given.
"""

from __future__ import annotations

from pathlib import Path

from supernode.cluster.load import load_cluster_spec
from supernode.cluster.scaling import ScaledCluster, scale_cluster
from supernode.errors import InputError
from supernode.estimate.system import system_from_cluster
from supernode.planner.economics import default_economics
from supernode.planner.search import PlanTarget
from supernode.spec.cluster import ClusterSpec
from supernode.spec.plan import MAX_GLOBAL_BATCH
from supernode.spec.workload import WorkloadSpec
from supernode.workload.batch import default_batch_reason
from supernode.workload.presets import load_workload


def build_target(cluster: str | Path | ClusterSpec, workload: str | Path | WorkloadSpec,
                 gpus: int | None = None, global_batch: int | None = None,
                 precision: str = "bf16", price_per_gpu_hour: float | None = None,
                 add_tiers: bool = False) -> tuple[PlanTarget, ScaledCluster]:
    """The planning target for ``workload`` on ``cluster`` (grown to ``gpus`` if needed).

    ``cluster``: preset name, file path or an already validated spec. Raises
    :class:`InputError` for bad references or sizes. ``add_tiers``: see
    :func:`~supernode.cluster.scaling.scale_cluster` (for derived variants).
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
    economics = default_economics(chip.name, chip.tdp_w, price_per_gpu_hour,
                                  chip.power_limit_w)
    target = PlanTarget(w, system, job, global_batch, precision,
                        scaled.cluster.host.accelerators_per_host, economics, tuple(notes))
    return target, scaled

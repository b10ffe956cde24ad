"""What the step-time model needs to know of the machine: one neutral description.

A :class:`SystemModel` is built from a loaded cluster (:func:`system_from_cluster`) or
from the ``system`` block of a validation case (:func:`system_from_validation`), so that
both paths run the very same model.
"""

from __future__ import annotations

from dataclasses import dataclass

from supernode.collectives.fabric import Fabric
from supernode.collectives.systems import fabric_from_cluster, fabric_from_validation_system
from supernode.spec.resolve import Cluster
from supernode.units import TFLOPS

#: Share of device memory a training job cannot use for its own tensors: CUDA context,
#: NCCL buffers and caching-allocator fragmentation (PyTorch reserves ~0.5-1 GB of context
#: and NCCL ~1-2 GB per process; fragmentation adds a few percent). An assumption.
MEMORY_RESERVE_FRACTION = 0.05


@dataclass(frozen=True)
class SystemModel:
    """Per-GPU peaks (SI) and the fabric the collectives run on."""

    accelerator: str
    gpus: int
    scale_up_size: int
    peak_flops: float
    memory_bytes: float
    memory_bandwidth_bytes_per_s: float
    fabric: Fabric
    notes: tuple[str, ...] = ()

    @property
    def usable_memory_bytes(self) -> float:
        """Device memory a plan may fill: capacity less the reserve (bytes)."""
        return self.memory_bytes * (1.0 - MEMORY_RESERVE_FRACTION)


def system_from_cluster(cluster: Cluster, precision: str = "bf16") -> SystemModel:
    """Build the step-time model's view of a resolved cluster.

    The fabric comes from the topology (:func:`supernode.collectives.fabric_from_cluster`):
    per-tier bandwidth, latency, per-leaf oversubscription and in-network reduction.
    """
    fabric, borrowed = fabric_from_cluster(cluster)
    notes = ()
    if borrowed:
        notes = (f"no measured collective efficiency for {cluster.accelerator.name}'s scale-up "
                 f"bus: costed with the {fabric.tiers[0].efficiency} table (NVLink values "
                 "borrowed)",)
    return SystemModel(
        accelerator=cluster.accelerator.name,
        gpus=cluster.accelerators,
        scale_up_size=max(cluster.scale_up.size, 1),
        peak_flops=cluster.accelerator.peak(precision),
        memory_bytes=cluster.accelerator.memory_bytes,
        memory_bandwidth_bytes_per_s=cluster.accelerator.memory_bandwidth_bytes_per_s,
        fabric=fabric,
        notes=notes,
    )


def system_from_validation(system: dict) -> SystemModel:
    """Build the model's view of a validation case's ``system`` block.

    Peak comes from the case (``peak_dense_bf16_tflops``); memory capacity and bandwidth
    from the catalog entry named by ``accelerator``.
    """
    from supernode.catalog import find_accelerator
    from supernode.spec.resolve import convert_accelerator

    chip = convert_accelerator(find_accelerator(str(system.get("accelerator")),
                                                path="system.accelerator"))
    peak = system.get("peak_dense_bf16_tflops")
    gpus = int(system["gpus"])
    fabric = fabric_from_validation_system(system, ranks=gpus)
    return SystemModel(
        accelerator=chip.name,
        gpus=gpus,
        scale_up_size=fabric.tiers[0].group_size,  # the job's GPUs per domain
        peak_flops=float(peak) * TFLOPS if peak else chip.peak("bf16"),
        memory_bytes=chip.memory_bytes,
        memory_bandwidth_bytes_per_s=chip.memory_bandwidth_bytes_per_s,
        fabric=fabric,
    )

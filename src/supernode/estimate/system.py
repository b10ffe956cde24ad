"""What the step-time model needs to know of the machine: one neutral description.

A :class:`SystemModel` is built from a loaded cluster (:func:`system_from_cluster`) or
from the ``system`` block of a validation case (:func:`system_from_validation`), so that
both paths run the very same model.
"""

from __future__ import annotations

from dataclasses import dataclass

from supernode.collectives.fabric import (
    Fabric,
    fabric_from_validation_system,
    make_tier,
    scale_out_efficiency_name,
    scale_up_efficiency_name,
    scale_up_table_is_borrowed,
)
from supernode.errors import InputError
from supernode.spec.resolve import Cluster
from supernode.topology.sizing import size_fat_tree
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
    """Build the step-time model's view of a resolved cluster."""
    up = cluster.scale_up
    up_bw = up.bandwidth_per_accelerator_bytes_per_s
    size = max(up.size, 1)
    nvls = bool(up.switch and up.switch.in_network_reduction)
    tiers = []
    if size > 1 and up_bw > 0:
        tiers.append(make_tier("scale_up", size, up_bw,
                               scale_up_efficiency_name(cluster.accelerator.name, up_bw),
                               in_network_reduction=nvls))
    if cluster.supernodes > 1 or not tiers:
        tiers += _scale_out_tiers(cluster, size)
    notes = ()
    if tiers and scale_up_table_is_borrowed(cluster.accelerator.name):
        notes = (f"no measured collective efficiency for {cluster.accelerator.name}'s scale-up "
                 f"bus: costed with the {tiers[0].efficiency} table (nearest in bandwidth)",)
    return SystemModel(
        accelerator=cluster.accelerator.name,
        gpus=cluster.accelerators,
        scale_up_size=size,
        peak_flops=cluster.accelerator.peak(precision),
        memory_bytes=cluster.accelerator.memory_bytes,
        memory_bandwidth_bytes_per_s=cluster.accelerator.memory_bandwidth_bytes_per_s,
        fabric=Fabric(tuple(tiers)),
        notes=notes,
    )


def _scale_out_tiers(cluster: Cluster, inner: int) -> list:
    """Scale-out tiers: ranks under one leaf (no uplink crossed), then the whole tree.

    Traffic that stays under a leaf is not oversubscribed; traffic that crosses tier t
    is slowed by that tier's down:up ratio (the worst ratio on its way up).
    """
    out = cluster.scale_out
    nic_bw = cluster.scale_out_bandwidth_per_accelerator_bytes_per_s
    if out is None or nic_bw <= 0:
        raise InputError("host.nics", "the cluster has no fabric between its accelerators")
    name = scale_out_efficiency_name(nic_bw)
    sizing = size_fat_tree(cluster.hosts, cluster.host.nic_count, out.switch.radix, out.tiers,
                           out.oversubscription, out.rail_optimized)
    per_host = cluster.host.accelerators_per_host
    hosts_per_leaf = sizing.down_ports[0] // (1 if out.rail_optimized else
                                              max(cluster.host.nic_count, 1))
    leaf_ranks = max(hosts_per_leaf, 1) * per_host
    tiers = []
    total = cluster.accelerators
    if out.tiers > 1 and inner < leaf_ranks < total and leaf_ranks % inner == 0 \
            and total % leaf_ranks == 0:
        tiers.append(make_tier("scale_out_leaf", leaf_ranks, nic_bw, name))
    worst = max(out.oversubscription, default=1.0)
    # SHARP on the scale-out tree is not costed (no public calibration case): conservative.
    tiers.append(make_tier("scale_out", total, nic_bw, name, oversubscription=worst))
    return tiers


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
    return SystemModel(
        accelerator=chip.name,
        gpus=gpus,
        scale_up_size=int(system["scale_up_gpus"]),
        peak_flops=float(peak) * TFLOPS if peak else chip.peak("bf16"),
        memory_bytes=chip.memory_bytes,
        memory_bandwidth_bytes_per_s=chip.memory_bandwidth_bytes_per_s,
        fabric=fabric_from_validation_system(system, ranks=gpus),
    )

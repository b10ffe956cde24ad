"""Checkpoints: size from the model state, cost to storage, and the optimal interval.

* Size: weights and optimizer states of every parameter (gradients are not saved), at the
  plan's precision (:data:`supernode.workload.memory.STATE_BYTES`: 2 + 12 = 14 bytes per
  parameter in BF16 mixed precision with Adam).
* Cost ``C`` (seconds training stops): synchronous, the whole state over the storage write
  bandwidth; asynchronous, each GPU's shard copied to host memory over PCIe (the write to
  storage then runs in the background, so the interval can be no shorter than that write).
* Interval: Young (1974) ``T = sqrt(2 C M)``; Daly (2006, "A higher order estimate of the
  optimum checkpoint interval for restart dumps", FGCS 22) ``T = sqrt(2 C M) [1 +
  sqrt(C / 2M) / 3 + (C / 2M) / 9] - C`` for ``C < 2M``, else ``T = M``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from supernode.spec.workload import WorkloadSpec
from supernode.workload.memory import state_bytes
from supernode.workload.params import total_params

GBYTE_PER_S = 1e9
#: Storage bandwidth per host when the cluster does not say. ASSUMPTION: one 100 Gb/s
#: storage link per host (12.5 GB/s), as on DGX-class hosts' storage fabric.
DEFAULT_WRITE_PER_HOST_BYTES_PER_S = 12.5e9
#: Ceiling of the file system. Llama 3 §3.3.1: Tectonic sustains 2 TB/s (7 TB/s peak).
DEFAULT_FILESYSTEM_BYTES_PER_S = 2.0e12


def checkpoint_bytes(w: WorkloadSpec, precision: str = "bf16") -> float:
    """Bytes of one full checkpoint: weights + optimizer states of every parameter."""
    weights, _, optimizer = state_bytes("bf16" if precision == "fp8" else precision)
    return float(total_params(w)) * (weights + optimizer)


def default_bandwidth_bytes_per_s(hosts: int) -> float:
    """Aggregate storage bandwidth of ``hosts`` hosts, capped by the file system (bytes/s)."""
    return min(hosts * DEFAULT_WRITE_PER_HOST_BYTES_PER_S, DEFAULT_FILESYSTEM_BYTES_PER_S)


@dataclass(frozen=True)
class CheckpointCost:
    """Size (bytes), write and read time (s), training stop per checkpoint ``C`` (s)."""

    size_bytes: float
    mode: str
    write_bytes_per_s: float
    read_bytes_per_s: float
    write_s: float
    read_s: float
    blocking_s: float
    min_interval_s: float

    def to_dict(self) -> dict:
        """JSON-ready dict (SI units)."""
        return dict(self.__dict__)


def checkpoint_cost(size_bytes: float, gpus: int, write_bytes_per_s: float,
                    read_bytes_per_s: float, pcie_bytes_per_s: float,
                    mode: str = "async") -> CheckpointCost:
    """Cost of one checkpoint of ``size_bytes`` taken by ``gpus`` GPUs (see module doc)."""
    write_s = size_bytes / write_bytes_per_s
    read_s = size_bytes / read_bytes_per_s
    if mode == "sync":
        blocking, minimum = write_s, 0.0
    else:
        blocking, minimum = size_bytes / gpus / pcie_bytes_per_s, write_s
    return CheckpointCost(size_bytes, mode, write_bytes_per_s, read_bytes_per_s, write_s,
                          read_s, blocking, minimum)


def young_interval_s(cost_s: float, mtbf_s: float) -> float:
    """Young's optimal compute time between checkpoints, ``sqrt(2 C M)`` (s)."""
    return math.sqrt(2.0 * cost_s * mtbf_s)


def daly_interval_s(cost_s: float, mtbf_s: float) -> float:
    """Daly's higher-order optimal compute time between checkpoints (s); ``M`` if C >= 2M."""
    if cost_s >= 2.0 * mtbf_s:
        return mtbf_s
    x = cost_s / (2.0 * mtbf_s)
    return math.sqrt(2.0 * cost_s * mtbf_s) * (1.0 + math.sqrt(x) / 3.0 + x / 9.0) - cost_s

"""Synthetic nccl-tests sweeps for the calibration tests: what the model with known
"true" efficiency tables predicts on an H100 SuperPod unit, with seeded scatter."""

from __future__ import annotations

import numpy as np

from supernode.cluster.load import load_cluster
from supernode.collectives import busbw_bytes_per_s, choose
from supernode.measurements.calfile import calibrated_tables_of
from supernode.measurements.identify import NOISE_FLOOR
from supernode.measurements.model import CollectiveResult, JobContext, MeasurementSet, Timing
from supernode.measurements.placement import place_job

H100 = load_cluster("dgx-h100-superpod-su")
#: The "true" values of the synthetic cluster (packaged: 0.822, 0.6728, 0.8769).
TRUTH = {("nvlink4", "simple_efficiency"): 0.74, ("nvlink4", "in_network_efficiency"): 0.75,
         ("infiniband_ndr", "simple_efficiency"): 0.80}
SIZES = np.array([8 * 4 ** k for k in range(16)], dtype=float)       # 8 B .. 8 GiB


def synthetic(op: str, ranks: int, noise, groups: int = 1, stride: int = 1,
              processes: int | None = None, truth=None) -> MeasurementSet:
    """An nccl-tests sweep the model with the ``truth`` tables predicts, times multiplied
    by ``noise`` (run-to-run scatter)."""
    job = JobContext(ranks=ranks, ranks_source="rank list", ranks_per_host=min(8, processes
                     or ranks), host_count=max(1, (processes or ranks) // 8),
                     processes=processes, groups=groups, group_stride=stride)
    fabric = place_job(H100, job).fabric
    tables = truth or calibrated_tables_of(TRUTH)
    t = np.atleast_1d(choose(op, SIZES, ranks, fabric, tables=tables).time_s) * noise
    bus = busbw_bytes_per_s(op, SIZES, ranks, t)
    rows = tuple(CollectiveResult(int(s), None, "float", "sum", -1,
                                  Timing(float(ti), float(s / ti), float(b)), None, i + 1)
                 for i, (s, ti, b) in enumerate(zip(SIZES, t, bus, strict=True)))
    return MeasurementSet(source=f"synthetic-{op}-{ranks}x{groups}", tool="nccl-tests", op=op,
                          op_source="program", job=job, collectives=rows)


def synthetic_sets(seed: int = 7, truth=None) -> list[MeasurementSet]:
    """One node's all-reduce, all-gather, all-to-all and send/recv, the rails of two
    nodes (NCCL_TESTS_SPLIT MOD 8) and a two-node all-reduce: 1 % scatter per row."""
    rng = np.random.default_rng(seed)

    def noise():
        return np.exp(rng.normal(0.0, NOISE_FLOOR, SIZES.size))
    return [synthetic("all_reduce", 8, noise(), truth=truth),
            synthetic("all_gather", 8, noise(), truth=truth),
            synthetic("all_to_all", 8, noise(), truth=truth),
            synthetic("p2p", 2, noise(), truth=truth),
            synthetic("all_reduce", 2, noise(), groups=8, stride=8, processes=16, truth=truth),
            synthetic("all_reduce", 16, noise(), truth=truth)]

"""Rank groups of a job as accelerator arrays (rows = groups, columns = ranks in order).

Megatron order, tensor-parallel innermost: ``rank = t + tp (c + cp (d + dp s))``, i.e.
``rank = j + tp cp dp s`` with the stage-local index ``j = t + tp (c + cp d)``. Expert
layers re-split ``j`` as ``et + etp (e + ep ed)`` (Megatron-Core's expert decomposition,
the rule :mod:`supernode.estimate.layout` prices). Groups of a pipeline stage ``s``
restricted to the data-parallel replicas ``ds`` (a replica set):

* TP: one row per (d, c), ``tp`` members; CP ring hops: one row per (d, t, c), the pair
  ``c -> c + 1``; EP: one row per (block of ``etp ep`` local ranks, et), members at stride
  ``etp``; ETP: one row per (e, ed), ``etp`` consecutive members; PP: one row per
  (d, c, t), the pair stage ``s -> s'``.
* DP (gradients over ``dp x cp``): one row per t; ``dp_expert`` (over ``edp``): one row
  per (et, e). DP groups always span every replica.
"""

from __future__ import annotations

import numpy as np

from supernode.netsim.jobs import JobModel


def tp_groups(job: JobModel, s: int, ds: np.ndarray) -> np.ndarray:
    """TP groups of stage ``s`` for replicas ``ds`` (rows (d, c), ``tp`` columns)."""
    p = job.plan
    d, c, t = np.meshgrid(ds, np.arange(p.cp), np.arange(p.tp), indexing="ij")
    return job.acc(job.rank(t, c, d, s)).reshape(-1, p.tp)


def cp_pairs(job: JobModel, s: int, ds: np.ndarray, stride: int = 1) -> np.ndarray:
    """CP ring hops ``c -> c + stride`` of stage ``s`` for replicas ``ds`` (rows of 2;
    ``stride`` > 1: the ring level of a hierarchical exchange, one rank of each
    all-to-all group)."""
    p = job.plan
    d, t, c = np.meshgrid(ds, np.arange(p.tp), np.arange(p.cp), indexing="ij")
    a = job.acc(job.rank(t, c, d, s)).ravel()
    b = job.acc(job.rank(t, (c + stride) % p.cp, d, s)).ravel()
    return np.stack([a, b], axis=1)


def cp_groups(job: JobModel, s: int, ds: np.ndarray, size: int) -> np.ndarray:
    """CP groups of ``size`` consecutive CP ranks of stage ``s`` for replicas ``ds`` (rows
    (d, t, block), ``size`` columns): the all-gather / all-to-all groups of the exchange."""
    p = job.plan
    d, t, g, j = np.meshgrid(ds, np.arange(p.tp), np.arange(p.cp // size), np.arange(size),
                             indexing="ij")
    return job.acc(job.rank(t, g * size + j, d, s)).reshape(-1, size)


def _stage_ranks(job: JobModel, s: int, local: np.ndarray) -> np.ndarray:
    """Accelerators of stage ``s``'s local ranks ``j`` (any shape)."""
    p = job.plan
    return job.acc(np.asarray(local) + p.tp * p.cp * p.dp * s)


def _expert_sizes(job: JobModel) -> tuple[int, int, int]:
    """(etp, ep, edp) of the job's expert layers."""
    p = job.plan
    etp = p.etp or p.tp
    return etp, p.ep, (p.tp * p.cp * p.dp) // (etp * p.ep)


def _replica_locals(job: JobModel, ds: np.ndarray) -> np.ndarray:
    """Stage-local indices of the ranks of replicas ``ds`` (sorted)."""
    block = job.plan.tp * job.plan.cp
    return (np.asarray(ds)[:, None] * block + np.arange(block)[None, :]).ravel()


def ep_groups(job: JobModel, s: int, ds: np.ndarray) -> np.ndarray:
    """EP groups of stage ``s`` whose members are all in replicas ``ds`` (rows (block,
    et), ``ep`` columns at stride ``etp``)."""
    etp, ep, _ = _expert_sizes(job)
    local = _replica_locals(job, ds)
    starts = np.unique(local // (etp * ep)) * (etp * ep)
    rows = starts[:, None, None] + np.arange(etp)[None, :, None] + \
        etp * np.arange(ep)[None, None, :]
    keep = np.isin(rows[:, 0, :], local).all(axis=1)
    return _stage_ranks(job, s, rows[keep].reshape(-1, ep))


def etp_groups(job: JobModel, s: int, ds: np.ndarray) -> np.ndarray:
    """Expert-TP groups of stage ``s`` in replicas ``ds`` (rows (e, ed), ``etp`` columns)."""
    etp, _, _ = _expert_sizes(job)
    local = _replica_locals(job, ds)
    starts = np.unique(local // etp) * etp
    rows = starts[:, None] + np.arange(etp)[None, :]
    keep = np.isin(rows, local).all(axis=1)
    return _stage_ranks(job, s, rows[keep])


def pp_pairs(job: JobModel, s: int, s_next: int, ds: np.ndarray) -> np.ndarray:
    """PP pairs stage ``s`` -> ``s_next`` for replicas ``ds`` (rows of 2)."""
    p = job.plan
    d, c, t = np.meshgrid(ds, np.arange(p.cp), np.arange(p.tp), indexing="ij")
    a = job.acc(job.rank(t, c, d, s)).ravel()
    b = job.acc(job.rank(t, c, d, s_next)).ravel()
    return np.stack([a, b], axis=1)


def dp_groups(job: JobModel, s: int, dim: str) -> np.ndarray:
    """Gradient groups of stage ``s``: ``dp`` (over dp x cp) or ``dp_expert`` (over edp)."""
    p = job.plan
    if dim == "dp":
        e = np.arange(p.dp * p.cp)
        c, d = e % p.cp, e // p.cp
        return np.concatenate([job.acc(job.rank(t, c, d, s))[None, :] for t in range(p.tp)])
    etp, ep, edp = _expert_sizes(job)
    et, ex, ed = np.meshgrid(np.arange(etp), np.arange(ep), np.arange(edp), indexing="ij")
    local = et + etp * (ex + ep * ed)
    return _stage_ranks(job, s, local.reshape(etp * ep, edp))


def replica_sets(job: JobModel, aggregate: bool) -> list[np.ndarray]:
    """Replica sets simulated as one lockstep unit: all replicas (aggregate), or each
    set of replicas joined by expert parallelism (``etp ep / (tp cp)`` replicas)."""
    dp = job.plan.dp
    if aggregate:
        return [np.arange(dp)]
    etp, ep, _ = _expert_sizes(job)
    size = max(1, -(-(etp * ep) // (job.plan.tp * job.plan.cp)))
    size = size if dp % size == 0 else dp
    return [np.arange(i, i + size) for i in range(0, dp, size)]

"""Rank groups of a job as accelerator arrays (rows = groups, columns = ranks in order).

Megatron order, tensor-parallel innermost: ``rank = t + tp (c + cp (d + dp s))``. Groups of
a pipeline stage ``s`` restricted to the data-parallel replicas ``ds`` (a replica set):

* TP: one row per (d, c), ``tp`` members; CP ring hops: one row per (d, t, c), the pair
  ``c -> c + 1``; EP: the ``e = c + cp d`` index space cut into blocks of ``ep``, one row per
  (t, block); PP: one row per (d, c, t), the pair stage ``s -> s'``.
* DP (gradients over ``dp x cp``): one row per t; ``dp_expert`` (over ``dp cp / ep``): one
  row per (t, position in EP block). DP groups always span every replica.
"""

from __future__ import annotations

import numpy as np

from supernode.netsim.jobs import JobModel


def tp_groups(job: JobModel, s: int, ds: np.ndarray) -> np.ndarray:
    """TP groups of stage ``s`` for replicas ``ds`` (rows (d, c), ``tp`` columns)."""
    p = job.plan
    d, c, t = np.meshgrid(ds, np.arange(p.cp), np.arange(p.tp), indexing="ij")
    return job.acc(job.rank(t, c, d, s)).reshape(-1, p.tp)


def cp_pairs(job: JobModel, s: int, ds: np.ndarray) -> np.ndarray:
    """CP ring hops ``c -> c+1`` of stage ``s`` for replicas ``ds`` (rows of 2)."""
    p = job.plan
    d, t, c = np.meshgrid(ds, np.arange(p.tp), np.arange(p.cp), indexing="ij")
    a = job.acc(job.rank(t, c, d, s)).ravel()
    b = job.acc(job.rank(t, (c + 1) % p.cp, d, s)).ravel()
    return np.stack([a, b], axis=1)


def ep_groups(job: JobModel, s: int, ds: np.ndarray) -> np.ndarray:
    """EP groups of stage ``s`` whose replicas are all in ``ds`` (rows (t, block))."""
    p = job.plan
    e = (np.arange(p.cp)[None, :] + p.cp * np.asarray(ds)[:, None]).ravel()
    blocks = np.unique(e // p.ep)
    members = blocks[:, None] * p.ep + np.arange(p.ep)[None, :]
    c, d = members % p.cp, members // p.cp
    rows = [job.acc(job.rank(t, c, d, s)) for t in range(p.tp)]
    return np.concatenate(rows, axis=0)


def pp_pairs(job: JobModel, s: int, s_next: int, ds: np.ndarray) -> np.ndarray:
    """PP pairs stage ``s`` -> ``s_next`` for replicas ``ds`` (rows of 2)."""
    p = job.plan
    d, c, t = np.meshgrid(ds, np.arange(p.cp), np.arange(p.tp), indexing="ij")
    a = job.acc(job.rank(t, c, d, s)).ravel()
    b = job.acc(job.rank(t, c, d, s_next)).ravel()
    return np.stack([a, b], axis=1)


def dp_groups(job: JobModel, s: int, dim: str) -> np.ndarray:
    """Gradient groups of stage ``s``: ``dp`` (over dp x cp) or ``dp_expert``."""
    p = job.plan
    e = np.arange(p.dp * p.cp)
    c, d = e % p.cp, e // p.cp
    rows = []
    for t in range(p.tp):
        ranks = job.rank(t, c, d, s)
        if dim == "dp":
            rows.append(job.acc(ranks)[None, :])
        else:
            block_pos = e % p.ep
            rows += [job.acc(ranks[block_pos == j])[None, :] for j in range(p.ep)]
    return np.concatenate(rows, axis=0)


def replica_sets(job: JobModel, aggregate: bool) -> list[np.ndarray]:
    """Replica sets simulated as one lockstep unit: all replicas (aggregate), or each
    set of replicas joined by expert parallelism (``max(1, ep // cp)`` replicas)."""
    dp = job.plan.dp
    if aggregate:
        return [np.arange(dp)]
    size = max(1, job.plan.ep // job.plan.cp)
    size = size if dp % size == 0 else dp
    return [np.arange(i, i + size) for i in range(0, dp, size)]

"""The deployments a search tries for a number of GPUs: parallel layouts and batches.

Layouts: ``tp``, ``dp`` and ``pp`` powers of two (and the whole GPU count) whose product
divides the GPUs; ``dp > 1`` (attention data parallelism) and ``ep > 1`` only for MoE
models, ``ep`` a divisor of the experts and of ``tp * dp``. A field given is held. Batches:
a geometric grid (four steps per doubling) up to :data:`MAX_BATCH`, plus each layout's own
KV-cache limit, so the largest batch that fits is always among them.
"""

from __future__ import annotations

import numpy as np

from supernode.serve.deploy import Deployments
from supernode.spec.workload import WorkloadSpec

#: Largest batch per attention-DP rank a search tries (sequences).
MAX_BATCH = 16384
#: The batch grid: 2^(k/4), rounded, 1 .. MAX_BATCH.
BATCH_GRID = np.unique(np.round(2.0 ** (np.arange(0, 4 * 14 + 1) / 4.0)).astype(np.int64))


def _sizes(gpus: int) -> list[int]:
    out = {1 << k for k in range(0, 20) if (1 << k) <= gpus}
    out.add(gpus)
    return sorted(s for s in out if gpus % s == 0)


def layouts(w: WorkloadSpec, gpus: int, tp: int | None = None, pp: int | None = None,
            dp: int | None = None, ep: int | None = None,
            max_tp: int | None = None) -> Deployments:
    """Every layout of one instance on at most ``gpus`` GPUs (instances fill the GPUs:
    the instance's GPUs divide ``gpus``); given fields are held, ``max_tp`` caps TP."""
    rows: list[tuple[int, int, int, int]] = []
    moe = w.moe is not None
    for t in ([tp] if tp else _sizes(gpus)):
        if max_tp and not tp and t > max_tp:
            continue
        for d in ([dp] if dp else (_sizes(gpus // t) if moe and gpus % t == 0 else [1])):
            for s in ([pp] if pp else _sizes(gpus // (t * d)) if gpus % (t * d) == 0 else []):
                if gpus % (t * d * s):
                    continue
                width = t * d
                choices = [ep] if ep else ([e for e in _sizes(width) if w.moe is not None
                                            and w.moe.experts % e == 0] if moe else [1])
                rows += [(t, s, d, e) for e in choices if e and width % e == 0]
    if not rows:
        return Deployments.of(tp=np.zeros(0), pp=np.zeros(0), dp=np.zeros(0), ep=np.zeros(0),
                              batch=np.zeros(0))
    a = np.array(rows, dtype=np.int64)
    return Deployments.of(tp=a[:, 0], pp=a[:, 1], dp=a[:, 2], ep=a[:, 3], batch=1)


def with_batches(layout: Deployments, limits: np.ndarray, batch: int | None = None
                 ) -> Deployments:
    """Each layout crossed with the batch grid below its KV limit (``limits``) and the
    limit itself; or with ``batch`` alone when given."""
    n = layout.tp.size
    if batch:
        grid = np.full((n, 1), int(batch))
    else:
        cap = np.clip(np.floor(limits), 1, MAX_BATCH).astype(np.int64)[:, None]
        grid = np.concatenate([np.broadcast_to(BATCH_GRID, (n, BATCH_GRID.size)), cap], axis=1)
        grid = np.where(grid <= cap, grid, cap)
    index = np.repeat(np.arange(n), grid.shape[1])
    sel = layout.select(index)
    return Deployments.of(tp=sel.tp, pp=sel.pp, dp=sel.dp, ep=sel.ep, batch=grid.ravel())

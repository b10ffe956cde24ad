"""Splitting a job into segments that each sit inside one scale-up domain.

A job of ``G`` GPUs with tensor-parallel size ``t`` keeps every TP group inside a supernode
when each domain it uses holds a multiple of ``t`` of its GPUs (ranks follow GPU order, so
TP groups are aligned runs of ``t`` ranks). The placement policies go further and cut the
job into equal **segments** (Slurm's ``--segment``): :func:`segment_size` picks the largest
one that fits a domain and that an empty cluster can hold; :func:`best_window` finds the
run of consecutive units (cells or domains) that holds the segments inside the fewest port
groups and domains.
"""

from __future__ import annotations

import numpy as np


def divisors_desc(n: int) -> list[int]:
    """Divisors of ``n`` (≥ 1), largest first."""
    small = [d for d in range(1, int(n**0.5) + 1) if n % d == 0]
    return sorted({*small, *(n // d for d in small)}, reverse=True)


def segment_size(gpus: int, tp: int, domain_size: int, domains: int) -> int:
    """GPUs per segment: the whole job when it fits one domain, else the largest divisor
    ``p`` of ``gpus`` with ``tp | p``, ``p ≤ domain_size`` and room for ``gpus / p``
    segments in ``domains`` empty domains; ``tp`` when none (every TP group in a domain)."""
    if gpus <= domain_size:
        return gpus
    for p in divisors_desc(gpus):
        if p <= domain_size and p % tp == 0 and domains * (domain_size // p) >= gpus // p:
            return p
    return tp


def best_window(capacity: np.ndarray, free: np.ndarray, first_group: np.ndarray,
                last_group: np.ndarray, domains: np.ndarray, needed: int,
                one_group: bool) -> tuple[int, int] | None:
    """The run ``[a, b)`` of consecutive units holding ``needed`` segments.

    ``capacity``: segments each unit holds; ``free``: its free GPUs; ``first_group`` and
    ``last_group``: the port groups of its first and last GPU; ``domains``: its domain (all
    non-decreasing). Runs are ranked by port groups spanned, then domains spanned, then
    free GPUs left over (best fit), then position. ``one_group``: only runs inside one
    port group. None when no run holds them.
    """
    n = len(capacity)
    if n == 0 or int(capacity.sum()) < needed:
        return None
    prefix = np.concatenate([[0], np.cumsum(capacity)])
    ends = np.searchsorted(prefix, prefix[:-1] + needed, side="left")
    starts = ((ends <= n) & (capacity > 0)).nonzero()[0]
    if len(starts) == 0:
        return None
    ends = ends[starts]
    span_groups = last_group[ends - 1] - first_group[starts] + 1
    if one_group:
        keep = span_groups == 1
        starts, ends, span_groups = starts[keep], ends[keep], span_groups[keep]
        if len(starts) == 0:
            return None
    span_domains = domains[ends - 1] - domains[starts] + 1
    free_prefix = np.concatenate([[0], np.cumsum(free)])
    leftover = free_prefix[ends] - free_prefix[starts]
    best = np.lexsort((starts, leftover, span_domains, span_groups))[0]
    return int(starts[best]), int(ends[best])


def fill_order(capacity: np.ndarray, free: np.ndarray) -> np.ndarray:
    """Units of a run in the order segments go to them: most segments first (fewest units
    used), then the least free (best fit), then position."""
    units = np.arange(len(capacity))
    return np.lexsort((units, free, -capacity))

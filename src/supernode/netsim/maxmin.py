"""Max-min fair rates by progressive filling, over flow classes with multiplicities.

A *flow class* stands for flows that progress at one common rate: ``k`` identical flows
with the same path, or the coupled flows of one collective step (every member of a ring
moves at the pace of the slowest). Class ``c`` puts ``m[c, l]`` flows on link ``l``
(fractions when a flow is split over several paths). Progressive filling raises the rate
of every unfrozen class together; when a link fills (``sum_c m[c, l] r_c = C_l``) every
class crossing it is frozen, that link being its bottleneck. The result is the max-min
fair allocation: no class can go faster without slowing one that is no faster than it.
With one flow per class and ``m`` in {0, 1} this is textbook per-flow max-min fairness
(Bertsekas & Gallager, *Data Networks*, §6.5.2).
"""

from __future__ import annotations

import numpy as np

#: Relative tolerance for "this link filled in the same round".
FILL_TOL = 1e-9


def max_min_rates(ptr: np.ndarray, links: np.ndarray, mult: np.ndarray,
                  capacity: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-flow rates (bytes/s) of classes in CSR form, and each class's bottleneck link.

    Class ``c`` uses ``links[ptr[c]:ptr[c+1]]`` (global link ids, bytes/s capacities in
    ``capacity``) with ``mult`` flows on each. A class without links gets rate ``inf`` and
    bottleneck -1. Deterministic: the same input gives the same output bit for bit.
    """
    n = ptr.size - 1
    counts = np.diff(ptr)
    cls = np.repeat(np.arange(n), counts)
    rate = np.zeros(n)
    bottleneck = np.full(n, -1, dtype=np.int64)
    rate[counts == 0] = np.inf
    if links.size == 0:
        return rate, bottleneck
    used, inv = np.unique(links, return_inverse=True)
    residual = capacity[used].astype(float).copy()
    active = counts > 0
    # entries of classes still rising: frozen classes' entries are dropped every round
    # (their weight is zero, so the sums over the rest are the same numbers)
    e_cls, e_link, e_mult = cls, inv, np.asarray(mult, dtype=float)
    while active.any():
        w = np.bincount(e_link, weights=e_mult, minlength=used.size)
        live = w > 0
        inc = np.full(used.size, np.inf)
        inc[live] = np.maximum(residual[live], 0.0) / w[live]
        delta = float(inc.min())
        rate[active] += delta
        residual[live] -= delta * w[live]
        full = live & (inc <= delta * (1.0 + FILL_TOL) + 1e-300)
        residual[full] = 0.0
        entries = np.flatnonzero(full[e_link])
        bottleneck[e_cls[entries]] = used[e_link[entries]]
        active[e_cls[entries]] = False
        keep = active[e_cls]
        e_cls, e_link, e_mult = e_cls[keep], e_link[keep], e_mult[keep]
    return rate, bottleneck


def check_max_min(ptr: np.ndarray, links: np.ndarray, mult: np.ndarray,
                  capacity: np.ndarray, rate: np.ndarray, rtol: float = 1e-6) -> list[str]:
    """Violations of feasibility and max-min fairness (empty list: none). For tests.

    Feasible: no link carries more than its capacity. Fair: every class with links has a
    link that is full and on which no other class has a higher rate.
    """
    n = ptr.size - 1
    cls = np.repeat(np.arange(n), np.diff(ptr))
    problems: list[str] = []
    load = np.bincount(links, weights=mult * rate[cls], minlength=capacity.size)
    over = np.flatnonzero(load > capacity * (1 + rtol) + 1e-9)
    problems += [f"link {link} over capacity" for link in over.tolist()]
    full = load >= capacity * (1 - rtol)
    top = np.zeros(capacity.size)
    np.maximum.at(top, links, np.where(mult > 0, rate[cls], 0.0))
    for c in range(n):
        mine = links[ptr[c]:ptr[c + 1]][mult[ptr[c]:ptr[c + 1]] > 0]
        if mine.size == 0:
            continue
        ok = full[mine] & (rate[c] >= top[mine] * (1 - rtol))
        if not ok.any():
            problems.append(f"class {c} has no bottleneck link")
    return problems

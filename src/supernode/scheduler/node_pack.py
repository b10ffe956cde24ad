"""``node-pack``: what Slurm does without a topology plugin (issue 26).

Slurm's ``select/cons_tres`` with no ``topology/tree`` or ``topology/block`` sees nodes
(hosts), not racks or switches: it gives a job the fewest nodes that hold it, taking nodes
in index order (their weight is equal), and packs a job smaller than a node onto one node
(Slurm documentation, "Consumable Resources in Slurm" and ``select/cons_tres``; nodes of
equal weight are allocated lowest-numbered first). The policy:

* a job of at most one node's GPUs: the node with the fewest free GPUs that holds it
  (best fit; ties: the lowest-numbered), its GPUs from the lowest index;
* a larger job: whole free nodes, lowest-numbered first, and the remainder best-fit on
  one more node; when too few nodes are wholly free, the nodes with the most free GPUs
  first (the fewest nodes), lowest-numbered on ties.

It never looks at supernodes or port groups, so TP groups land wherever the node order
puts them: a topology-blind baseline that, unlike ``random`` and ``first-fit``, packs whole
nodes as a real scheduler does.
"""

from __future__ import annotations

import numpy as np

from supernode.scheduler.state import Occupancy


def node_pack(gpus: int, state: Occupancy) -> np.ndarray | None:
    """Sorted GPU indices for a job of ``gpus`` GPUs by the module's rule (None: wait)."""
    if gpus > state.total_free:
        return None
    free, size = state.host_free, state.host_size
    one = _best_fit_host(free, gpus)
    if one is not None:
        return _take(state, [(one, gpus)])
    whole = (free == size).nonzero()[0]
    picks: list[tuple[int, int]] = []
    left = gpus
    for host in whole:
        if left < size[host]:
            break
        picks.append((int(host), int(size[host])))
        left -= int(size[host])
    if left:
        used = {h for h, _ in picks}
        rest = free.copy()
        rest[list(used)] = 0
        fit = _best_fit_host(rest, left)
        if fit is not None:
            picks.append((fit, left))
        else:  # too few whole nodes: the most free nodes first, lowest-numbered on ties
            order = np.lexsort((np.arange(len(rest)), -rest))
            for host in order:
                if left == 0 or rest[host] == 0:
                    break
                k = min(int(rest[host]), left)
                picks.append((int(host), k))
                left -= k
    return _take(state, picks)


def _best_fit_host(free: np.ndarray, gpus: int) -> int | None:
    """The host with the fewest free GPUs that holds ``gpus`` (lowest index on ties)."""
    fits = (free >= gpus).nonzero()[0]
    if len(fits) == 0:
        return None
    return int(fits[np.argmin(free[fits])])


def _take(state: Occupancy, picks: list[tuple[int, int]]) -> np.ndarray:
    parts = [state.free_in(int(state.host_start[h]), int(state.host_start[h] + state.host_size[h]))
             [:k] for h, k in picks]
    return np.sort(np.concatenate(parts))

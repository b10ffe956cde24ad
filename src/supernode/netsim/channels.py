"""Ring and chain channels: the orders in which each channel visits a group's ranks.

The orders follow the channel rule of the shared schedules
(:func:`supernode.collectives.algorithms.ring_channels`), so the flows load the links the
α-β model says they load:

* a group over several parts (domains): ``C`` = its smallest part's size channels;
  channel ``c`` enters and leaves every part once, leaving through a different rank (and
  NIC) each, and entering the next part at the rank of the same local index (the same
  rail: no PXN hop): inside a switched part the members from ``c`` round to ``c - 1``,
  in the next part backwards from ``c - 1`` to ``c``, and so on; inside an even full mesh
  Walecki's Hamiltonian paths (``i, i+1, i-1, i+2, ...``, ending at ``i + g/2``), forward
  and backward in turn (the ``g/2`` paths and their reverses use every directed link
  once, each rank ending one path);
* one part: a switch runs one ring; a full mesh ``g - 1`` rotations ``i -> i + k``
  (RCCL's rings over xGMI, one link each); a torus one ring each way (2 ports).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np


@lru_cache(maxsize=64)
def walecki_paths(g: int) -> np.ndarray | None:
    """``g x g`` local orders: row ``c`` is a Hamiltonian path of the complete graph on
    ``g`` (even) vertices; together the rows use every directed edge once (None if odd)."""
    if g < 2 or g % 2:
        return None
    half = g // 2
    rows = []
    for i in range(half):
        path = [i]
        for k in range(1, g):
            step = (k + 1) // 2
            path.append((i + step) % g if k % 2 else (i - step) % g)
        rows.append(path)
    out = np.array(rows + [p[::-1] for p in rows], dtype=np.int64)
    out.flags.writeable = False
    return out


def _segment(g: int, c: int, block: int, kind: str) -> np.ndarray:
    """Local order of channel ``c`` through part number ``block`` of ``g`` members: ends
    where the next part's segment starts (same local index), alternating direction."""
    paths = walecki_paths(g) if kind == "full_mesh" else None
    if paths is not None:
        half = g // 2
        row = paths[c % half] if (c < half) == (block % 2 == 0) else paths[c % half + half]
        return row
    forward = (np.arange(g) + c) % g            # c, c+1, ..., c-1
    return forward if block % 2 == 0 else forward[::-1]


def block_bounds(domains: np.ndarray) -> np.ndarray:
    """Start offsets of the runs of equal domain ids in a row, plus its length."""
    starts = np.flatnonzero(np.concatenate([[True], domains[1:] != domains[:-1]]))
    return np.append(starts, domains.size)


def channel_orders(rows: np.ndarray, bounds: np.ndarray, kind: str) -> np.ndarray:
    """``C x R x n`` visiting orders of every channel for rows sharing one block layout
    (``bounds`` from :func:`block_bounds`); ``kind`` is the parts' scale-up layout."""
    sizes = np.diff(bounds)
    if sizes.size > 1:
        channels = int(sizes.min())
        orders = []
        for c in range(channels):
            parts = [rows[:, bounds[b] + _segment(int(sizes[b]), c, b, kind)]
                     for b in range(sizes.size)]
            orders.append(np.concatenate(parts, axis=1))
        return np.stack(orders)
    if kind == "torus":
        return np.stack([rows, rows[:, ::-1]])
    return rows[None]


def ring_hops(rows: np.ndarray, bounds: np.ndarray, kind: str
              ) -> tuple[np.ndarray, np.ndarray]:
    """``(src, dst)`` of every ring hop of every channel (flattened)."""
    if np.diff(bounds).size == 1 and kind == "full_mesh" and rows.shape[1] > 2:
        n = rows.shape[1]
        src = np.concatenate([rows for _ in range(1, n)], axis=1)
        dst = np.concatenate([np.roll(rows, -k, axis=1) for k in range(1, n)], axis=1)
        return src.ravel(), dst.ravel()
    orders = channel_orders(rows, bounds, kind)
    return orders.ravel(), np.roll(orders, -1, axis=2).ravel()


def chain_hops(rows: np.ndarray, bounds: np.ndarray, kind: str, reverse: bool = False
               ) -> tuple[np.ndarray, np.ndarray]:
    """``(src, dst)`` of every hop of pipelined chains (no wrap), one per channel."""
    orders = channel_orders(rows, bounds, "switch" if kind == "full_mesh" and np.diff(
        bounds).size == 1 else kind)
    if reverse:
        orders = orders[:, :, ::-1]
    return orders[:, :, :-1].ravel(), orders[:, :, 1:].ravel()

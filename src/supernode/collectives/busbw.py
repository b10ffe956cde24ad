"""Algorithm and bus bandwidth as nccl-tests defines them (nccl-tests ``doc/PERFORMANCE.md``).

Message size ``S`` follows nccl-tests: all_reduce, broadcast, reduce, p2p: the buffer per
rank; all_gather: the total output (each rank contributes ``S/n``); reduce_scatter: the
total input; all_to_all: each rank's total send size.

* ``algbw = S / t`` (bytes/s).
* ``busbw = algbw · factor(n)``: ``2(n-1)/n`` for all_reduce, ``(n-1)/n`` for all_gather,
  reduce_scatter and all_to_all, ``1`` for broadcast, reduce and p2p. The factor is the
  per-rank wire traffic of the bandwidth-optimal ring (Thakur et al. 2005), so busbw is
  comparable with the link bandwidth whatever ``n``.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from supernode import bounds
from supernode.errors import InputError
from supernode.units import FloatLike

OPS: tuple[str, ...] = (
    "all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast", "reduce", "p2p",
)
#: Largest message size ``S`` any command or file takes, bytes (1 TiB; its home is
#: :mod:`supernode.bounds`).
MAX_MESSAGE_BYTES = bounds.MAX_MESSAGE_BYTES


def check_op(op: str) -> str:
    """Return ``op`` if it is a known collective, else raise :class:`InputError`."""
    if op not in OPS:
        raise InputError("op", f"unknown collective {op!r}; known: {', '.join(OPS)}")
    return op


def busbw_factor(op: str, ranks: npt.ArrayLike) -> FloatLike:
    """nccl-tests bus-bandwidth factor (dimensionless, vectorised over ``ranks``).

    Equal to the per-rank ring wire traffic divided by ``S``. Zero for one rank of the
    collective ops (nothing moves); one for p2p.
    """
    check_op(op)
    n = np.asarray(ranks, dtype=float)
    if op == "all_reduce":
        factor = 2.0 * (n - 1.0) / n
    elif op in ("all_gather", "reduce_scatter", "all_to_all"):
        factor = (n - 1.0) / n
    elif op in ("broadcast", "reduce"):
        factor = np.where(n > 1, 1.0, 0.0)
    else:
        factor = np.ones_like(n)
    return float(factor) if factor.ndim == 0 else factor


def algbw_bytes_per_s(message_bytes: npt.ArrayLike, time_s: npt.ArrayLike) -> FloatLike:
    """Algorithm bandwidth S/t in bytes/s (vectorised; inf for zero time)."""
    s = np.asarray(message_bytes, dtype=float)
    t = np.asarray(time_s, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(t > 0, s / np.where(t > 0, t, 1.0), np.inf)
    return float(out) if out.ndim == 0 else out


def busbw_bytes_per_s(op: str, message_bytes: npt.ArrayLike, ranks: npt.ArrayLike,
                      time_s: npt.ArrayLike) -> FloatLike:
    """Bus bandwidth in bytes/s: algbw · :func:`busbw_factor` (vectorised)."""
    out = np.asarray(algbw_bytes_per_s(message_bytes, time_s)) * np.asarray(
        busbw_factor(op, ranks))
    return float(out) if out.ndim == 0 else out


def time_from_busbw_s(op: str, message_bytes: npt.ArrayLike, ranks: npt.ArrayLike,
                      busbw: npt.ArrayLike) -> FloatLike:
    """Inverse of :func:`busbw_bytes_per_s`: seconds for a bus bandwidth in bytes/s."""
    b = np.asarray(busbw, dtype=float)
    if np.any(b <= 0):
        raise InputError("busbw", "bus bandwidth must be > 0")
    out = np.asarray(message_bytes, dtype=float) * np.asarray(busbw_factor(op, ranks)) / b
    return float(out) if out.ndim == 0 else out

"""Closed-form metrics of torus/mesh and hybrid scale-up domains (definitions in
:mod:`supernode.topology.domain_metrics`).

Torus/mesh of dims ``d_1..d_n`` (``N = prod d_i``), Dally & Towles, *Principles and
Practices of Interconnection Networks* (2004), ch. 3 (cuts, bisection) and ch. 5 (tori):

* links per dimension: ``N`` with wrap-around and ``d > 2``; ``N/2`` for ``d == 2``;
  ``N (d-1)/d`` without wrap-around;
* diameter ``sum floor(d_i/2)`` with wrap-around, ``sum (d_i - 1)`` without;
* mean distance: ``sum_i (N/d_i)^2 T(d_i) / (N (N-1))`` over ordered pairs, where ``T(d)``
  is the sum of distances over ordered pairs of one ring (``d^3/4`` even, ``d(d^2-1)/4`` odd)
  or path (``(d^3 - d)/3``), because distance is additive over dimensions;
* bisection: the plane cut across the longest dimension ``k`` crosses ``2N/k`` links with
  wrap-around (``N/k`` without, or when ``k == 2``). It is the minimum balanced cut when
  ``k`` is even (checked exhaustively on small instances in the tests); when ``k`` is odd
  the two slabs differ by ``N/k`` accelerators.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from supernode.spec.resolved import ports_per_dimension
from supernode.topology.domain_metrics import (
    DomainMetrics,
    _pairs,
    chip_cut,
    full_mesh_metrics,
    prefix_cut,
)
from supernode.topology.graph import balanced_loads


def _dim_links(n: int, d: int, wrap: bool) -> int:
    if d < 2:
        return 0
    if d == 2:
        return n // 2
    return n if wrap else n // d * (d - 1)


def _ring_distance_sum(d: int, wrap: bool) -> int:
    if d < 2:
        return 0
    if wrap and d > 2:
        return d**3 // 4 if d % 2 == 0 else d * (d * d - 1) // 4
    return (d**3 - d) // 3


def cut_axis(dims: Sequence[int], bandwidths: Sequence[float]) -> int:
    """Dimension the canonical bisection cuts: the longest, the slowest among equals."""
    longest = max(dims)
    return min((i for i, d in enumerate(dims) if d == longest), key=lambda i: bandwidths[i])


def torus_board_links(dims: Sequence[int], wrap: bool, per_host: int | None) -> list[int]:
    """Edges per dimension whose two ends share a host (first dimension fastest, hosts of
    ``per_host`` consecutive accelerators)."""
    n = math.prod(dims)
    if per_host is None:
        return [0] * len(dims)
    index = np.arange(n, dtype=np.int64)
    out = []
    for axis, d in enumerate(dims):
        stride = math.prod(dims[:axis])
        c = (index // stride) % d
        if d < 2:
            out.append(0)
            continue
        forward = c + 1 < d
        other = np.where(forward, index + stride, index - (d - 1) * stride)
        keep = forward | (wrap and d > 2)
        out.append(int(np.count_nonzero(keep & (index // per_host == other // per_host))))
    return out


def torus_metrics(
    dims: Sequence[int], wrap: bool, bandwidths: Sequence[float], count: int = 1,
    per_host: int | None = None,
) -> DomainMetrics:
    """Torus (``wrap``) or mesh of ``dims``; dimension ``i`` at ``bandwidths[i]`` bytes/s per
    direction; ``count`` links bundled per neighbour pair."""
    n = math.prod(dims)
    per_dim = [_dim_links(n, d, wrap) for d in dims]
    total = sum((n // d) ** 2 * _ring_distance_sum(d, wrap) for d in dims)
    axis = cut_axis(dims, bandwidths)
    k = dims[axis]
    crossing = 0 if k < 2 else n // k * (2 if wrap and k > 2 else 1)
    ports = ports_per_dimension(dims)
    diameter = sum((d // 2 if wrap else d - 1) if d > 1 else 0 for d in dims)
    return DomainMetrics(
        size=n,
        links={"scale_up": sum(per_dim) * count},
        board_links={"scale_up": sum(torus_board_links(dims, wrap, per_host)) * count},
        diameter_hops=diameter,
        mean_hops=total / (n * (n - 1)) if n > 1 else 0.0,
        bisection_bytes_per_s=crossing * count * bandwidths[axis],
        injection_bytes_per_s=sum(p * count * b for p, b in zip(ports, bandwidths, strict=True)),
    )


def group_metrics(
    kind: str, size: int, dims: Sequence[int] | None, bandwidth: float, links: int,
    per_host: int | None,
) -> tuple[DomainMetrics, int]:
    """Metrics of one hybrid group and its distinct adjacent pairs (edges)."""
    if kind == "full_mesh":
        count = max(1, links // max(1, size - 1))
        return full_mesh_metrics(size, bandwidth, count, per_host), _pairs(size)
    dims = tuple(dims or (size,))
    wrap = kind == "torus"
    ports = sum(ports_per_dimension(dims))
    count = max(1, links // max(1, ports))
    edges = sum(_dim_links(size, d, wrap) for d in dims)
    return torus_metrics(dims, wrap, [bandwidth] * len(dims), count, per_host), edges


def hybrid_metrics(
    n: int, group_size: int, group_kind: str, group_dims: Sequence[int] | None,
    group_links: int, uplinks: int, chips: int, bandwidth: float, radix: int | None = None,
    per_host: int | None = None, on_board: bool = False,
) -> DomainMetrics:
    """Hybrid: ``G = n / group_size`` groups (full mesh, mesh or torus inside) plus
    ``uplinks`` per accelerator spread over ``chips`` switch chips. When every accelerator
    reaches every chip (``uplinks >= chips``) any two are at most 2 links apart, so the
    diameter is 2 and the mean ``(2 P - E) / P`` (``P`` pairs, ``E`` adjacent pairs inside
    groups). Bisection: group halves when ``G >= 2``, else the group's own canonical halves
    plus the switch tier."""
    groups = n // group_size
    grp, edges = group_metrics(group_kind, group_size, group_dims, bandwidth, group_links,
                               per_host)
    if groups >= 2:
        crossing, direct = prefix_cut(n, groups // 2 * group_size, uplinks, chips), 0.0
    else:
        side_a = _group_half(group_kind, group_size, group_dims)
        in_a, extra = set(side_a), uplinks % chips
        side_b = [i for i in range(n) if i not in in_a]
        crossing = chip_cut(side_a, side_b, uplinks, chips, lambda i: (i * extra) % chips)
        direct = grp.bisection_bytes_per_s
    pairs, adjacent = _pairs(n), groups * edges
    return DomainMetrics(
        size=n,
        switches={"scale_up_l1": chips},
        links={"scale_up": groups * grp.links["scale_up"], "scale_up_l1": n * uplinks},
        board_links={"scale_up": groups * grp.board_links["scale_up"],
                     "scale_up_l1": n * uplinks if on_board else 0},
        diameter_hops=2 if adjacent < pairs else 1,
        diameter_switches=1 if adjacent < pairs else 0,
        mean_hops=(2 * pairs - adjacent) / pairs if pairs else 0.0,
        bisection_bytes_per_s=direct + crossing * bandwidth,
        injection_bytes_per_s=grp.injection_bytes_per_s + uplinks * bandwidth,
        ports_used={"scale_up_l1": max(balanced_loads(n, uplinks, chips))},
        radix=radix,
    )


def _group_half(kind: str, size: int, dims: Sequence[int] | None) -> list[int]:
    """Accelerators on the ``A`` side of one group's canonical bisection."""
    if kind == "full_mesh":
        return list(range(size // 2))
    dims = tuple(dims or (size,))
    axis = cut_axis(dims, [1.0] * len(dims))
    stride = math.prod(dims[:axis])
    return [i for i in range(size) if (i // stride) % dims[axis] < dims[axis] // 2]

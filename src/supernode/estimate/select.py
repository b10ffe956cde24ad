"""``np.where`` that computes each branch only where it is chosen (a grid's axis split).

The step model picks between two formulas per plan (ZeRO-2/3's per-layer prefetch or
ZeRO-0/1's one reduction). On the planner's grid the choice varies along one axis (the
ZeRO axis), so each formula is evaluated on its own slices of that axis and the results
are laid side by side: the elements are those of ``np.where(cond, a(), b())``, computed
by the same operations, at about half the cost.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

#: Restricts an input (array or scalar) to a branch's elements.
Restrict = Callable[[Any], Any]
#: A branch: given how to restrict an input to the branch's slices, its values there.
Branch = Callable[[Restrict], Any]


def _whole(x: Any) -> Any:
    return x


def select(cond: Any, if_true: Branch, if_false: Branch) -> Any:
    """``np.where(cond, if_true(r), if_false(r))`` with each branch computed only where it
    is chosen. A branch is called with ``r``, the function that restricts any input
    (array or scalar) to the branch's elements; an input must pass through ``r`` before
    it meets ``cond``'s axis. The answer broadcasts to ``np.where``'s shape (a uniform
    ``cond`` returns the one branch as it is). Falls back to the plain ``np.where`` of
    both branches when ``cond`` varies along more than one axis.
    """
    c = np.asarray(cond, dtype=bool)
    if c.all():
        return if_true(_whole)
    if not c.any():
        return if_false(_whole)
    varying = [i for i, n in enumerate(c.shape) if n > 1]
    if len(varying) != 1:
        return np.where(c, if_true(_whole), if_false(_whole))
    axis = varying[0] - c.ndim  # counted from the end, as broadcasting aligns axes
    chosen = c.reshape(-1)
    parts = [(index, np.asarray(branch(_restrict(axis, index)), dtype=float))
             for index, branch in ((np.flatnonzero(chosen), if_true),
                                   (np.flatnonzero(~chosen), if_false))]
    shapes = []
    for _, part in parts:
        shape = [1] * max(0, -axis - part.ndim) + list(part.shape)
        shape[axis] = c.shape[axis]
        shapes.append(tuple(shape))
    out = np.empty(np.broadcast_shapes(*shapes, c.shape))
    for index, part in parts:
        out[(Ellipsis, index) + (slice(None),) * (-axis - 1)] = part
    return out


def _restrict(axis: int, index: np.ndarray) -> Restrict:
    """Restrict an input to ``index`` along ``axis`` (negative; an input without that
    axis, or of length 1 along it, passes unchanged)."""
    def restrict(x: Any) -> Any:
        shape = np.shape(x)
        if len(shape) < -axis or shape[axis] == 1:
            return x
        return np.take(x, index, axis=axis)
    return restrict

"""The public cost model: built-in algorithms and :func:`collective_time_s`.

Importing this module registers the built-in algorithms:

========================  ==============================================  ============
name                      ops                                             auto (NCCL)
========================  ==============================================  ============
``ring``                  all_reduce, all_gather, reduce_scatter,         yes
                          broadcast, reduce
``tree``                  all_reduce                                      yes
``nvls`` (``in_switch``)  all_reduce                                      yes
``nvls_tree``             all_reduce                                      yes
``direct``                all_to_all                                      yes
``p2p``                   p2p                                             yes
``halving_doubling``      all_reduce, all_gather, reduce_scatter          no
``hierarchical``          all_reduce                                      no
``hierarchical_a2a``      all_to_all                                      no
========================  ==============================================  ============
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from supernode.collectives.algorithms import (
    HALVING_DOUBLING_OPS,
    RING_OPS,
    as_arrays,
    halving_doubling_time_s,
    p2p_time_s,
    ring_time_s,
    tree_time_s,
)
from supernode.collectives.busbw import check_op
from supernode.collectives.efficiency import EfficiencyTable, load_efficiency_tables
from supernode.collectives.fabric import Fabric
from supernode.collectives.hierarchical import (
    direct_all_to_all_time_s,
    hierarchical_all_to_all_time_s,
    hierarchical_time_s,
)
from supernode.collectives.innetwork import nvls_time_s, nvls_tree_time_s
from supernode.collectives.registry import candidates_for, get_algorithm, register_algorithm
from supernode.errors import InputError

register_algorithm("ring", ring_time_s, ops=RING_OPS, auto=True)
register_algorithm("tree", tree_time_s, ops=("all_reduce",), auto=True)
register_algorithm("nvls", nvls_time_s, ops=("all_reduce",), auto=True, aliases=("in_switch",))
register_algorithm("nvls_tree", nvls_tree_time_s, ops=("all_reduce",), auto=True)
register_algorithm("direct", direct_all_to_all_time_s, ops=("all_to_all",), auto=True)
register_algorithm("p2p", p2p_time_s, ops=("p2p",), auto=True)
register_algorithm("halving_doubling", halving_doubling_time_s, ops=HALVING_DOUBLING_OPS)
register_algorithm("hierarchical", hierarchical_time_s, ops=("all_reduce",))
register_algorithm("hierarchical_a2a", hierarchical_all_to_all_time_s, ops=("all_to_all",))


def _check_inputs(message_bytes, ranks, fabric: Fabric) -> tuple[np.ndarray, np.ndarray]:
    s, n = as_arrays(message_bytes, ranks)
    if not np.all(np.isfinite(s)) or np.any(s < 0):
        raise InputError("message_bytes", "must be finite and ≥ 0 bytes")
    if np.any(np.asarray(ranks) != n) or np.any(n < 1):
        raise InputError("ranks", "must be integers ≥ 1")
    fabric.tier_index_for_group(n)  # raises if the job does not fit the fabric
    return s, n


def collective_time_s(op: str, message_bytes, ranks, fabric: Fabric,
                      algorithm: str | None = None, *,
                      tables: Mapping[str, EfficiencyTable] | None = None,
                      candidates: tuple[str, ...] | None = None):
    """Time of one collective in seconds, and the algorithm that achieves it.

    ``op``: all_reduce, all_gather, reduce_scatter, all_to_all, broadcast, reduce, p2p.
    ``message_bytes`` (bytes, nccl-tests semantics, see :mod:`.busbw`) and ``ranks`` may
    be numpy arrays (broadcast together); ``ranks`` consecutive ranks of ``fabric``.
    With ``algorithm`` None, the fastest of ``candidates`` (default: the algorithms NCCL
    runs, NVLS only inside an in-network tier) is chosen per element. A named algorithm
    that does not apply gives ``inf``. ``tables``: efficiency tables (default: packaged).

    Returns ``(time_s, algorithm)``: floats and a str for scalar inputs, else arrays.

    >>> from supernode.collectives import Fabric, make_tier
    >>> fab = Fabric((make_tier("scale_up", 8, 450e9, "nvlink4", in_network_reduction=True),))
    >>> t, algo = collective_time_s("all_reduce", 2**30, 8, fab)
    >>> algo, round(t * 1e3, 1)
    ('nvls', 4.0)
    """
    check_op(op)
    tables = tables if tables is not None else load_efficiency_tables()
    s, n = _check_inputs(message_bytes, ranks, fabric)
    if algorithm is not None:
        chosen = (get_algorithm(algorithm),)
        if op not in chosen[0].ops:
            raise InputError("algorithm", f"{chosen[0].name!r} does not perform {op}; it "
                             f"serves {', '.join(sorted(chosen[0].ops))}")
    else:
        chosen = candidates_for(op, candidates)
        if not chosen:
            raise InputError("candidates", f"no candidate algorithm performs {op}")
    times = np.stack([np.asarray(a.fn(op, s, n, fabric, tables), dtype=float) for a in chosen])
    best = np.argmin(times, axis=0)
    time_s = np.take_along_axis(times, best[None, ...], axis=0)[0]
    names = np.array([a.name for a in chosen], dtype=object)[best]
    if time_s.ndim == 0:
        return float(time_s), str(names)
    return time_s, names

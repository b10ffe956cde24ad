"""The public cost model: built-in algorithms and the NCCL-like choice of the fastest.

Importing this module registers the built-in algorithms:

======================  ======================================  ==================  ====
name (alias)            ops                                     protocols           auto
======================  ======================================  ==================  ====
``ring``                all_reduce, all_gather, reduce_scatter,  LL, LL128, Simple   yes
                        broadcast, reduce
``tree``                all_reduce                              LL, LL128, Simple   yes
``nvls`` (in_switch)    all_reduce, all_gather, reduce_scatter  Simple              yes
``nvls_tree``           all_reduce                              Simple              yes
``collnet`` (sharp)     all_reduce                              Simple              yes
``pat``                 all_gather, reduce_scatter              Simple              yes
``dimension_ordered``   all_reduce, all_gather, reduce_scatter  Simple              yes
``direct``              all_to_all                              LL, Simple          yes
``p2p``                 p2p                                     LL, Simple          yes
``halving_doubling``    all_reduce, all_gather, reduce_scatter  LL, LL128, Simple   no
``hierarchical``        all_reduce                              LL, LL128, Simple   no
``hierarchical_a2a``    all_to_all                              Simple              no
======================  ======================================  ==================  ====

For each candidate algorithm and protocol the schedule is built and costed
(:mod:`.schedule`); the fastest wins per message size, as NCCL's tuner picks an algorithm
and protocol per size (``src/graph/tuning.cc``). Schedules are cached per group view.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
import numpy.typing as npt

from supernode.collectives import algorithms as flat
from supernode.collectives import hierarchy, innetwork, torus, trees
from supernode.collectives.busbw import check_op
from supernode.collectives.choice_memo import MEMO_MAX_ELEMENTS, Choice, remembered
from supernode.collectives.efficiency import EfficiencyTable, Tables, as_tables
from supernode.collectives.fabric import Fabric
from supernode.collectives.levels import group_levels, used_levels
from supernode.collectives.registry import candidates_for, get_algorithm, register_algorithm
from supernode.collectives.schedule import (
    NotApplicable,
    Schedule,
    binding_tier,
    schedule_time_s,
)
from supernode.errors import InputError

ALL = ("ll", "ll128", "simple")
register_algorithm("ring", flat.ring, ops=flat.RING_OPS, auto=True, protocols=ALL)
register_algorithm("tree", trees.tree, ops=("all_reduce",), auto=True, protocols=ALL)
register_algorithm("nvls", innetwork.nvls, ops=innetwork.NVLS_OPS, auto=True,
                   aliases=("in_switch",))
register_algorithm("nvls_tree", innetwork.nvls_tree, ops=("all_reduce",), auto=True)
register_algorithm("collnet", innetwork.collnet, ops=("all_reduce",), auto=True,
                   aliases=("sharp",))
register_algorithm("pat", flat.pat, ops=flat.PAT_OPS, auto=True)
register_algorithm("dimension_ordered", torus.dimension_ordered, ops=torus.TORUS_OPS,
                   auto=True)
register_algorithm("direct", flat.direct, ops=("all_to_all",), auto=True,
                   protocols=("ll", "simple"))
register_algorithm("p2p", flat.p2p, ops=("p2p",), auto=True, protocols=("ll", "simple"))
register_algorithm("halving_doubling", flat.halving_doubling, ops=flat.HALVING_DOUBLING_OPS,
                   protocols=ALL)
register_algorithm("hierarchical", hierarchy.hierarchical, ops=("all_reduce",), protocols=ALL)
register_algorithm("hierarchical_a2a", hierarchy.hierarchical_a2a, ops=("all_to_all",))


@dataclass(frozen=True)
class Option:
    """One runnable (algorithm, protocol) of a group, with its schedule."""

    algorithm: str
    protocol: str
    schedule: Schedule


def _check_inputs(message_bytes: npt.ArrayLike, ranks: npt.ArrayLike, fabric: Fabric
                  ) -> tuple[np.ndarray, np.ndarray]:
    s = np.asarray(message_bytes, dtype=float)
    n = np.asarray(ranks)
    if not np.all(np.isfinite(s)) or np.any(s < 0):
        raise InputError("message_bytes", "must be finite and ≥ 0 bytes")
    n_int = n.astype(np.int64) if n.size else n.astype(np.int64)
    if np.any(n != n_int) or np.any(n_int < 1):
        raise InputError("ranks", "must be integers ≥ 1")
    s, n_int = np.broadcast_arrays(s, n_int)
    fabric.tier_index_for_group(n_int)  # raises if the job does not fit the fabric
    return s, n_int


def availability(fabric: Fabric, tables: Tables) -> tuple[tuple[str, bool, bool, bool], ...]:
    """What decides which schedules exist: per table of the fabric, the protocols it runs
    and whether it reduces in-network (numbers do not matter)."""
    names = sorted({t.efficiency for t in fabric.tiers})
    return tuple((n, tables[n].has("ll"), tables[n].has("ll128"),
                  tables[n].in_network_efficiency is not None) for n in names)


def options(op: str, fabric: Fabric, ranks: int, tables: Tables,
            names: tuple[str, ...]) -> tuple[tuple[Option, ...], tuple[str, ...]]:
    """Runnable (algorithm, protocol) schedules of ``names`` for ``ranks`` ranks, and why
    each algorithm that cannot run does not (one reason per such algorithm).

    Schedules depend on the tables only through :func:`availability`; they are cached,
    and costed with whatever tables are passed to :func:`schedule_time_s`.
    """
    return _options(op, fabric, int(ranks), availability(fabric, tables), names,
                    _Holder(tables))


class _Holder:
    """Carries the tables into the cache without keying on them."""

    def __init__(self, tables: Tables) -> None:
        self.tables = tables

    def __hash__(self) -> int:
        return 0

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Holder)


@lru_cache(maxsize=8192)
def _options(op: str, fabric: Fabric, ranks: int, signature: tuple[Any, ...],
             names: tuple[str, ...], holder: _Holder) -> tuple[tuple[Option, ...], tuple[str, ...]]:
    levels = group_levels(fabric, ranks, holder.tables)
    runnable: list[Option] = []
    reasons: list[str] = []
    for name in names:
        algorithm = get_algorithm(name)
        why = ""
        for protocol in algorithm.protocols:
            if not all(lv.table.has(protocol) for lv in used_levels(levels) or levels[:1]):
                why = why or f"protocol {protocol} not available"
                continue
            try:
                runnable.append(Option(algorithm.name, protocol,
                                       algorithm.build(op, levels, protocol)))
            except NotApplicable as exc:
                why = str(exc)
        if not any(o.algorithm == algorithm.name for o in runnable):
            reasons.append(f"{algorithm.name}: {why}")
    return tuple(runnable), tuple(reasons)


def _names(op: str, algorithm: str | None, candidates: tuple[str, ...] | None
           ) -> tuple[str, ...]:
    if algorithm is not None:
        chosen = get_algorithm(algorithm)
        if op not in chosen.ops:
            raise InputError("algorithm", f"{chosen.name!r} does not perform {op}; it "
                             f"serves {', '.join(sorted(chosen.ops))}")
        return (chosen.name,)
    found = candidates_for(op, candidates)
    if not found:
        raise InputError("candidates", f"no candidate algorithm performs {op}")
    return tuple(a.name for a in found)


def choose(op: str, message_bytes: npt.ArrayLike, ranks: npt.ArrayLike, fabric: Fabric,
           algorithm: str | None = None, *,
           tables: Tables | Mapping[str, EfficiencyTable] | None = None,
           candidates: tuple[str, ...] | None = None, explain: bool = True) -> Choice:
    """The fastest runnable algorithm and protocol per element, with its time (arrays).

    A named ``algorithm`` that cannot run on the group is an :class:`InputError` that
    says why (never an infinite time). ``explain`` False leaves the binding and crossed
    tiers empty (they cost a third of the choice; the step model needs only the time).
    Answers to small inputs are remembered per process (:mod:`.choice_memo`: whole
    answers, and single (ranks, bytes) elements per fabric, candidates and tables
    object); each call gets its own arrays.
    """
    check_op(op)
    tables = as_tables(tables)
    names = _names(op, algorithm, candidates)
    s_in, n_in = np.asarray(message_bytes), np.asarray(ranks)
    if s_in.size + n_in.size > MEMO_MAX_ELEMENTS:
        return _choose(op, message_bytes, ranks, fabric, tables, names, explain)
    return remembered((op, fabric, names, explain), tables, s_in, n_in,
                      lambda s, n: _choose(op, s, n, fabric, tables, names, explain))


def _choose(op: str, message_bytes: npt.ArrayLike, ranks: npt.ArrayLike, fabric: Fabric,
            tables: Tables, names: tuple[str, ...], explain: bool) -> Choice:
    """:func:`choose` itself, without the memo."""
    s, n = _check_inputs(message_bytes, ranks, fabric)
    out_t = np.zeros(s.shape)
    out_a = np.full(s.shape, names[0], dtype=object)
    out_p = np.full(s.shape, "", dtype=object)
    out_b = np.full(s.shape, "", dtype=object)
    out_c = np.full(s.shape, "", dtype=object)
    # the counts are asked for so that numpy sorts: its plain unique first checks for a
    # masked array, which imports numpy.ma (~10 ms of a process's first collective)
    for ranks_ in np.unique(n, return_counts=True)[0].tolist():
        if ranks_ < 2:
            continue
        sel = n == ranks_
        runnable, reasons = options(op, fabric, int(ranks_), tables, names)
        if not runnable:
            why = "; ".join(reasons) or "no algorithm applies"
            raise InputError("algorithm", f"{op} over {ranks_} ranks cannot run here: {why}")
        sizes = s[sel]
        times = np.stack([schedule_time_s(o.schedule, tables, sizes) for o in runnable])
        best = np.argmin(times, axis=0)
        out_t[sel] = np.take_along_axis(times, best[None], axis=0)[0]
        out_a[sel] = np.array([o.algorithm for o in runnable], dtype=object)[best]
        out_p[sel] = np.array([o.protocol for o in runnable], dtype=object)[best]
        if not explain:
            continue
        binds = np.stack([binding_tier(o.schedule, sizes, tables) for o in runnable])
        out_b[sel] = np.take_along_axis(binds, best[None], axis=0)[0]
        levels = runnable[0].schedule.levels
        out_c[sel] = "+".join(lv.tier.name for lv in used_levels(list(levels))) \
            or levels[0].tier.name
    return Choice(out_t, out_a, out_p, out_b, out_c)


def collective_time_s(op: str, message_bytes: npt.ArrayLike, ranks: npt.ArrayLike,
                      fabric: Fabric, algorithm: str | None = None, *,
                      tables: Tables | Mapping[str, EfficiencyTable] | None = None,
                      candidates: tuple[str, ...] | None = None
                      ) -> tuple[float, str] | tuple[np.ndarray, np.ndarray]:
    """Time of one collective in seconds, and the algorithm that achieves it.

    ``op``: all_reduce, all_gather, reduce_scatter, all_to_all, broadcast, reduce, p2p.
    ``message_bytes`` (bytes, nccl-tests semantics, see :mod:`.busbw`) and ``ranks`` may
    be numpy arrays (broadcast together); ``ranks`` consecutive ranks of ``fabric`` (or
    of a group view, :mod:`.groups`). With ``algorithm`` None, the fastest of
    ``candidates`` (default: the algorithms NCCL runs) is chosen per element, each under
    its fastest protocol. A named algorithm that cannot run raises :class:`InputError`.
    ``tables``: efficiency tables (default: packaged).

    Returns ``(time_s, algorithm)``: floats and a str for scalar inputs, else arrays.

    >>> from supernode.collectives import Fabric, make_tier
    >>> fab = Fabric((make_tier("scale_up", 8, 450e9, "nvlink4", in_network_reduction=True),))
    >>> t, algo = collective_time_s("all_reduce", 2**30, 8, fab)
    >>> algo
    'nvls'
    """
    choice = choose(op, message_bytes, ranks, fabric, algorithm, tables=tables,
                    candidates=candidates, explain=False)
    if choice.time_s.ndim == 0:
        return float(choice.time_s), str(choice.algorithm)
    return choice.time_s, choice.algorithm

"""Registry of collective algorithms (STYLE.md §7: duplicate names are refused).

An algorithm is a pure function ``fn(op, message_bytes, ranks, fabric, tables) -> time_s``
over numpy arrays (``message_bytes`` in bytes, ``ranks`` integers, broadcast together),
returning seconds, ``inf`` where it does not apply (wrong op, no in-switch reduction,
too few tiers). ``auto`` algorithms are those NCCL itself runs; automatic selection
considers only them unless told otherwise.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from supernode.collectives.busbw import OPS, check_op
from supernode.collectives.efficiency import EfficiencyTable
from supernode.collectives.fabric import Fabric
from supernode.errors import InputError

AlgorithmFn = Callable[[str, np.ndarray, np.ndarray, Fabric, Mapping[str, EfficiencyTable]],
                       np.ndarray]


class DuplicateAlgorithmError(ValueError):
    """An algorithm name or alias is already registered."""


@dataclass(frozen=True)
class Algorithm:
    """A registered algorithm: its cost function, the ops it serves, and whether NCCL runs it."""

    name: str
    fn: AlgorithmFn
    ops: frozenset[str]
    auto: bool
    description: str


_ALGORITHMS: dict[str, Algorithm] = {}
_ALIASES: dict[str, str] = {}


def register_algorithm(name: str, fn: AlgorithmFn, *, ops=OPS, auto: bool = False,
                       aliases: tuple[str, ...] = (), description: str = "") -> Algorithm:
    """Register ``fn`` under ``name`` (and ``aliases``); taken names raise an error."""
    for key in (name, *aliases):
        if key in _ALGORITHMS or key in _ALIASES:
            raise DuplicateAlgorithmError(f"collective algorithm {key!r} is already registered")
    algorithm = Algorithm(name, fn, frozenset(check_op(op) for op in ops), auto,
                          description or (fn.__doc__ or "").strip().splitlines()[0])
    _ALGORITHMS[name] = algorithm
    for alias in aliases:
        _ALIASES[alias] = name
    return algorithm


def get_algorithm(name: str) -> Algorithm:
    """The algorithm registered as ``name`` or an alias of it."""
    key = _ALIASES.get(name, name)
    if key not in _ALGORITHMS:
        raise InputError("algorithm", f"unknown collective algorithm {name!r}; known: "
                         f"{', '.join(algorithm_names())}")
    return _ALGORITHMS[key]


def algorithm_names() -> tuple[str, ...]:
    """Registered algorithm names, in registration order (aliases excluded)."""
    return tuple(_ALGORITHMS)


def candidates_for(op: str, names: tuple[str, ...] | None = None) -> tuple[Algorithm, ...]:
    """Algorithms serving ``op``: the given ``names``, or every ``auto`` one."""
    check_op(op)
    if names is not None:
        chosen = tuple(get_algorithm(n) for n in names)
    else:
        chosen = tuple(a for a in _ALGORITHMS.values() if a.auto)
    return tuple(a for a in chosen if op in a.ops)

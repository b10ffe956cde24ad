"""Registry of collective algorithms (an extension point, docs/architecture.md: duplicate
names are refused).

An algorithm is a schedule builder ``build(op, levels, protocol) -> Schedule`` (see
:mod:`.schedule`) that raises :class:`~.algorithms.NotApplicable` where it cannot run,
the ops it serves, the NCCL protocols it may use, and whether NCCL (RCCL, XLA on a torus)
picks it by itself (``auto``); automatic selection considers only those.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from supernode.collectives.busbw import OPS, check_op
from supernode.collectives.efficiency import PROTOCOLS
from supernode.collectives.levels import Level
from supernode.collectives.schedule import Schedule
from supernode.errors import InputError

Builder = Callable[[str, list[Level], str], Schedule]


class DuplicateAlgorithmError(ValueError):
    """An algorithm name or alias is already registered."""


@dataclass(frozen=True)
class Algorithm:
    """A registered algorithm: its builder, ops, protocols and whether NCCL picks it."""

    name: str
    build: Builder
    ops: frozenset[str]
    auto: bool
    protocols: tuple[str, ...]
    description: str


_ALGORITHMS: dict[str, Algorithm] = {}
_ALIASES: dict[str, str] = {}


def register_algorithm(name: str, build: Builder, *, ops: Iterable[str] = OPS, auto: bool = False,
                       protocols: tuple[str, ...] = ("simple",), aliases: tuple[str, ...] = (),
                       description: str = "") -> Algorithm:
    """Register ``build`` under ``name`` (and ``aliases``); taken names raise an error."""
    for key in (name, *aliases):
        if key in _ALGORITHMS or key in _ALIASES:
            raise DuplicateAlgorithmError(f"collective algorithm {key!r} is already registered")
    unknown = set(protocols) - set(PROTOCOLS)
    if unknown:
        raise ValueError(f"unknown protocols {sorted(unknown)}; known: {PROTOCOLS}")
    algorithm = Algorithm(name, build, frozenset(check_op(op) for op in ops), auto,
                          tuple(protocols),
                          description or (build.__doc__ or "").strip().splitlines()[0])
    _ALGORITHMS[name] = algorithm
    for alias in aliases:
        _ALIASES[alias] = name
    return algorithm


def unregister_algorithm(name: str) -> None:
    """Remove ``name`` and its aliases (a plug-in's tests clean up after themselves)."""
    get_algorithm(name)  # unknown names are input errors
    key = _ALIASES.get(name, name)
    del _ALGORITHMS[key]
    for alias in [a for a, target in _ALIASES.items() if target == key]:
        del _ALIASES[alias]


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

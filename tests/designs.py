"""One design review per distinct input per test process, shared by the tests.

Reviewing a bundled example takes seconds (the plan search, the reliability Monte Carlo,
the scheduling replay); many tests read the same review. :func:`design` runs
:func:`~supernode.design.run_design` once per :class:`~supernode.design.DesignInput` (and
collective tables in force) in this process and hands every caller its own deep copy, so
no test can change what another reads. Under pytest-xdist "this process" is one worker:
the modules that use it share the ``design`` xdist group (conftest.py), so they run on
one worker and the memo is filled once.

Only for inputs whose files do not change during the run (the bundled examples); a test
that writes its own cluster or pack file calls ``run_design`` itself, and so does a test
whose subject is that two runs agree (a memo would make it compare a copy with itself).
"""

from __future__ import annotations

import copy
from typing import Any

from supernode.collectives.efficiency import in_force
from supernode.design import DesignInput, DesignResult, example, run_design

_DESIGNS: dict[tuple[DesignInput, str | None], DesignResult] = {}
#: Designs actually run by :func:`design` in this process (a test reads it to check that
#: the memo shares, not recomputes).
RUNS: list[DesignInput] = []


def design(inputs: DesignInput) -> DesignResult:
    """The review of ``inputs``: computed on the first call in this process, a deep copy of
    it on every call."""
    active = in_force()
    key = (inputs, active.key if active else None)
    if key not in _DESIGNS:
        _DESIGNS[key] = run_design(inputs)
        RUNS.append(inputs)
    return copy.deepcopy(_DESIGNS[key])


def example_input(name: str, **options: Any) -> DesignInput:
    """The :class:`DesignInput` of bundled example ``name`` with ``options``."""
    e = example(name)
    return DesignInput(e.cluster, e.workload, e.plan, **options)


def example_design(name: str, **options: Any) -> DesignResult:
    """:func:`design` of bundled example ``name`` (files, workload and plan) with
    ``options`` (``simulate=False``, ``seed``...)."""
    return design(example_input(name, **options))

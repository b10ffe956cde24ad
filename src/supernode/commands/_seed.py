"""The ``--seed`` option of every command that draws random numbers: one declaration, so
every command takes the same range (an integer in ``0 .. 2**63 - 1``: the one numeric rule
of :mod:`supernode.bounds`, applied to every option before a command runs, refuses the rest
with exit 2 and the range)."""

from __future__ import annotations

from typing import Any

import typer


def seed_option(help_text: str) -> Any:
    """A ``--seed`` option (default 0; ``0 <= seed <= 2**63 - 1``, checked by the bounds
    layer) with ``help_text``."""
    return typer.Option(0, "--seed", help=help_text)

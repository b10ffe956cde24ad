"""The ``--seed`` option of every command that draws random numbers: one declaration, so
every command takes the same range (an integer in ``0 .. 2**63 - 1``; a negative seed is
refused by the parser with exit 2)."""

from __future__ import annotations

from typing import Any

import typer

from supernode.netsim.scenario import MAX_SEED


def seed_option(help_text: str) -> Any:
    """A ``--seed`` option (default 0, ``0 <= seed <= MAX_SEED``) with ``help_text``."""
    return typer.Option(0, "--seed", min=0, max=MAX_SEED, help=help_text)

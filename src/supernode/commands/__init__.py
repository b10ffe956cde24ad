"""Registry of CLI subcommands (one module per command group)."""

from __future__ import annotations

import importlib

import typer

from supernode.commands._shell import SupernodeGroup

#: The root app. Its group class renders usage errors as one ``error:`` line, handles
#: SIGTERM like SIGINT and turns defects into one line (see :mod:`._shell`).
app = typer.Typer(
    cls=SupernodeGroup,
    name="supernode",
    help="Design, simulate and operate AI supernode clusters.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

#: Modules that define commands; each registers on `app` when imported.
COMMAND_MODULES = (
    "supernode.commands.schema",
    "supernode.commands.catalog",
    "supernode.commands.topology",
    "supernode.commands.importer",
    "supernode.commands.estimate",
    "supernode.commands.collective",
    "supernode.commands.validate",
    "supernode.commands.plan",
    "supernode.commands.size",
    "supernode.commands.sweep",
    "supernode.commands.fit",
    "supernode.commands.simulate",
)

_registered = False


def register_all() -> None:
    """Import every command module once (missing optional ones are skipped)."""
    global _registered
    if _registered:
        return
    for name in COMMAND_MODULES:
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise
    _registered = True


@app.callback()
def _root() -> None:
    """Design, simulate and operate AI supernode clusters."""

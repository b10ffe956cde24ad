"""Registry of CLI subcommands (one module per command group)."""

from __future__ import annotations

import importlib

import typer

app = typer.Typer(
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
    "supernode.commands.reliability",
    "supernode.commands.compare",
    "supernode.commands.bench_plan",
    "supernode.commands.link",
    "supernode.commands.design",
    "supernode.commands.check",
    "supernode.commands.monitor",
    "supernode.commands.health",
    "supernode.commands.schedule",
    "supernode.commands.export",
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

"""Registry of CLI subcommands (one module per command group), loaded on demand.

Each module of :data:`COMMAND_MODULES` registers its command(s) on :data:`app` when it is
imported. The CLI imports only the module a command line needs (:func:`load_command`:
the modules whose source registers that name, found by reading them, not importing
them); ``--help`` lists every command from the same reading (:func:`listing`,
:mod:`._listing`) and imports none; an unknown name imports them all
(:func:`register_all`). So ``supernode topology`` does not pay for the simulator's or the
planner's imports, and ``supernode --help`` for none of them.
"""

from __future__ import annotations

import importlib
from typing import Any

import typer

from supernode.commands._listing import Listed, listed_commands, may_register, read_module
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
    "supernode.commands.reliability",
    "supernode.commands.facility",
    "supernode.commands.compare",
    "supernode.commands.calibrate",
    "supernode.commands.bench_plan",
    "supernode.commands.link",
    "supernode.commands.design",
    "supernode.commands.check",
    "supernode.commands.monitor",
    "supernode.commands.health",
    "supernode.commands.schedule",
    "supernode.commands.export",
    "supernode.commands.serve",
    "supernode.commands.memory",
)

_registered = False


def listing() -> tuple[Listed, ...] | None:
    """Every root command as ``--help`` lists it, read from the source of
    :data:`COMMAND_MODULES` (not imported); None when a module's source does not say
    (then only importing every module tells)."""
    listed, unreadable = listed_commands(COMMAND_MODULES)
    return None if unreadable else tuple(listed)


def _import(name: str) -> None:
    try:
        importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name != name:
            raise


def load_command(name: str) -> Any:
    """The click command ``name`` of the root app, importing only the module(s) that
    register it (all of them when none says so); None when there is no such command."""
    import typer.main

    for module in COMMAND_MODULES:
        if not may_register(module, name):
            continue
        found = read_module(module)
        if found is not None and name in {entry.name for part in found for entry in part}:
            _import(module)
    group = typer.main.get_command(app)
    command = getattr(group, "commands", {}).get(name)
    if command is None and not _registered:
        register_all()
        group = typer.main.get_command(app)
        command = getattr(group, "commands", {}).get(name)
    return command


def all_commands() -> dict[str, Any]:
    """Every click command of the root app (imports every command module)."""
    import typer.main

    register_all()
    return dict(getattr(typer.main.get_command(app), "commands", {}))


def register_all() -> None:
    """Import every command module once (missing optional ones are skipped)."""
    global _registered
    if _registered:
        return
    for name in COMMAND_MODULES:
        _import(name)
    _registered = True


@app.callback()
def _root() -> None:
    """Design, simulate and operate AI supernode clusters."""

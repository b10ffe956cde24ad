"""What ``supernode --help`` lists, read from the command modules' source, not imported.

Importing every command module to list them costs about a second (the simulator, the
planner, scipy, matplotlib...). The listing needs only each command's name and help
text, which the modules state as literals: ``@app.command("name")`` over a function
whose docstring (or ``help=``) is the help, and ``app.add_typer(sub, name="name")`` of a
``sub = typer.Typer(help=...)``. :func:`listed_commands` reads those with :mod:`ast`
(about 1 ms per module). A module whose registrations are not plain literals (a computed
name or help, a sub-app callback, a decorator this reader does not know) is reported as
unreadable, and the CLI imports it instead: the listing is never incomplete, only slower.
``tests/test_cli_listing.py`` checks that every field read here equals the one typer
builds from the imported module.
"""

from __future__ import annotations

import ast
import functools
import importlib.util
from dataclasses import dataclass
from typing import Any, TypeGuard

#: Keyword arguments of ``app.command``/``typer.Typer``/``add_typer`` the listing shows.
_FIELDS = ("help", "short_help", "hidden", "deprecated", "rich_help_panel")


@dataclass(frozen=True)
class Listed:
    """One root command as the help listing shows it (typer's click attributes)."""

    name: str
    module: str
    help: str | None = None
    short_help: str | None = None
    hidden: bool = False
    deprecated: bool = False
    rich_help_panel: str | None = None


class _Unreadable(Exception):
    """The module registers something this reader cannot state without importing it."""


def _literal(node: ast.expr) -> object:
    try:
        return ast.literal_eval(node)
    except ValueError as exc:
        raise _Unreadable from exc


def _fields(call: ast.Call) -> dict[str, Any]:
    """The listed keyword arguments of ``call`` (literals of whatever type they hold)."""
    out = {}
    for kw in call.keywords:
        if kw.arg is None:  # **kwargs
            raise _Unreadable
        if kw.arg in _FIELDS:
            out[kw.arg] = _literal(kw.value)
    return out


def _is_call_on(node: ast.expr, owner: str, method: str) -> TypeGuard[ast.Call]:
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr == method and isinstance(node.func.value, ast.Name)
            and node.func.value.id == owner)


def _typer_apps(tree: ast.Module) -> dict[str, dict[str, Any]]:
    """``{variable: fields}`` of module-level ``X = typer.Typer(...)``."""
    apps = {}
    for node in tree.body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
                and _is_call_on(node.value, "typer", "Typer")):
            apps[node.targets[0].id] = _fields(node.value)
    return apps


def _decorated_commands(tree: ast.Module, module: str) -> list[Listed]:
    out = []
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for deco in node.decorator_list:
            if _is_call_on(deco, "app", "command"):
                call = deco
                if not call.args or call.keywords and "name" in {k.arg for k in call.keywords}:
                    raise _Unreadable  # typer derives the name: import to be exact
                name = _literal(call.args[0])
                fields = _fields(call)
                if fields.get("help") is None:
                    fields["help"] = ast.get_docstring(node, clean=True)
                out.append(Listed(str(name), module, **fields))
    return out


def _groups(tree: ast.Module, module: str) -> list[Listed]:
    apps = _typer_apps(tree)
    out = []
    for node in tree.body:  # module level: typer registers at import, so does the source
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            for deco in node.decorator_list:  # a sub-app callback may carry the help
                if any(_is_call_on(deco, owner, "callback") for owner in apps):
                    raise _Unreadable
        if not (isinstance(node, ast.Expr) and _is_call_on(node.value, "app", "add_typer")):
            continue
        call = node.value
        names = [k for k in call.keywords if k.arg == "name"]
        if len(call.args) != 1 or not isinstance(call.args[0], ast.Name) or not names \
                or call.args[0].id not in apps:
            raise _Unreadable
        fields = {**apps[call.args[0].id], **_fields(call)}
        out.append(Listed(str(_literal(names[0].value)), module, **fields))
    return out


@functools.cache
def _source(module: str) -> tuple[str, str] | None:
    """``(path, text)`` of ``module``'s source file; None when it has none to read."""
    try:
        spec = importlib.util.find_spec(module)
        origin = spec.origin if spec is not None else None
        if origin is None or not origin.endswith(".py"):
            return None
        with open(origin, encoding="utf-8") as stream:
            return origin, stream.read()
    except (ImportError, OSError, UnicodeDecodeError, ValueError):
        return None


def may_register(module: str, name: str) -> bool:
    """Whether ``module``'s source could register the root command ``name``: it writes
    the name as a quoted literal, as every registration :func:`read_module` reads does
    (``app.command("name")``, ``add_typer(..., name="name")``); True when the source
    cannot be read. A text search, so that running one command does not parse every
    command module (``ast.parse`` of the 25 modules: ~60 ms of ``estimate``'s 0.3 s)."""
    source = _source(module)
    return source is None or f'"{name}"' in source[1] or f"'{name}'" in source[1]


@functools.cache
def read_module(module: str) -> tuple[tuple[Listed, ...], tuple[Listed, ...]] | None:
    """``(commands, groups)`` that ``module`` registers on the root app, read from its
    source; None when the source cannot be found or says something only importing it
    can tell. Read once per process."""
    source = _source(module)
    if source is None:
        return None
    try:
        tree = ast.parse(source[1], filename=source[0])
        return tuple(_decorated_commands(tree, module)), tuple(_groups(tree, module))
    except (_Unreadable, SyntaxError, ValueError):
        return None


def listed_commands(modules: tuple[str, ...]) -> tuple[list[Listed], list[str]]:
    """Every root command the ``modules`` register, in typer's listing order (commands in
    module order, then groups in module order), and the modules that must be imported
    instead because their source could not be read."""
    commands: list[Listed] = []
    groups: list[Listed] = []
    unreadable = []
    for module in modules:
        found = read_module(module)
        if found is None:
            unreadable.append(module)
            continue
        commands += found[0]
        groups += found[1]
    return commands + groups, unreadable

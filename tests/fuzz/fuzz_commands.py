"""The CLI as the fuzz suite sees it: every leaf command of the typer app and its
parameters, discovered at run time (so commands added by later issues are fuzzed with no
change here): name, option or argument, flag, type (int, float, bool, path, text),
required, repeatable, help, and the values the help names (choices, ``e.g.``, default).
"""

from __future__ import annotations

import os
import re
import typing
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Param:
    """One option or argument of a command, as the fuzzer sees it."""

    name: str            # the option string (--tp) or the argument's metavar
    is_option: bool
    is_flag: bool
    kind: str            # int, float, bool, path, text
    required: bool
    multiple: bool
    secondary: str | None
    help: str
    words: tuple[str, ...]   # candidate values: named in the help text, the default


@dataclass(frozen=True)
class Command:
    """A leaf command: its path (``("catalog", "show")``) and parameters."""

    path: tuple[str, ...]
    params: tuple[Param, ...]

    @property
    def id(self) -> str:
        """Test id: the command path joined by spaces."""
        return " ".join(self.path)


def _kind(param: Any) -> str:
    descriptor = getattr(param, "type_descriptor", None)
    annotation = descriptor.annotation if descriptor is not None else None
    if annotation is None:  # older typer on click: a click ParamType
        name = getattr(getattr(param, "type", None), "name", "text")
        return {"integer": "int", "float": "float", "boolean": "bool",
                "path": "path"}.get(name, "text")
    args = [a for a in typing.get_args(annotation) if a is not type(None)] or [annotation]
    args = [typing.get_args(a)[0] if typing.get_origin(a) is list else a for a in args]
    base = args[0]
    if base is bool:
        return "bool"
    if base is int:
        return "int"
    if base is float:
        return "float"
    return "path" if isinstance(base, type) and issubclass(base, os.PathLike) else "text"


def _words(text: str, default: Any = None) -> tuple[str, ...]:
    """Candidate values: those a help text names (``ecmp|spray|adaptive``, ``One of: a,
    b``, ``e.g. 8,36,72``) and the parameter's default."""
    found: list[str] = []
    if isinstance(default, str | int | float) and not isinstance(default, bool):
        found.append(str(default))
    example = re.search(r"e\.g\.\s*([^\s;)]+)", text)
    if example:
        found.append(example.group(1).rstrip(".,"))
    for group in re.findall(r"[\w.-]+(?:\|[\w.-]+)+", text):
        found += group.split("|")
    match = re.search(r"[Oo]ne of:?\s*([^.]+)", text)
    if match:
        found += [w.strip() for w in match.group(1).split(",") if w.strip()]
    return tuple(dict.fromkeys(w.strip(".") for w in found if w.strip(".")))


def _param(param: Any) -> Param:
    is_option = getattr(param, "param_type_name", "") == "option"
    opts = [o for o in param.opts if o.startswith("--")] or list(param.opts)
    name = opts[0] if is_option else str(param.metavar or param.name).strip("[]")
    secondary = next(iter(getattr(param, "secondary_opts", ()) or ()), None)
    help_text = " ".join(str(getattr(param, "help", "") or "").split())
    default = getattr(param, "default", None)
    return Param(name, is_option, bool(getattr(param, "is_flag", False)), _kind(param),
                 bool(param.required), bool(param.multiple), secondary, help_text,
                 _words(help_text, default if not callable(default) else None))


def commands() -> list[Command]:
    """Every leaf command of the app, with its parameters (discovered at run time)."""
    import typer.main

    from supernode.commands import app, register_all

    register_all()
    out: list[Command] = []

    def walk(node: Any, path: tuple[str, ...]) -> None:
        subs = getattr(node, "commands", None)
        if subs:
            for name in sorted(subs):
                walk(subs[name], (*path, name))
            return
        params = tuple(_param(p) for p in node.params if p.name != "help")
        out.append(Command(path, params))

    walk(typer.main.get_command(app), ())
    return out

"""The wording of a usage error: which option or command, and what it allows.

A click/typer usage error (an unknown option or command, a value the option's type
refuses, a missing argument or value) becomes ``(where, message)`` for one ``error:``
line of :mod:`._shell`: the option's longest spelling (``--tp``) or the argument's name,
what went wrong with the value given, the option's own help (what is allowed), and the
nearest names for a misspelt option or command.
"""

from __future__ import annotations

import difflib
from typing import Any

try:  # typer >= 0.26 carries its own copy of click
    from typer._click import exceptions as click_exceptions
except ImportError:  # pragma: no cover - older typer on click
    # the same module, from click itself
    import click.exceptions as click_exceptions  # type: ignore[no-redef]


def _param_name(param: Any) -> str:
    """``--tp`` for an option (its longest spelling), ``CLUSTER`` for an argument."""
    opts = [o for o in (*getattr(param, "opts", ()), *getattr(param, "secondary_opts", ()))
            if o.startswith("--")] or list(getattr(param, "opts", ()))
    if getattr(param, "param_type_name", "") == "option" and opts:
        return opts[0]
    name = getattr(param, "metavar", None) or getattr(param, "name", None) or "argument"
    return str(name).strip("[]").upper()


def _help(param: Any) -> str:
    text = " ".join(str(getattr(param, "help", None) or "").split())
    return text.rstrip(".")


def _given(exc: Exception) -> str:
    """``, got 'x'`` from the validation error behind a refused value, if any."""
    cause = exc.__cause__
    errors = getattr(cause, "errors", None)
    if callable(errors):
        try:
            first = errors()[0]
        except (IndexError, TypeError):
            return ""
        if "input" in first:
            return f", got {first['input']!r}"
    return ""


def _lower_first(text: str) -> str:
    return text[:1].lower() + text[1:] if text[:2] != text[:2].upper() else text


def _command_for(root: Any, args: Any) -> Any:
    """The (sub)command ``args`` name, walking the group tree from ``root``."""
    command = root
    for token in args or ():
        commands = getattr(command, "commands", None)
        if not commands or token not in commands:
            break
        command = commands[token]
    return command


def usage_error(exc: Exception, root: Any = None, args: Any = None) -> tuple[str, str]:
    """``(where, message)`` of a click/typer usage error, for one ``error:`` line
    (``root`` and ``args`` find the option's help when the error carries no context)."""
    param = getattr(exc, "param", None)
    message = str(getattr(exc, "message", "") or exc).strip().rstrip(".")
    ctx = getattr(exc, "ctx", None)
    if isinstance(exc, click_exceptions.MissingParameter) and param is not None:
        return _param_name(param), "required" + _about(param)
    if isinstance(exc, click_exceptions.BadParameter) and param is not None:
        return _param_name(param), f"{_lower_first(message)}{_given(exc)}{_about(param)}"
    if isinstance(exc, click_exceptions.NoSuchOption):
        close = sorted(getattr(exc, "possibilities", None) or ())
        hint = f"; did you mean {' or '.join(close)}?" if close else ""
        return exc.option_name, f"no such option{hint} (see --help for the options)"
    if isinstance(exc, click_exceptions.BadOptionUsage):
        command = ctx.command if ctx is not None else _command_for(root, args)
        param = _find_param(command, exc.option_name)
        text = "needs a value" if "requires an argument" in message else \
            "takes no value (it is a flag)" if "does not take a value" in message else \
            _lower_first(message)
        return exc.option_name, text + (_about(param) if param is not None else "")
    where = ctx.command_path if ctx is not None else "supernode"
    if message.startswith("No such command") and ctx is not None:
        command = ctx.command
        commands = sorted(command.list_commands(ctx) if hasattr(command, "list_commands")
                          else getattr(command, "commands", {}) or {})
        wanted = message.split("'", 1)[-1].split("'", 1)[0]
        close = difflib.get_close_matches(wanted, commands, n=2)
        hint = f"; did you mean {' or '.join(close)}?" if close else ""
        return where, f"no such command {wanted!r}{hint} (commands: {', '.join(commands)})"
    return where, _lower_first(message)


def _about(param: Any) -> str:
    """`` (the option's help)``: what the option is, so the line says what is allowed."""
    what = _help(param)
    return f" ({what})" if what else ""


def _find_param(command: Any, option: str) -> Any:
    for param in getattr(command, "params", ()):
        if option in (*getattr(param, "opts", ()), *getattr(param, "secondary_opts", ())):
            return param
    return None

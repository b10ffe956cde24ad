"""Shared plumbing for commands: JSON vs table output, and bad input -> exit code 2."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

import typer
from rich.console import Console
from rich.text import Text

from supernode.errors import InputError, StdoutClosed
from supernode.jsontext import json_text

P = ParamSpec("P")
R = TypeVar("R")

#: Piped output (not a terminal) gets wide tables rather than rich's 80-column default.
#: Emoji codes are off: a name such as ``:fire:`` is shown as written (markup in user text
#: is escaped by :func:`supernode.textsafe.rich_safe`).
class _Console(Console):
    """A rich console whose closed pipe is a :class:`BrokenPipeError` for the CLI shell to
    map to its exit code (rich itself would exit 1, the verdict code)."""

    def on_broken_pipe(self) -> None:
        """Stop writing and let the shell end the command (exit 141, as SIGPIPE would)."""
        self.quiet = True
        raise BrokenPipeError(32, "standard output closed")


def _is_terminal(stream: Any) -> bool:
    return stream is not None and stream.isatty()  # None: the descriptor was closed


stdout = _Console(soft_wrap=True, width=None if _is_terminal(sys.stdout) else 160,
                  emoji=False)
stderr = _Console(stderr=True, soft_wrap=True, emoji=False)


def handles_input_errors(func: Callable[P, R]) -> Callable[P, R]:
    """Decorate a command: an InputError prints ``error: path: message`` and exits 2; a
    closed pipe on stdout becomes :class:`StdoutClosed`."""

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return func(*args, **kwargs)
        except BrokenPipeError:
            raise StdoutClosed from None
        except InputError as exc:
            stderr.print(Text.assemble(("error:", "bold red"), " ", exc.render()),
                         highlight=False)
            raise typer.Exit(code=2) from None

    return wrapper


def print_json(data: Any) -> None:
    """Write ``data`` as indented JSON to stdout, nothing else (the one JSON writer,
    :func:`supernode.jsontext.json_text`: a non-finite number is written as ``null``)."""
    sys.stdout.write(json_text(data) + "\n")


def input_paths(*values: Any) -> list[Any]:
    """The command's input values that may name files (None left out, lists flattened),
    for the output checks of :mod:`supernode.outputs`: an output never replaces, nor a
    folder holds, one of them (preset names that are not files are ignored there)."""
    out: list[Any] = []
    for value in values:
        if isinstance(value, list | tuple):
            out += input_paths(*value)
        elif value is not None:
            out.append(value)
    return out

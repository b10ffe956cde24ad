"""Shared plumbing for commands: JSON vs table output, and bad input -> exit code 2."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

import typer
from rich.console import Console
from rich.text import Text

from supernode.errors import InputError
from supernode.jsontext import json_text

P = ParamSpec("P")
R = TypeVar("R")

#: Piped output (not a terminal) gets wide tables rather than rich's 80-column default.
#: Emoji codes are off: a name such as ``:fire:`` is shown as written (markup in user text
#: is escaped by :func:`supernode.textsafe.rich_safe`).
stdout = Console(soft_wrap=True, width=None if sys.stdout.isatty() else 160, emoji=False)
stderr = Console(stderr=True, soft_wrap=True, emoji=False)


def handles_input_errors(func: Callable[P, R]) -> Callable[P, R]:
    """Decorate a command: an InputError prints ``error: path: message`` and exits 2."""

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return func(*args, **kwargs)
        except InputError as exc:
            stderr.print(Text.assemble(("error:", "bold red"), " ", exc.render()),
                         highlight=False)
            raise typer.Exit(code=2) from None

    return wrapper


def print_json(data: Any) -> None:
    """Write ``data`` as indented JSON to stdout, nothing else (the one JSON writer,
    :func:`supernode.jsontext.json_text`: a non-finite number is written as ``null``)."""
    sys.stdout.write(json_text(data) + "\n")

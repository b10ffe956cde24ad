"""Counting the work a block does in executed Python lines, not in seconds.

A wall-clock limit in a unit test fails on a busy machine and passes a slow algorithm on a
fast one; the number of Python lines a call executes is the same on every machine and
every load. :func:`counting_lines` counts the lines (and calls) run in its block, in this
thread, leaving out the code that runs a module's first import (which test ran first in a
process must not change the count), and raises :class:`TooMuchWork` (a BaseException, so
no ``except Exception`` swallows it) as soon as the count passes ``limit``: a loop that
would walk a million radices fails at the limit instead of hanging. Work done inside C
code (a parser, ``repr``) is not counted; bound its result (a message's length) where
that matters.

Performance targets in seconds live in benchmarks/, not here.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any


class TooMuchWork(BaseException):
    """The block executed more Python lines than its limit."""


@dataclass
class Work:
    """Lines (and function calls) executed so far in the block."""

    lines: int = 0
    limit: int | None = None


def _importing(frame: Any, outer: Any) -> bool:
    """True when ``frame`` runs inside an import (module code or importlib's machinery)
    started below ``outer``, the frame of the ``with`` block."""
    while frame is not None and frame is not outer:
        code = frame.f_code
        if code.co_name == "<module>" or code.co_filename.startswith("<frozen importlib"):
            return True
        frame = frame.f_back
    return False


@contextmanager
def counting_lines(limit: int | None = None) -> Iterator[Work]:
    """Count the Python lines executed in the block (calls count one each); past ``limit``
    raise :class:`TooMuchWork` from inside the running code."""
    work = Work(limit=limit)
    outer = sys._getframe(2)  # this generator, contextlib's __enter__, the with block

    def step() -> None:
        work.lines += 1
        if limit is not None and work.lines > limit:
            sys.settrace(None)
            raise TooMuchWork(f"more than {limit:,} Python lines executed")

    def local(frame: Any, event: str, arg: Any) -> Any:
        if event == "line":
            step()
        return local

    def calls(frame: Any, event: str, arg: Any) -> Any:
        if _importing(frame, outer):
            return None
        step()
        return local

    previous = sys.gettrace()
    sys.settrace(calls)
    try:
        yield work
    finally:
        sys.settrace(previous)

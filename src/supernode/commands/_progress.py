"""Progress of a long command on stderr: a rich bar on a terminal, one line per step when
output is piped or redirected (a CI log, ``| tee``, ``2> log``), nothing with
``--quiet`` or ``--json``.

Every command shows progress through :func:`progress`: ``with progress("design", total,
"stages", quiet) as bar: bar.update("plan", 3)``. stdout never carries it, so piped
tables and JSON stay clean.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Protocol

from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from supernode.commands._output import stderr
from supernode.textsafe import printable


class Steps(Protocol):
    """What a command reports: the step now running and how many are done."""

    def update(self, step: str, completed: int, total: int | None = None) -> None:
        """``step`` is running; ``completed`` steps (of ``total``, when it changed) are
        done."""

    def advance(self, step: str = "") -> None:
        """One more step is done (``step``: its name)."""


#: A run prints its first line only after this long (s): a quick run stays silent, and a
#: command refusing its input (mostly in its first moments) prints its one error line.
SILENT_FOR_S = 1.0
#: Piped, a step that keeps its name prints again only after this long (s): a command
#: counting events or runs (thousands of updates) writes a line every few seconds.
LINE_EVERY_S = 5.0


class _Silent:
    def update(self, step: str, completed: int, total: int | None = None) -> None:
        return None

    def advance(self, step: str = "") -> None:
        return None


class _Lines:
    """One line per step on stderr, ``design: 3/11 stages, simulate (3.1 s)``, once the
    run has lasted :data:`SILENT_FOR_S`; a step keeping its name prints again after
    :data:`LINE_EVERY_S`, and the last one always."""

    def __init__(self, label: str, total: int, unit: str) -> None:
        self.label, self.total, self.unit = label, total, unit
        self.done, self.start = 0, time.monotonic()
        self.shown: tuple[str, float] | None = None  # last step printed, and when

    def update(self, step: str, completed: int, total: int | None = None) -> None:
        self.done, self.total = completed, total if total is not None else self.total
        now = time.monotonic()
        elapsed = now - self.start
        if completed < 1 or elapsed < SILENT_FOR_S:
            return  # a quick run, or one refusing its input: one ``error:`` line alone
        if (self.shown is not None and self.shown[0] == step and completed < self.total
                and now - self.shown[1] < LINE_EVERY_S):
            return
        self.shown = (step, now)
        name = f", {printable(step)}" if step else ""
        stderr.print(f"{self.label}: {completed:,}/{self.total:,} {self.unit}{name} "
                     f"({elapsed:.1f} s)", highlight=False, markup=False, soft_wrap=True)

    def advance(self, step: str = "") -> None:
        self.update(step, self.done + 1)


class _Bar:
    def __init__(self, bar: Progress, label: str, total: int) -> None:
        self.bar, self.task, self.done = bar, bar.add_task(label, total=total), 0

    def update(self, step: str, completed: int, total: int | None = None) -> None:
        self.done = completed
        self.bar.update(self.task, description=step or "", completed=completed, total=total)

    def advance(self, step: str = "") -> None:
        self.update(step, self.done + 1)


@contextmanager
def progress(label: str, total: int, unit: str, quiet: bool) -> Iterator[Steps]:
    """Progress of ``total`` ``unit`` (stages, files) of command ``label`` on stderr: a bar
    when stderr and stdout are terminals, else one line per step (stderr a pipe or file,
    or stdout piped), nothing when ``quiet`` (``--quiet``, ``--json``)."""
    stream = sys.stderr
    if quiet or stream is None:
        yield _Silent()
    elif stream.isatty() and sys.stdout is not None and sys.stdout.isatty():
        with Progress(TextColumn("{task.description:<10}"), BarColumn(),
                      TextColumn(f"{{task.completed:,.0f}}/{{task.total:,.0f}} {unit}"),
                      TimeElapsedColumn(), console=stderr, transient=True) as bar:
            yield _Bar(bar, label, total)
    else:  # a pipe or file, or stdout piped (``| tee``): a redrawn bar would garble them
        yield _Lines(label, total, unit)

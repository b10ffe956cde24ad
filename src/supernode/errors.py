"""Errors the toolkit raises for bad input.

Three kinds of failure, three behaviours (docs/architecture.md): malformed input raises
:class:`InputError` at load, with the path of the offending field and what is
allowed; an infeasible plan is a *result*, never an exception; a questionable
design is a finding with a severity.
"""

from __future__ import annotations


class InputError(ValueError):
    """A user-supplied document or argument is invalid.

    ``path`` is the dotted/indexed field path (``scale_out.tiers[1].oversubscription``)
    or the empty string for whole-document problems; ``message`` says what is wrong and
    what is allowed. The CLI prints ``path: message`` and exits with code 2.
    """

    def __init__(self, path: str, message: str, *, source: str | None = None) -> None:
        self.path = path
        self.message = message
        self.source = source
        super().__init__(self.render())

    def render(self) -> str:
        """Return the one-line human message: ``[source: ]path: message``.

        Control characters and undecodable bytes in any part (a file name or a field name
        with a newline) are written as escapes, so the message stays on one line.
        """
        from supernode.textsafe import one_line

        where = f"{one_line(self.source)}: " if self.source else ""
        text = one_line(self.message)
        return f"{where}{one_line(self.path)}: {text}" if self.path else f"{where}{text}"


class StdoutClosed(Exception):  # noqa: N818 - named for what happened, like Terminated
    """The reader of stdout went away (a closed pipe): the CLI shell ends the command
    quietly with exit 141. Not an OSError, which typer would turn into exit 1."""

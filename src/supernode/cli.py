"""The ``supernode`` command: each subcommand is a thin shell over the library.

Subcommands live in :mod:`supernode.commands`, one module each; they register
themselves on :data:`app` when imported, which happens when a command line names them.
Bad input exits with code 2 and one line on stderr; the shell around every command
(:mod:`supernode.commands._shell`) handles usage errors, signals and defects.
"""

from __future__ import annotations

import gc
import sys

from supernode.commands import app


def main(argv: list[str] | None = None) -> None:
    """Entry point of the console script. Command modules are imported on demand (only
    the one the command line names), so a command starts without the others' imports.

    Run as the console script (``argv`` None), the process's objects are frozen out of
    the garbage collector once the command has finished (:func:`gc.freeze`): the
    interpreter's last collection at exit would otherwise walk every object of numpy,
    pydantic and the command only to throw them away (47 ms of the 0.06 s exit of
    ``plan``). Files are closed and temporary outputs removed before that, by the
    command's own ``finally`` blocks.
    """
    try:
        app(args=argv if argv is not None else sys.argv[1:], prog_name="supernode")
    finally:
        if argv is None:
            gc.freeze()


if __name__ == "__main__":  # pragma: no cover
    main()

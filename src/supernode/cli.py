"""The ``supernode`` command: each subcommand is a thin shell over the library.

Subcommands live in :mod:`supernode.commands`, one module each; they register
themselves on :data:`app`. Bad input exits with code 2 and one line on stderr.
"""

from __future__ import annotations

import sys

from supernode.commands import app, register_all


def main(argv: list[str] | None = None) -> None:
    """Entry point of the console script."""
    register_all()
    app(args=argv if argv is not None else sys.argv[1:], prog_name="supernode")


if __name__ == "__main__":  # pragma: no cover
    main()

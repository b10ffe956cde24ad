"""The ``supernode`` command: each subcommand is a thin shell over the library.

Subcommands live in :mod:`supernode.commands`, one module each; they register
themselves on :data:`app` when imported, which happens when a command line names them.
Bad input exits with code 2 and one line on stderr; the shell around every command
(:mod:`supernode.commands._shell`) handles usage errors, signals and defects.
"""

from __future__ import annotations

import gc
import os
import sys

from supernode.commands import app
from supernode.commands._shell import collect_after_loading

#: Allocations between collections of the youngest generation in the console script.
GC_YOUNG_THRESHOLD = 10_000


def main(argv: list[str] | None = None) -> None:
    """Entry point of the console script. Command modules are imported on demand (only
    the one the command line names), so a command starts without the others' imports.

    Run as the console script (``argv`` None), the process is tuned for a short life:

    * numpy's BLAS runs on one thread unless ``OPENBLAS_NUM_THREADS`` says otherwise: the
      toolkit's matrices are tiny, and OpenBLAS's pool costs ``plan`` 0.12 CPU-s (0.02 s
      of wall time) on two cores for nothing;
    * the garbage collector is off while the command's modules are imported, whose
      objects are then frozen out of it (:func:`collect_after_loading`);
    * the garbage collector's youngest generation is collected every
      :data:`GC_YOUNG_THRESHOLD` allocations instead of 700 (``plan``: 13 ms less);
    * the process's objects are frozen out of the collector once the command has
      finished (:func:`gc.freeze`): the interpreter's last collection at exit would
      otherwise walk every object of numpy, pydantic and the command only to throw them
      away (47 ms of the 0.06 s exit of ``plan``). Files are closed and temporary outputs
      removed before that, by the command's own ``finally`` blocks.
    """
    if argv is None:
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
        gc.set_threshold(GC_YOUNG_THRESHOLD, *gc.get_threshold()[1:])
        collect_after_loading()
    try:
        app(args=argv if argv is not None else sys.argv[1:], prog_name="supernode")
    finally:
        if argv is None:
            gc.freeze()


if __name__ == "__main__":  # pragma: no cover
    main()

"""Fuzz worker: runs CLI invocations in-process, one per request, under a memory limit.

Started by :mod:`fuzz_harness` as ``python worker.py LIMIT_BYTES``. It sets ``RLIMIT_AS`` to
the limit (so an invocation that tries to allocate past it fails with MemoryError, which
the CLI reports as an internal error, exit 70), imports the app once (fast cases), then
reads one JSON request per line on stdin (``{"argv": [...], "cwd": "..."}``) and answers
one JSON line (``code``, ``stdout``, ``stderr``, ``wall_s``) on the protocol pipe.
File descriptor 1 is pointed at /dev/null so that nothing a child process prints can
corrupt the protocol.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time


def main() -> None:
    """Serve requests until stdin closes."""
    limit = int(sys.argv[1])
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    protocol = os.fdopen(os.dup(1), "w", encoding="utf-8")
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    from typer.testing import CliRunner

    from supernode.commands import app, register_all

    register_all()
    runner = CliRunner()
    protocol.write(json.dumps({"ready": True}) + "\n")
    protocol.flush()
    for line in sys.stdin:
        request = json.loads(line)
        os.chdir(request["cwd"])
        start = time.perf_counter()
        result = runner.invoke(app, request["argv"])
        reply = {"code": result.exit_code, "stdout": result.stdout,
                 "stderr": result.stderr, "wall_s": time.perf_counter() - start}
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            reply["exception"] = repr(result.exception)
        protocol.write(json.dumps(reply) + "\n")
        protocol.flush()


if __name__ == "__main__":
    main()

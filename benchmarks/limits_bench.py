"""How fast each documented size limit is refused (target: within 2 s, docs/limits.md).

Every case of ``tests/limit_cases.py`` (one input just past one limit) runs in a fresh
process, as a user would run it (interpreter start and imports included), under a 4 GiB
address-space limit, in its own folder. The table shows the wall time to the refusal,
the exit code and the start of the one error line; the script exits 1 if a case is not
refused with exit 2, misses its limit in the message, or takes longer than 2 s.

    .venv/bin/python benchmarks/limits_bench.py
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from limit_cases import cases, make_files  # noqa: E402

TARGET_S = 2.0
MEMORY_BYTES = 4 * 2**30


def _cap() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))


def main() -> int:
    """Run every case; print the table; 1 if one misses the target."""
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    print("| limit | exit | seconds | error line |\n|---|---:|---:|---|")
    failed = 0
    for name, argv, files, fragment in cases():
        with tempfile.TemporaryDirectory() as folder:
            make_files(Path(folder), files)
            start = time.perf_counter()
            proc = subprocess.run([sys.executable, "-m", "supernode.cli", *argv], cwd=folder,
                                  capture_output=True, text=True, check=False, env=env,
                                  preexec_fn=_cap, timeout=120)
            wall = time.perf_counter() - start
        line = proc.stderr.strip().splitlines()[0] if proc.stderr.strip() else ""
        ok = proc.returncode == 2 and fragment in line and wall <= TARGET_S
        failed += not ok
        shown = line[:90].replace("|", "\\|") + ("..." if len(line) > 90 else "")
        print(f"| {name} | {proc.returncode} | {wall:.2f}{'' if ok else ' MISS'} | "
              f"`{shown}` |")
    print(f"\n{len(cases()) - failed} of {len(cases())} refused with their limit within "
          f"{TARGET_S:g} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

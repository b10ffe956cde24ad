"""Benchmark: CPU seconds per stage of the flagship design review, in one process.

Run: ``.venv/bin/python benchmarks/design_stages.py [--repeats N]`` (prints only). Each
repeat is a fresh process that imports the design and report packages, runs
:func:`supernode.design.run_design` on the flagship with ``workers=1`` (every stage in this
process, the scheduling replay included), a hook recording the CPU seconds at each stage's
start, then writes the report with ``workers=1``. CPU seconds (user + system, children
included) rather than wall seconds: they compare between loads where wall seconds do not.
To compare two trees, run it with ``PYTHONPATH=<other tree>/src`` interleaved with this
one. Where issue 30's design figures come from (benchmarks/README.md).
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys

CHILD = r"""
import json, pathlib, resource, tempfile

def cpu():
    a = resource.getrusage(resource.RUSAGE_SELF)
    b = resource.getrusage(resource.RUSAGE_CHILDREN)
    return a.ru_utime + a.ru_stime + b.ru_utime + b.ru_stime

start = cpu()
from supernode.commands.design import design_input
from supernode.design import run_design
from supernode.report import write_report
out = {"imports": cpu() - start}
marks = []
result = run_design(design_input(None, None, None, None, None, True, 0, None, None, 1, None),
                    lambda stage, i, n: marks.append((stage, cpu())))
marks.append(("end", cpu()))
out |= {stage: end - begin for (stage, begin), (_, end) in zip(marks, marks[1:])}
data = result.to_dict()
before = cpu()
with tempfile.TemporaryDirectory() as folder:
    import inspect
    one = {"workers": 1} if "workers" in inspect.signature(write_report).parameters else {}
    write_report(data, pathlib.Path(folder) / "out", "--out", result.files, [], **one)
out["report"] = cpu() - before
out["total"] = cpu()
print(json.dumps(out))
"""


def main(repeats: int = 3) -> int:
    """Print the median CPU seconds of each stage over ``repeats`` fresh processes."""
    runs = [json.loads(subprocess.run([sys.executable, "-c", CHILD], capture_output=True,
                                      text=True, check=True).stdout) for _ in range(repeats)]
    print("| stage | CPU s (median) | range |\n|---|---:|---|")
    for key in runs[0]:
        values = [r[key] for r in runs]
        print(f"| {key} | {statistics.median(values):.2f} | {min(values):.2f}–"
              f"{max(values):.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[sys.argv.index("--repeats") + 1]) if "--repeats" in sys.argv
                  else 3))

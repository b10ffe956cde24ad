"""The litmus-test program ``supernode memory litmus --out DIR`` writes, and its results.

The program is :mod:`supernode.memory.litmus_program` (standard library only, so it runs
on any machine with Python, without this toolkit); :func:`write_litmus` copies it and a
README into a new folder. :func:`read_results` validates the JSON the program writes
(``supernode import litmus FILE``) and :func:`verdicts` says, per test, whether an outcome
sequential consistency forbids was seen and which memory models allow it (Alglave et al.,
'Herding cats', TOPLAS 2014).
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

from supernode.errors import InputError
from supernode.outputs import output_folder

SCHEMA = "supernode-litmus/1"
#: Memory models that allow each test's SC-forbidden outcome.
ALLOWED_BY = {"MP": "Arm, POWER (no barriers); not SC or x86-TSO",
              "SB": "x86-TSO, Arm, POWER; not SC",
              "IRIW": "POWER (not multi-copy atomic); not SC, x86-TSO or Armv8"}

README = """# Litmus tests (supernode memory litmus)

Run on the machine under test (Python >= 3.8, standard library only):

    python3 litmus.py --iterations 2000 --out litmus-results.json

then read the results back:

    supernode import litmus litmus-results.json

MP, SB and IRIW run as processes over one block of shared memory; the JSON counts each
outcome and the one sequential consistency forbids. See docs/memory.md ("Litmus tests").
"""


def program_text() -> str:
    """Source of the standalone litmus program."""
    return (resources.files("supernode.memory") / "litmus_program.py").read_text(
        encoding="utf-8")


def write_litmus(out: Path) -> list[str]:
    """Write ``litmus.py`` and ``README.md`` into the new folder ``out``; the file names."""
    files = {"litmus.py": program_text(), "README.md": README}
    with output_folder(out, "--out") as folder:
        for name, text in files.items():
            (folder / name).write_text(text, encoding="utf-8")
    return sorted(files)


def read_results(data: Any, source: str) -> dict[str, Any]:
    """The validated results document (InputError naming the field otherwise)."""
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        raise InputError("schema", f"not a litmus results file: schema must be {SCHEMA!r}",
                         source=source)
    tests = data.get("tests")
    if not isinstance(tests, dict) or not tests:
        raise InputError("tests", "needs a mapping of test name to outcome counts",
                         source=source)
    for name, test in tests.items():
        if name not in ALLOWED_BY:
            raise InputError(f"tests.{name}", f"unknown test; one of {', '.join(ALLOWED_BY)}",
                             source=source)
        outcomes = test.get("outcomes") if isinstance(test, dict) else None
        if not isinstance(outcomes, dict) or not all(
                isinstance(v, int) and not isinstance(v, bool) and v >= 0
                for v in outcomes.values()):
            raise InputError(f"tests.{name}.outcomes", "needs outcome -> count (integers "
                             ">= 0)", source=source)
        if not isinstance(test.get("sc_forbidden"), str):
            raise InputError(f"tests.{name}.sc_forbidden", "needs the SC-forbidden outcome",
                             source=source)
    return data


def verdicts(data: dict[str, Any]) -> list[dict[str, Any]]:
    """Per test: runs, the SC-forbidden outcome, how often it was seen, who allows it."""
    out = []
    for name, test in data["tests"].items():
        runs = sum(test["outcomes"].values())
        seen = int(test["outcomes"].get(test["sc_forbidden"], 0))
        out.append({"test": name, "iterations": runs, "sc_forbidden": test["sc_forbidden"],
                    "seen": seen, "share": seen / runs if runs else 0.0,
                    "allowed_by": ALLOWED_BY[name]})
    return out

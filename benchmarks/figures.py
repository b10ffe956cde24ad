"""The timing figures README.md and docs/*.md quote, taken from benchmarks/README.md's tables.

One figure per measurement: a timing quoted in the docs is written as a marker naming a
cell of a benchmark's recorded table,

    <!-- bench:wait_bench|supernode design (flagship)|process wall s -->6.22<!-- /bench --> s

(block, the row's first cell, the column's header), and the text between the markers is
that cell. ``run_all.py`` rewrites every marker after it records the tables
(:func:`rewrite`); ``tests/test_bench_figures.py`` checks that every marker equals its
cell and that no unmarked timing of the commands remains (:data:`UNMARKED_TIMINGS`).
Run ``.venv/bin/python benchmarks/figures.py`` to rewrite the markers from the current
tables without running a benchmark.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
TABLES = HERE / "README.md"

_BLOCK = re.compile(r"<!-- begin (\S+) -->\n(.*?)<!-- end \1 -->", re.S)
MARKER = re.compile(r"<!-- bench:([^|>]+)\|([^|>]+)\|([^>]+?) -->(.*?)<!-- /bench -->")
#: Phrases that state how long design, estimate, plan, schedule or simulate took, when
#: not inside a marker (the figure must then come from a table).
UNMARKED_TIMINGS = tuple(re.compile(phrase.replace(" ", r"\s+")) for phrase in (
    r"\d[\d.,]* s(?: and [\d,]+ MiB)? as a whole process",
    r"in \d[\d.]* s as a whole",
    r"whole command takes (?:about |~)?\d",
    r"flagship(?: review)?(?: takes)?:? (?:about |~)?\d[\d.]* s",
    r"\d[\d.]* s with `--workers 1`",
    r"\d[\d.]* s in one process",
    r"\d[\d.]* s by default on 2 cores",
    r"\d[\d.]* s in the library",
    r"stage takes (?:about |~)?\d",
))


def docs() -> list[Path]:
    """The files whose timings must come from the tables: README.md and docs/*.md."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def tables(text: str) -> dict[str, dict[str, dict[str, str]]]:
    """``{block: {row's first cell: {column header: cell}}}`` of every markdown table
    between ``<!-- begin NAME -->`` and ``<!-- end NAME -->`` (several tables of one
    block merged; a later row of the same first cell wins)."""
    out: dict[str, dict[str, dict[str, str]]] = {}
    for block in _BLOCK.finditer(text):
        rows = out.setdefault(block.group(1), {})
        header: list[str] | None = None
        for line in block.group(2).splitlines():
            if not line.startswith("|"):
                header = None
                continue
            cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
            if header is None:
                header = cells
            elif not set("".join(cells)) <= set("-: "):
                rows[cells[0]] = dict(zip(header, cells, strict=False))
    return out


def cell(found: dict[str, dict[str, dict[str, str]]], block: str, row: str, column: str
         ) -> str | None:
    """The recorded cell a marker names, None when the table has no such cell."""
    return found.get(block, {}).get(row, {}).get(column)


def mismatches(text: str, found: dict[str, dict[str, dict[str, str]]]) -> list[str]:
    """Each marker of ``text`` whose figure is not its table's cell, as one line."""
    out = []
    for m in MARKER.finditer(text):
        want = cell(found, *m.group(1, 2, 3))
        if want != m.group(4):
            out.append(f"{'|'.join(m.group(1, 2, 3))}: {m.group(4)!r} (table: {want!r})")
    return out


def unmarked(text: str) -> list[str]:
    """Timing phrases of ``text`` outside markers (:data:`UNMARKED_TIMINGS`)."""
    bare = MARKER.sub("<figure>", text)
    return [m.group(0) for rx in UNMARKED_TIMINGS for m in rx.finditer(bare)]


def rewrite(text: str, found: dict[str, dict[str, dict[str, str]]]) -> str:
    """``text`` with every marker's figure replaced by its cell (kept when none)."""
    def figure(m: re.Match[str]) -> str:
        value = cell(found, *m.group(1, 2, 3))
        return m.group(0) if value is None else \
            f"<!-- bench:{m.group(1)}|{m.group(2)}|{m.group(3)} -->{value}<!-- /bench -->"
    return MARKER.sub(figure, text)


def rewrite_docs() -> list[str]:
    """Rewrite the markers of :func:`docs` from :data:`TABLES`; markers naming no cell."""
    found = tables(TABLES.read_text(encoding="utf-8"))
    missing = []
    for path in docs():
        text = path.read_text(encoding="utf-8")
        new = rewrite(text, found)
        if new != text:
            path.write_text(new, encoding="utf-8")
        missing += [f"{path.name}: {line}" for line in mismatches(new, found)]
    return missing


if __name__ == "__main__":
    problems = rewrite_docs()
    print("\n".join(problems) or "every marked figure equals its table's cell")
    sys.exit(1 if problems else 0)

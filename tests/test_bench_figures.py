"""One figure per measurement: every timing README.md and docs/*.md quote of the commands
is a marker naming a cell of benchmarks/README.md's recorded tables, and equals it
(``benchmarks/figures.py``). Reads the committed files only: no benchmark runs here."""

from __future__ import annotations

import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCH))

import figures  # noqa: E402

RECORDED = figures.tables(figures.TABLES.read_text(encoding="utf-8"))


def test_every_marked_figure_equals_its_table_cell() -> None:
    marked = 0
    for path in figures.docs():
        text = path.read_text(encoding="utf-8")
        marked += len(figures.MARKER.findall(text))
        assert figures.mismatches(text, RECORDED) == [], path.name
    assert marked >= 10  # README's and design.md's timings at least


def test_no_unmarked_timing_of_the_commands_remains() -> None:
    for path in figures.docs():
        assert figures.unmarked(path.read_text(encoding="utf-8")) == [], path.name


def test_the_recorded_tables_parse_into_rows_and_columns() -> None:
    wait = RECORDED["wait_bench"]
    floor = wait["python -c 'import numpy' (floor)"]
    assert float(floor["process wall s"]) > 0 and floor["x floor"] == "1.0x"
    assert "supernode estimate (preset, TP8 PP4)" in wait
    assert float(RECORDED["design_bench"]["plan"]["library s (median)"]) > 0


def test_a_stale_or_unknown_marker_is_caught_and_rewritten() -> None:
    tables = {"b": {"row a": {"wall s": "1.25"}}}
    stale = "took <!-- bench:b|row a|wall s -->9.9<!-- /bench --> s"
    unknown = "<!-- bench:b|row z|wall s -->1.0<!-- /bench -->"
    assert figures.mismatches(stale, tables) == ["b|row a|wall s: '9.9' (table: '1.25')"]
    assert len(figures.mismatches(unknown, tables)) == 1
    fixed = figures.rewrite(stale + unknown, tables)
    assert figures.mismatches(fixed, tables) == figures.mismatches(unknown, tables)
    assert "-->1.25<!--" in fixed


def test_an_unmarked_timing_phrase_is_found_and_a_marked_one_is_not() -> None:
    assert figures.unmarked("reviews it in 6.2 s as a whole\nprocess") != []
    assert figures.unmarked("the flagship review: 6.2 s, 8.0 s with `--workers 1`") != []
    marked = "in <!-- bench:b|r|c -->6.2<!-- /bench --> s as a whole process"
    assert figures.unmarked(marked) == []

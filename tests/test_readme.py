"""The README's examples are run, and every line they show is found in the real output.

An example is a ``$ supernode ...`` line in a code block; the lines under it, up to the
next ``$`` line or the end of the block, are what it prints. Each shown line is looked for
in the command's output, in order (a line is found after the one before it), token by
token: box-drawing characters (table borders, tree branches) count as spaces, and two
tokens are equal only when their text is. The README's conventions:

* a line ``...`` stands for output lines left out;
* a token ``...`` inside a line stands for tokens of that output line left out (any
  number, none included); the token before it may drop the punctuation that follows it in
  the output (``nodes ...`` for ``nodes. 0 keeps ...``), nothing else;
* a figure written ``~N`` is machine-dependent (a timing, a rate, the process count): any
  figure of the output stands there; no other figure is approximate;
* a line ``title: item, item; item`` that is no output line sums up the table printed
  under the output line ``title``: each item (``label figures...``) is one row of it,
  whose figures are the item's figures, in order, and whose cells or column headers
  begin with each of the item's words (``optimizer 3.41`` is the row
  ``optimizer_states  3.41``). ``...`` among the items stands for rows left out.

The commands run with a wide terminal, so that no table is wrapped; ``out/`` is a
temporary folder, written back as ``out/`` in the output.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from supernode.commands import app, register_all

README = Path(__file__).resolve().parents[1] / "README.md"
BOX = re.compile("[\u2500-\u257f]")
FIGURE = re.compile(r"\d[\d,]*(\.\d+)?%?")
APPROXIMATE = re.compile(r"~\d[\d,]*(\.\d+)?")
PUNCTUATION = "()[],;:"
WIDTH = 240


def _examples() -> list[tuple[str, list[str]]]:
    """(command, shown output lines) for every `$ supernode ...` line in a code block."""
    out: list[tuple[str, list[str]]] = []
    blocks: list[list[str]] = []
    inside = False
    for line in README.read_text().splitlines():
        if line.startswith("```"):
            inside = not inside
            if inside:
                blocks.append([])
        elif inside:
            blocks[-1].append(line)
    for lines in blocks:
        for i, line in enumerate(lines):
            if line.startswith("$ supernode "):
                shown = []
                for after in lines[i + 1:]:
                    if after.startswith("$ "):
                        break
                    shown.append(after)
                out.append((line[2:], shown))
    return out


EXAMPLES = _examples()


def _tokens(line: str) -> list[str]:
    return BOX.sub(" ", line).split()


def _token_matches(shown: str, real: str) -> bool:
    if "~" not in shown:
        return shown == real
    pattern = APPROXIMATE.sub(lambda _: "\x00", shown)
    pattern = re.escape(pattern).replace("\x00", r"\d[\d,]*(?:\.\d+)?")
    return re.fullmatch(pattern, real) is not None


def _line_matches(shown: list[str], real: list[str]) -> bool:
    """Every token of ``shown`` equal to ``real``'s, ``...`` standing for any run (the
    token before it may lose the punctuation that ends it in the output)."""
    if not shown:
        return not real
    if shown[0] == "...":
        return any(_line_matches(shown[1:], real[k:]) for k in range(len(real) + 1))
    if not real:
        return False
    first = _token_matches(shown[0], real[0]) or (
        shown[1:2] == ["..."] and real[0].startswith(shown[0])
        and real[0][len(shown[0]):].strip(".,;:)") == "")
    return first and _line_matches(shown[1:], real[1:])


def _table(lines: list[list[str]], raw: list[str], title: int) -> tuple[list[str],
                                                                         list[list[str]]]:
    """(header tokens, row tokens) of the table printed under line ``title``."""
    rows = []
    for k in range(title + 1, len(raw)):
        if not BOX.search(raw[k]):
            break
        if lines[k]:
            rows.append(lines[k])
    return (rows[0], rows[1:]) if rows else ([], [])


def _item_matches(item: list[str], header: list[str], row: list[str]) -> bool:
    cells = [t.strip(PUNCTUATION) for t in row]
    words = [w.strip(PUNCTUATION) for w in item
             if w != "..." and not FIGURE.fullmatch(w.strip(PUNCTUATION))]
    figures = [f.strip(PUNCTUATION) for f in item if FIGURE.fullmatch(f.strip(PUNCTUATION))]
    position = 0
    for figure in figures:
        if figure not in cells[position:]:
            return False
        position = cells.index(figure, position) + 1
    names = cells + [t.strip(PUNCTUATION) for t in header]
    return all(any(n.startswith(w) for n in names) for w in words if w)


def _find(shown: str, lines: list[list[str]], raw: list[str], start: int) -> int | None:
    """Index past the output that ``shown`` is found in at or after ``start``, or None."""
    tokens = _tokens(shown)
    for k in range(start, len(lines)):
        if _line_matches(tokens, lines[k]):
            return k + 1
    if ": " not in shown:
        return None
    title, items = shown.strip().split(": ", 1)
    for k in range(start, len(lines)):
        if lines[k] != _tokens(title):
            continue
        header, rows = _table(lines, raw, k)
        parts = [p.split() for p in re.split(r"[,;] ", items) if p.strip() != "..."]
        if rows and all(any(_item_matches(p, header, r) for r in rows) for p in parts):
            return k + 1 + len(rows)
    return None


def _unmatched(shown: list[str], output: str) -> list[str]:
    raw = output.splitlines()
    lines = [_tokens(line) for line in raw]
    position, missing = 0, []
    for line in shown:
        if not line.strip() or line.strip() == "...":
            continue
        found = _find(line, lines, raw, position)
        if found is None:
            missing.append(line)
        else:
            position = found
    return missing


def test_readme_has_examples():
    assert len(EXAMPLES) >= 4
    assert all(shown for _, shown in EXAMPLES)


def test_the_matcher_takes_no_figure_it_is_not_shown():
    """The rules above, on a made-up output: a changed digit, a reordered line or a figure
    in the wrong row is missing; ``...``, ``~`` and table summaries match."""
    output = ("run: 1,024 GPUs in 0.52 s (3 processes)\n"
              "time per step\n┏━━━━━━━━━━┳━━━━━━━┓\n┃ part     ┃ share ┃\n"
              "┡━━━━━━━━━━╇━━━━━━━┩\n│ compute  │ 96.3% │\n│ tp_comm  │  1.9% │\n"
              "└──────────┴───────┘\nlast line, with more\n")
    assert _unmatched(["run: 1,024 GPUs in ~0.1 s (~8 processes)", "...",
                       "time per step: compute 96.3%, ...", "last line, ..."], output) == []
    assert _unmatched(["run: 1,025 GPUs ..."], output) == ["run: 1,025 GPUs ..."]
    assert _unmatched(["run: 1,024 GPUs in 0.5 s ..."], output) != []  # no ~: exact
    assert _unmatched(["time per step: compute 1.9%"], output) != []  # another row's
    assert _unmatched(["time per step: compute 96.3%, tp_comm 1.9%",
                       "run: 1,024 GPUs ..."], output) != []  # out of order
    assert _unmatched(["last line"], output) != []  # a line is matched whole
    assert _unmatched(["last line ..."], output) == []  # "line," cut before its comma
    assert _unmatched(["run: 1,02 ..."], output) != []  # but never inside a figure


@pytest.mark.parametrize("command, shown", EXAMPLES, ids=[c for c, _ in EXAMPLES])
def test_readme_example_runs_and_its_figures_are_real(command, shown, tmp_path):
    register_all()
    out = f"{tmp_path}/"
    args = [a if a != "out/" else out for a in shlex.split(command)[1:]]
    result = CliRunner().invoke(app, args, terminal_width=WIDTH)
    assert result.exit_code == 0, result.output
    output = result.output.replace(out, "out/")
    assert _unmatched(shown, output) == [], output

"""Side-by-side designs (issue 24 item 5): the winner of each figure by its stated
direction, compare.json read from each design's own results (nothing recomputed), the BOM
diff, compare.md showing the same figures as compare.json, and the positional form's
refusals (4+ clusters, duplicates, --cluster or --example beside them, no --workload): one
``error:`` line, exit 2, nothing written."""

from __future__ import annotations

import json
import re

import jsonschema
import pytest
from designs import example_design
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError
from test_cli_errors import assert_bad_input, run

from supernode.design.compare import FIGURES, compare_designs, winners
from supernode.design.results.compare import check_comparison
from supernode.report import write_compare
from supernode.report.blocks import lookup
from supernode.report.compare_md import render_compare_markdown
from supernode.report.format import format_value
from supernode.rules import VERDICTS
from supernode.textsafe import markdown_safe

values = st.lists(st.one_of(st.none(), st.floats(-1e6, 1e6)), min_size=2, max_size=3)


@given(values, st.sampled_from(["lower", "higher"]))
def test_winners_hold_the_best_value_in_the_stated_direction(xs, direction):
    labels = ["a", "b", "c"][:len(xs)]
    won = winners(xs, direction, labels)
    known = [x for x in xs if x is not None]
    if len(known) < 2 or len(set(known)) == 1:
        assert won == []
        return
    best = min(known) if direction == "lower" else max(known)
    assert won == [lab for x, lab in zip(xs, labels, strict=True) if x == best]


def test_the_better_verdict_wins():
    assert winners(["fail", "pass"], "better verdict", ["a", "b"]) == ["b"]
    assert winners(list(VERDICTS), "better verdict", ["a", "b", "c"]) == ["c"]
    assert winners(["pass with warnings"] * 2, "better verdict", ["a", "b"]) == []


def test_compare_reads_each_design_and_diffs_the_bom():
    a = example_design("flagship", simulate=False).to_dict()
    b = example_design("flawed", simulate=False).to_dict()
    c = compare_designs([a, b], ["a", "b"], ["flagship.yaml", "flawed.yaml"])
    assert [f["id"] for f in c["figures"]] == [f.id for f in FIGURES]
    for f, spec in zip(c["figures"], FIGURES, strict=True):
        assert f["values"] == [lookup(a, spec.key), lookup(b, spec.key)]
        assert f["direction"] == spec.direction
    assert [r["id"] for r in c["rules"]] == [f["id"] for f in a["findings"]]
    for r in c["rules"]:
        assert r["statuses"] == [next(f["status"] for f in d["findings"] if f["id"] == r["id"])
                                 for d in (a, b)]
    counts = {d: {r["component"]: r["count"] for r in x["bom"]["rows"]}
              for d, x in (("a", a), ("b", b))}
    for row in c["bom"]:
        assert row["counts"] == [counts["a"].get(row["component"], 0),
                                 counts["b"].get(row["component"], 0)]
        assert row["deltas"] == [0, row["counts"][1] - row["counts"][0]]
    assert {r["component"] for r in c["bom"]} == set(counts["a"]) | set(counts["b"])


@pytest.mark.parametrize("argv, fragment", [
    (["hgx-h100", "gb200-nvl72", "mi300x-8", "gb300-nvl72"], "CLUSTER"),
    (["hgx-h100", "hgx-h100"], "given twice"),
    (["hgx-h100", "gb200-nvl72", "--cluster", "hgx-h100"], "CLUSTER"),
    (["hgx-h100", "gb200-nvl72", "--example", "flawed"], "--example"),
    (["hgx-h100", "no-such-cluster.yaml"], ""),
])
def test_positional_form_refuses_bad_input(argv, fragment, tmp_path):
    out = tmp_path / "out"
    workload = [] if "--example" in argv else ["--workload", "llama3-8b"]
    assert_bad_input(run("design", *argv, *workload, "--out", str(out), "--no-simulate"),
                     fragment)
    assert not out.exists()


def test_positional_form_needs_a_workload(tmp_path):
    out = tmp_path / "out"
    assert_bad_input(run("design", "hgx-h100", "gb200-nvl72", "--out", str(out)), "--workload")
    assert not out.exists()


def test_compare_json_contract_refuses_a_missing_design_value():
    a = example_design("flagship", simulate=False).to_dict()
    b = example_design("flawed", simulate=False).to_dict()
    c = compare_designs([a, b], ["a", "b"], ["a.yaml", "b.yaml"])
    assert check_comparison(c).schema_ == "supernode-compare/1"
    c["figures"][0]["values"].pop()
    with pytest.raises(ValidationError):
        check_comparison(c)
    c["figures"][0]["values"].append(None)
    c["bom"][0]["extra"] = 1
    with pytest.raises(ValidationError):
        check_comparison(c)


def test_schema_command_prints_the_compare_contract():
    """``supernode schema compare`` validates a real compare.json (draft 2020-12)."""
    result = run("schema", "compare")
    assert result.exit_code == 0, result.output
    schema = json.loads(result.stdout)
    jsonschema.Draft202012Validator.check_schema(schema)
    a = example_design("flagship", simulate=False).to_dict()
    b = example_design("flawed", simulate=False).to_dict()
    doc = json.loads(json.dumps(compare_designs([a, b], ["a", "b"], ["a.yaml", "b.yaml"])))
    jsonschema.Draft202012Validator(schema).validate(doc)
    doc["designs"][0]["extra"] = 1
    assert not jsonschema.Draft202012Validator(schema).is_valid(doc)


def _md_table(text: str, title: str) -> list[list[str]]:
    """The body rows of the Markdown table under ``**title**`` (cells unescaped)."""
    lines = text.splitlines()
    start = lines.index(f"**{title}**") + 4  # title, blank, header, rule
    rows = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        cells = re.split(r"(?<!\\)\|", line.strip()[1:-1])
        rows.append([c.strip().replace("\\|", "|") for c in cells])
    return rows


def _shown(value, kind: str) -> str:
    return ("-" if value is None else markdown_safe(value)) if kind == "text" else \
        format_value(value, kind)


def test_compare_md_shows_every_figure_of_compare_json(tmp_path):
    """compare.md (written with the rest, all or nothing) holds every headline figure,
    winner, rule status and BOM count and delta of compare.json, as the report formats
    them."""
    a = example_design("flagship", simulate=False).to_dict()
    b = example_design("flawed", simulate=False).to_dict()
    c = compare_designs([a, b], ["a", "b"], ["flagship.yaml", "flawed.yaml"])
    paths = write_compare(c, [("a", a, None), ("b", b, None)], tmp_path / "out")
    assert {p.name for p in paths} >= {"report.html", "compare.md", "compare.json"}
    text = (tmp_path / "out" / "compare.md").read_text(encoding="utf-8")
    assert json.loads((tmp_path / "out" / "compare.json").read_text()) == \
        json.loads(json.dumps(c))
    assert text == render_compare_markdown(c)
    figures = _md_table(text, "Headline figures (winner: the direction stated)")
    assert len(figures) == len(c["figures"]) == len(FIGURES)
    for row, f in zip(figures, c["figures"], strict=True):
        assert row[0] == f["label"] and row[1] == f["direction"]
        assert row[2:4] == [_shown(v, f["kind"]) for v in f["values"]]
        assert row[4] == (", ".join(f["winners"]) or "tie")
    rules = _md_table(text, "Rule status per design")
    assert [[r[0], r[1], *r[2:]] for r in rules] == \
        [[r["id"], r["severity"], *(s or "-" for s in r["statuses"])] for r in c["rules"]]
    bom = _md_table(text, "Component counts per design")
    assert len(bom) == len(c["bom"])
    for row, comp in zip(bom, c["bom"], strict=True):
        assert row[0] == comp["component"]
        assert row[2:4] == [format_value(n, "count") for n in comp["counts"]]
        assert row[4] == format_value(comp["deltas"][1], "number")

"""The report's section registry: a later issue adds a section by registering a builder."""

from __future__ import annotations

import pytest
from designs import example_design

from supernode.report import SECTIONS, register_section, write_report
from supernode.report.all_sections import build_sections
from supernode.report.blocks import Num, Paragraph, Section
from supernode.report.format import format_value


def _demo(results):
    if "demo" not in results:
        return None
    return Section("demo", "Demo", [Paragraph((Num(("demo", "goodput"), "share"),))])


@pytest.fixture()
def results():
    return example_design("flawed", simulate=False).to_dict()


def test_registered_section_is_rendered_after_its_anchor(results, tmp_path):
    build_sections(results)  # registers the built-in sections
    register_section("demo", "Demo", _demo, after="facility")
    try:
        ids = [s.id for s in SECTIONS]
        assert ids.index("demo") == ids.index("facility") + 1
        with pytest.raises(ValueError):
            register_section("demo", "Demo", _demo)
        assert "demo" not in [s.id for s in build_sections(results)]
        results["demo"] = {"goodput": 0.9321}
        write_report(results, tmp_path / "r")
        html = (tmp_path / "r" / "report.html").read_text()
        assert '<section id="demo">' in html and format_value(0.9321, "share") in html
        assert "## Demo" in (tmp_path / "r" / "report.md").read_text()
    finally:
        SECTIONS[:] = [s for s in SECTIONS if s.id != "demo"]


def test_not_simulated_design_says_so(results, tmp_path):
    assert results["simulation"] is None
    statuses = {f["id"]: f["status"] for f in results["findings"]}
    assert statuses["link_utilisation"] == "not_evaluated"
    sections = {s.id: s for s in build_sections(results)}
    assert len(sections["simulation"].blocks) == 1


def test_rules_doc_is_generated():
    from pathlib import Path

    from supernode.rules.docs import render

    doc = Path(__file__).resolve().parents[1] / "docs" / "rules.md"
    text = doc.read_text(encoding="utf-8")
    assert render(text) == text, "regenerate docs/rules.md (see its 'Regenerate' block)"


def test_timeline_summary_is_bounded_and_exact():
    from types import SimpleNamespace

    import numpy as np

    from supernode.design.simulation import MAX_INTERVALS, timeline_by_dimension

    rng = np.random.default_rng(7)
    starts = rng.uniform(0, 10.0, 50_000)
    rows = [("job0", f"stage {i % 64}", "tp" if i % 2 else "compute", float(s), float(s) + 1e-4)
            for i, s in enumerate(starts)]
    rows.append(("job0", "stage 0", "dp", 2.0, 3.0))
    rows.append(("job0", "stage 1", "dp", 2.5, 4.0))
    result = SimpleNamespace(tables=SimpleNamespace(timeline=rows, duration_s=10.0001))
    lanes = timeline_by_dimension(result)["lanes"]
    assert list(lanes)[:2] == ["compute", "tp"]
    # gaps shorter than duration / MAX_INTERVALS are closed: at most MAX_INTERVALS + 1 spans
    assert all(len(lane["intervals"]) <= MAX_INTERVALS + 1 for lane in lanes.values())
    assert lanes["dp"]["intervals"] == [[2.0, 4.0]] and lanes["dp"]["busy_s"] == 2.0
    assert lanes["tp"]["transfers"] == 25_000


@pytest.mark.parametrize("workers", [2, 3])
def test_sections_built_side_by_side_are_those_one_process_builds(results, workers):
    """The builders dealt to forked children (each section's figures drawn there) give
    the sections, in order, and every figure's bytes that one process gives."""
    from supernode.report.markdown import figures_of

    alone = build_sections(results, workers=1)
    shared = build_sections(results, workers=workers)
    assert [s.id for s in shared] == [s.id for s in alone]
    assert shared == alone
    assert figures_of(shared) == figures_of(alone) and figures_of(alone)

"""The design folder's exported files: what loads each one, written with the report as one
set (a rerun replaces a sub-folder whole, keeps other files), refused when the texts do not
match the listing, left out when no texts are given."""

from __future__ import annotations

import json

import pytest

from supernode.design import DesignInput, example, run_design
from supernode.design.artefacts import EXPORT_LOADERS, MONITORING_LOADERS
from supernode.errors import InputError
from supernode.exports import EXPORT_FORMATS
from supernode.monitor import artefacts as monitor_files
from supernode.report import write_report


def test_every_format_and_monitoring_file_says_what_loads_it():
    assert set(EXPORT_FORMATS.names()) == set(EXPORT_LOADERS)
    assert set(EXPORT_LOADERS["k8s-labels"]) == {"node-labels.yaml", "label-nodes.sh"}
    names = {getattr(monitor_files, n) for n in ("RULES", "TESTS", "TESTS_LONG", "COUNTERS",
                                                  "DASHBOARD", "TOPOLOGY", "INHIBIT",
                                                  "MANIFEST")}
    assert names == set(MONITORING_LOADERS)


@pytest.fixture(scope="module")
def design():
    e = example("flawed")
    return run_design(DesignInput(e.cluster, e.workload, e.plan, simulate=False,
                                  reliability_runs=50, prometheus_major=3))


def test_a_rerun_replaces_the_exported_folders_whole(design, tmp_path):
    data, files = design.to_dict(), design.files
    assert data["inputs"]["prometheus_major"] == data["artefacts"]["prometheus_major"] == 3
    out = tmp_path / "report"
    write_report(data, out, artefacts=files)
    (out / "exports" / "stale.conf").write_text("from an earlier design")
    (out / "notes.txt").write_text("mine")
    written = write_report(data, out, artefacts=files)
    assert not (out / "exports" / "stale.conf").exists()
    assert (out / "notes.txt").read_text() == "mine"
    for path, text in files.items():
        assert (out / path).read_text(encoding="utf-8") == text and out / path in written
    assert not [p for p in tmp_path.iterdir() if "staging" in p.name or "replaced" in p.name]
    assert not [p for p in out.iterdir() if p.name.startswith(".")]


def test_a_file_where_a_folder_goes_is_refused_before_anything_moves(design, tmp_path):
    out = tmp_path / "report"
    out.mkdir()
    (out / "exports").write_text("a file")
    with pytest.raises(InputError) as err:
        write_report(design.to_dict(), out, artefacts=design.files)
    assert err.value.path == "--out" and "is a file where the output has a folder" in \
        err.value.message
    assert sorted(p.name for p in out.iterdir()) == ["exports"]


def test_texts_that_do_not_match_the_listing_are_refused(design, tmp_path):
    files = dict(design.files)
    files.pop(next(iter(files)))
    with pytest.raises(ValueError, match="not the files"):
        write_report(design.to_dict(), tmp_path / "r", artefacts=files)
    bad = {"../escape.txt": "x"}
    data = design.to_dict()
    data["artefacts"] = {**data["artefacts"], "files": [{"path": "../escape.txt"}]}
    with pytest.raises(ValueError, match="plain relative path"):
        write_report(data, tmp_path / "r", artefacts=bad)
    assert not (tmp_path / "r").exists() and not (tmp_path / "escape.txt").exists()


def test_without_the_texts_no_artefact_is_listed(design, tmp_path):
    write_report(design.to_dict(), tmp_path / "r")
    data = json.loads((tmp_path / "r" / "results.json").read_text())
    assert "artefacts" not in data and not (tmp_path / "r" / "exports").exists()
    assert '<section id="artefacts">' not in (tmp_path / "r" / "report.html").read_text()
    assert '<section id="scheduling">' in (tmp_path / "r" / "report.html").read_text()

"""Write the report set into a folder, all or nothing (``supernode.outputs.output_folder``):
the report files, its figures, and the design's exported files (``exports/``,
``monitoring/``) when they are given."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import Any

from supernode.jsontext import json_text
from supernode.outputs import output_folder
from supernode.report.all_sections import build_sections
from supernode.report.bom_csv import bom_csv
from supernode.report.decisions_md import render_decisions
from supernode.report.html import render_html
from supernode.report.markdown import figures_of, render_markdown
from supernode.spec.documents import dump_yaml

#: Files of a report folder (and figures/NAME.svg for report.md).
REPORT_FILES = ("report.html", "report.md", "results.json", "decisions.md", "bom.csv")


def results_json(results: dict[str, Any]) -> str:
    """``results.json`` text (strict JSON: a non-finite number is ``null``,
    :func:`supernode.jsontext.json_text`)."""
    return json_text(results, indent=1) + "\n"


def _plan_file(results: dict[str, Any]) -> tuple[str, str] | None:
    """The reviewed plan's file (name, YAML text) the reproducing commands read
    (``results`` -> ``reproduce``), or None when the results have none."""
    rep = results.get("reproduce") or {}
    name, document = rep.get("plan_file"), rep.get("plan_document")
    if not name or document is None:
        return None
    if PurePosixPath(name).name != name or name in REPORT_FILES:
        raise ValueError(f"reviewed plan file {name!r} is not a plain file name")
    header = ("# The plan `supernode design` reviewed, every knob resolved: the commands in\n"
              "# results.json -> reproduce (and in the report's Reproduce section) read it.\n")
    return name, header + dump_yaml(document)


def _checked_artefacts(results: dict[str, Any], artefacts: Mapping[str, str] | None
                       ) -> tuple[dict[str, Any], dict[str, str]]:
    """The results to render and the files to write beside them: without the texts, the
    listing is left out (a report never lists a file it did not write); with them, they
    must be exactly the files listed, each a relative path of plain names."""
    listed = results.get("artefacts")
    if artefacts is None or listed is None:
        return {k: v for k, v in results.items() if k != "artefacts"}, {}
    paths = [f["path"] for f in listed["files"]]
    if sorted(paths) != sorted(artefacts):
        raise ValueError("the artefact texts given are not the files results['artefacts'] "
                         "lists")
    for path in paths:
        parts = PurePosixPath(path).parts
        if PurePosixPath(path).is_absolute() or any(p in ("", ".", "..") for p in parts) \
                or parts[0] in REPORT_FILES + ("figures",):
            raise ValueError(f"artefact path {path!r} is not a plain relative path")
    return results, dict(artefacts)


def report_texts(results: dict[str, Any], artefacts: Mapping[str, str] | None = None,
                 workers: int | None = None) -> dict[str, str]:
    """Every file of one design's report folder, rendered: path in the folder -> text (the
    report files, ``figures/NAME.svg``, then ``artefacts``, checked as
    :func:`write_report` says); ``workers``: processes building the sections
    (:func:`~supernode.report.all_sections.build_sections`)."""
    results, extra = _checked_artefacts(results, artefacts)
    sections = build_sections(results, workers)
    texts = {"report.html": render_html(sections, results),
             "report.md": render_markdown(sections, results),
             "results.json": results_json(results),
             "decisions.md": render_decisions(results),
             "bom.csv": bom_csv(results["bom"])}
    plan = _plan_file(results)
    if plan is not None:
        texts[plan[0]] = plan[1]
    texts |= {f"figures/{name}.svg": svg for name, svg in figures_of(sections).items()}
    return texts | extra


def write_texts(texts: Mapping[str, str], directory: str | Path, option: str = "--out",
                inputs: Iterable[str | Path] = ()) -> list[Path]:
    """Write ``texts`` (relative path -> text) into ``directory`` all or nothing
    (:func:`supernode.outputs.output_folder`); the final paths, in the order given."""
    target = Path(directory)
    with output_folder(directory, option, inputs) as staging:
        for path, body in texts.items():
            (staging / path).parent.mkdir(parents=True, exist_ok=True)
            (staging / path).write_text(body, encoding="utf-8")
    return [target / n for n in texts]


def write_report(results: dict[str, Any], directory: str | Path, option: str = "--out",
                 artefacts: Mapping[str, str] | None = None,
                 inputs: Iterable[str | Path] = (), workers: int | None = None) -> list[Path]:
    """Render and write every report file into ``directory``, and ``artefacts`` (path in the
    folder -> text: :attr:`supernode.design.DesignResult.files`) beside them; the files
    written (final paths).

    Nothing is left in ``directory`` if rendering or writing fails (an OSError is an
    InputError at ``option``); a folder holding one of ``inputs`` is refused
    (:func:`supernode.outputs.output_folder`). ``workers``: processes building the
    sections (None: one per core, :func:`~supernode.report.all_sections.section_workers`).
    """
    return write_texts(report_texts(results, artefacts, workers), directory, option, inputs)


def write_compare(compare: dict[str, Any],
                  designs: Sequence[tuple[str, dict[str, Any], Mapping[str, str] | None]],
                  directory: str | Path, option: str = "--out",
                  inputs: Iterable[str | Path] = ()) -> list[Path]:
    """One folder, all or nothing: each design's report folder under its label
    (``designs``: label, results, artefact texts) and the comparison beside them
    (``report.html``, ``compare.md``, ``compare.json``); the final paths, the compare page
    first."""
    from supernode.report.compare_html import render_compare_html
    from supernode.report.compare_md import render_compare_markdown

    texts = {"report.html": render_compare_html(compare),
             "compare.md": render_compare_markdown(compare),
             "compare.json": json_text(compare, indent=1) + "\n"}
    for label, results, artefacts in designs:
        texts |= {f"{label}/{path}": text
                  for path, text in report_texts(results, artefacts).items()}
    return write_texts(texts, directory, option, inputs)

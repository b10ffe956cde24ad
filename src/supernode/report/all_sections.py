"""Every report section, built from the results.

The built-in sections' modules are imported here, on first use: importing one registers
its builders with the registry (:func:`~supernode.report.sections.register_section`), in
the order each module states (``after=``). The registry module itself imports none of them,
so registrants depend on the registry and never the other way round. A new section module
is added to the import in :func:`build_sections` (plain imports, so the import graph
checked by ``lint-imports`` sees it).

Drawing the figures (matplotlib, SVG) is most of what the sections cost (the flagship's
13 figures: ~2 CPU-seconds, more than the HTML, Markdown and JSON together), and each
builder reads the results alone, so the builders run side by side in forked children
(:func:`supernode.forked.run_forked`), one share per core: the sections, their order
and every figure's bytes are those one process builds.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from supernode.bounds import check_workers, cpu_cores
from supernode.forked import run_forked
from supernode.report.blocks import Section
from supernode.report.sections import SECTIONS, SectionBuilder

#: At most this many processes build the sections (one share each).
MAX_WORKERS = 4


def section_workers(workers: int | None = None) -> int:
    """Processes building the sections: ``workers`` (checked), else one per core this
    process may run on, at most :data:`MAX_WORKERS`."""
    if workers is not None:
        return check_workers(workers, "workers") or 1
    return max(1, min(cpu_cores(), MAX_WORKERS))


def _built(entries: list[SectionBuilder], results: dict[str, Any]) -> list[Section | None]:
    return [entry.build(results) for entry in entries]


def build_sections(results: dict[str, Any], workers: int | None = None) -> list[Section]:
    """Every registered section built from ``results`` (those with nothing to show left
    out), in registry order; ``workers``: processes building them (None:
    :func:`section_workers`), the sections dealt to them in turn."""
    from supernode.report import (  # noqa: F401  (importing them registers their sections)
        sections_bom,
        sections_core,
        sections_memory,
        sections_reliability,
        sections_reproduce,
        sections_review,
        sections_run,
        sections_scheduling,
        sections_serving,
        sections_summary,
    )

    entries = list(SECTIONS)
    n = min(section_workers(workers), len(entries)) or 1
    shares = [list(range(k, len(entries), n)) for k in range(n)]
    built = run_forked([partial(_built, [entries[i] for i in share], results)
                        for share in shares])
    by_index = {i: section for share, sections in zip(shares, built, strict=True)
                for i, section in zip(share, sections, strict=True)}
    return [by_index[i] for i in range(len(entries)) if by_index[i] is not None]

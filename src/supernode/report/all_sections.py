"""Every report section, built from the results.

The built-in sections' modules are imported here, on first use: importing one registers
its builders with the registry (:func:`~supernode.report.sections.register_section`), in
the order each module states (``after=``). The registry module itself imports none of them,
so registrants depend on the registry and never the other way round. A new section module
is added to the import in :func:`build_sections` (plain imports, so the import graph
checked by ``lint-imports`` sees it).
"""

from __future__ import annotations

from typing import Any

from supernode.report.blocks import Section
from supernode.report.sections import SECTIONS


def build_sections(results: dict[str, Any]) -> list[Section]:
    """Every registered section built from ``results`` (those with nothing to show left out)."""
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

    out = []
    for entry in SECTIONS:
        section = entry.build(results)
        if section is not None:
            out.append(section)
    return out

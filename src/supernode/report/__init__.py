"""The design-review report: HTML (self-contained), Markdown, results.json, decisions.md.

Every number the report shows is looked up in the results dict by its key path and
formatted by :func:`~supernode.report.format.format_value`; the HTML marks each with its
key (``data-key``) so a test can check it against ``results.json``. Sections are a small
registry (:mod:`supernode.report.sections`): adding one is registering one builder.
"""

from supernode.report.sections import SECTIONS, SectionBuilder, register_section
from supernode.report.write import REPORT_FILES, write_compare, write_report

__all__ = ["REPORT_FILES", "SECTIONS", "SectionBuilder", "register_section", "write_compare",
           "write_report"]

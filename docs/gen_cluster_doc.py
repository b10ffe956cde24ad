"""Regenerate the field reference of ``docs/cluster-file.md`` from the pydantic models.

The tables between ``<!-- fields:start -->`` and ``<!-- fields:end -->`` are
:func:`supernode.spec.schema.field_table_markdown` ``("cluster")``, so the docs never drift
from the schema (``tests/test_spec_docs.py`` fails when they do).

Usage::

    python docs/gen_cluster_doc.py           # rewrite the section in place
    python docs/gen_cluster_doc.py --check   # exit 1 if the committed doc is stale
"""

from __future__ import annotations

import sys
from pathlib import Path

from supernode.spec.schema import field_table_markdown

START = "<!-- fields:start -->"
END = "<!-- fields:end -->"
DOC = Path(__file__).resolve().with_name("cluster-file.md")


def render(text: str) -> str:
    """``text`` with the section between the markers replaced by the generated tables."""
    if text.count(START) != 1 or text.count(END) != 1 or text.index(START) > text.index(END):
        raise ValueError(f"{DOC.name} needs one {START} followed by one {END}")
    before, rest = text.split(START)
    _, after = rest.split(END)
    tables = field_table_markdown("cluster").strip()
    return f"{before}{START}\n\n{tables}\n\n{END}{after}"


def main(argv: list[str]) -> int:
    """Rewrite the doc (or, with ``--check``, report whether it is stale); return the exit code."""
    current = DOC.read_text(encoding="utf-8")
    fresh = render(current)
    if "--check" in argv:
        if fresh != current:
            print(f"{DOC} is stale: run python docs/gen_cluster_doc.py", file=sys.stderr)
            return 1
        return 0
    if fresh != current:
        DOC.write_text(fresh, encoding="utf-8")
        print(f"rewrote the field reference of {DOC}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""``supernode schema``: print the JSON Schema of a document kind: the input files (for
editors), ``results`` (the ``results.json`` of ``supernode design``) and ``compare`` (its
``compare.json`` of two or three designs)."""

from __future__ import annotations

import typer

from supernode.commands import app
from supernode.commands._output import handles_input_errors, print_json
from supernode.errors import InputError
from supernode.spec.schema import DOCUMENTS, json_schema


@app.command("schema")
@handles_input_errors
def schema_command(
    document: str = typer.Argument("cluster", help=f"One of: {', '.join(DOCUMENTS)}."),
) -> None:
    """Print the JSON Schema of a document kind (cluster, workload, plan, sweep, results,
    compare)."""
    if document not in DOCUMENTS:
        raise InputError("document", f"unknown document {document!r}; one of "
                                     f"{', '.join(DOCUMENTS)}")
    print_json(json_schema(document))

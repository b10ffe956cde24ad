"""JSON Schema export and the Markdown field table, generated from the pydantic models."""

from __future__ import annotations

import importlib
from typing import Any

from pydantic import BaseModel

#: Document kind -> "module:Model": the input documents, ``results`` (the
#: ``results.json`` a design review writes) and ``compare`` (the ``compare.json`` of
#: ``supernode design A B``).
DOCUMENTS = {
    "cluster": "supernode.spec.cluster:ClusterSpec",
    "workload": "supernode.spec.workload:WorkloadSpec",
    "plan": "supernode.spec.plan:ParallelPlan",
    "sweep": "supernode.planner.sweep_spec:SweepSpec",
    "results": "supernode.design.results:DesignResults",
    "compare": "supernode.design.results.compare:Comparison",
}


def document_model(document: str) -> type[BaseModel]:
    """Return the pydantic model class of a document kind."""
    module, name = DOCUMENTS[document].split(":")
    model: type[BaseModel] = getattr(importlib.import_module(module), name)
    return model


def json_schema(document: str) -> dict[str, Any]:
    """JSON Schema (draft 2020-12) of a document kind."""
    schema = document_model(document).model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return schema


def _type_name(prop: dict[str, Any]) -> str:
    if "$ref" in prop:
        ref: str = prop["$ref"]
        return ref.rsplit("/", 1)[-1]
    if "anyOf" in prop:
        return " | ".join(_type_name(p) for p in prop["anyOf"])
    if "enum" in prop:
        return " | ".join(repr(v) for v in prop["enum"])
    if "const" in prop:
        return repr(prop["const"])
    if prop.get("type") == "array":
        return f"list[{_type_name(prop.get('items', {}))}]"
    if prop.get("type") == "object" and "additionalProperties" in prop:
        return f"map[{_type_name(prop['additionalProperties'])}]"
    return str(prop.get("type", "any"))


def field_table_markdown(document: str) -> str:
    """Markdown tables (one per model) of every field: name, type, default, description."""
    schema = json_schema(document)
    models = {schema.get("title", document): schema, **schema.get("$defs", {})}
    lines: list[str] = []
    for title, model in models.items():
        if "properties" not in model:
            continue
        lines += [f"### {title}", "", model.get("description", "").split("\n")[0], ""]
        lines += ["| field | type | default | description |", "|---|---|---|---|"]
        required = set(model.get("required", []))
        for name, prop in model["properties"].items():
            default = "required" if name in required else repr(prop.get("default"))
            desc = prop.get("description", "").replace("|", "\\|")
            kind = _type_name(prop).replace("|", "\\|")
            lines.append(f"| `{name}` | {kind} | {default} | {desc} |")
        lines.append("")
    return "\n".join(lines)

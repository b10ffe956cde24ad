"""Side by side: two or three reviewed designs (``results.json`` dicts) as one comparison,
``compare.json``.

Every headline figure of the executive summary and the verdict (step time, MFU, tokens/s,
power, cost per million tokens, goodput, verdict, failed rules per severity) per design
with the winner and the direction that decides it (:data:`FIGURES`); every rule's status
per design; and the bill-of-materials diff (each component's count per design and its
delta from the first design). Nothing is recomputed: each value is read from its design's
results at the key path the figure names.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from supernode.design.results.compare import check_comparison
from supernode.rules import VERDICTS

#: ``compare.json`` -> ``schema`` (:class:`~supernode.design.results.compare.Comparison`).
COMPARE_SCHEMA = "supernode-compare/1"
#: Most designs one comparison takes.
MAX_DESIGNS = 3


@dataclass(frozen=True)
class Figure:
    """One compared figure: where it is in ``results.json``, how it is shown, which way
    wins (``lower``, ``higher``; the verdict ranks by :data:`supernode.rules.VERDICTS`)."""

    id: str
    label: str
    key: tuple[str, ...]
    kind: str
    direction: str


FIGURES = (
    Figure("step_time_s", "step time", ("summary", "step_time_s"), "s", "lower"),
    Figure("mfu", "MFU", ("summary", "mfu"), "share", "higher"),
    Figure("tokens_per_s", "tokens/s", ("summary", "tokens_per_s"), "tokens_per_s", "higher"),
    Figure("power_w", "power at the workload", ("summary", "power_w"), "w", "lower"),
    Figure("cost_per_million_tokens_usd", "cost per million tokens",
           ("summary", "cost_per_million_tokens_usd"), "usd", "lower"),
    Figure("goodput", "goodput", ("summary", "goodput"), "fraction", "higher"),
    Figure("verdict", "verdict", ("verdict", "verdict"), "text", "better verdict"),
    Figure("errors", "failed error rules", ("verdict", "failed_by_severity", "error"),
           "count", "lower"),
    Figure("warnings", "failed warning rules", ("verdict", "failed_by_severity", "warning"),
           "count", "lower"),
    Figure("info", "failed info rules", ("verdict", "failed_by_severity", "info"), "count",
           "lower"),
)


def _value(results: dict[str, Any], key: tuple[str, ...]) -> Any:
    node: Any = results
    for part in key:
        if not isinstance(node, dict) or node.get(part) is None:
            return None
        node = node[part]
    return node


def winners(values: list[Any], direction: str, labels: list[str]) -> list[str]:
    """Labels of the designs whose value wins (all tied at the best; empty when fewer
    than two designs have the figure, or all are equal)."""
    known = [(v, lab) for v, lab in zip(values, labels, strict=True) if v is not None]
    if len(known) < 2:
        return []
    rank = {"lower": lambda v: -v, "higher": lambda v: v}.get(direction, VERDICTS.index)
    best = max(rank(v) for v, _ in known)
    won = [lab for v, lab in known if rank(v) == best]
    return [] if len(won) == len(known) else won


def _figures(designs: list[dict[str, Any]], labels: list[str]) -> list[dict[str, Any]]:
    out = []
    for f in FIGURES:
        values = [_value(d, f.key) for d in designs]
        out.append({"id": f.id, "label": f.label, "key": "/".join(f.key), "kind": f.kind,
                    "direction": f.direction, "values": values,
                    "winners": winners(values, f.direction, labels)})
    return out


def _rules(designs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every rule any design evaluated, in the first design's order, with its severity
    and status per design (null: not evaluated in that design)."""
    order = list(dict.fromkeys(f["id"] for d in designs for f in d["findings"]))
    by_id = [{f["id"]: f for f in d["findings"]} for d in designs]
    rows = []
    for rule in order:
        found = [b.get(rule) for b in by_id]
        first = next(f for f in found if f is not None)
        rows.append({"id": rule, "title": first["title"], "severity": first["severity"],
                     "statuses": [f["status"] if f else None for f in found],
                     "failed": [bool(f and f["failed"]) for f in found]})
    return rows


def bom_diff(designs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each component in any design's BOM: its part and count per design (0: absent) and
    the delta of each design's count from the first design's."""
    order = list(dict.fromkeys(r["component"] for d in designs for r in d["bom"]["rows"]))
    rows = []
    for component in order:
        found = [next((r for r in d["bom"]["rows"] if r["component"] == component), None)
                 for d in designs]
        counts = [r["count"] if r else 0 for r in found]
        rows.append({"component": component,
                     "parts": [r["part"] if r else None for r in found],
                     "counts": counts, "deltas": [c - counts[0] for c in counts]})
    return rows


def compare_designs(designs: list[dict[str, Any]], labels: list[str],
                    inputs: list[str]) -> dict[str, Any]:
    """``compare.json`` of the reviewed ``designs`` (results dicts; ``labels``: their
    folders, ``inputs``: the cluster arguments as given), checked against
    :class:`~supernode.design.results.compare.Comparison`."""
    out = {
        "schema": COMPARE_SCHEMA,
        "designs": [{"label": lab, "folder": lab, "input": src,
                     "cluster": d["cluster"]["name"], "workload": d["workload"]["name"],
                     "accelerators": d["cluster"]["accelerators"],
                     "accelerator": d["cluster"]["accelerator"],
                     "step_time_source": _value(d, ("summary", "step_time_source"))}
                    for lab, src, d in zip(labels, inputs, designs, strict=True)],
        "figures": _figures(designs, labels),
        "rules": _rules(designs),
        "bom": bom_diff(designs),
    }
    check_comparison(out)
    return out

"""The rule reference of docs/rules.md, generated from the registry and the default pack."""

from __future__ import annotations

from supernode.rules.engine import RULES
from supernode.rules.pack import MODEL_THRESHOLDS, settings

START = "<!-- rules:start -->"
END = "<!-- rules:end -->"


def _threshold(rule_id: str) -> str:
    value = settings()[rule_id].threshold
    if value is None:
        return "the design's own figure"
    text = f"{value[0]:g} to {value[1]:g}" if isinstance(value, list) else f"{value:g}"
    return text + (" (model constant)" if rule_id in MODEL_THRESHOLDS else "")


def rules_markdown() -> str:
    """A table of every rule (id, seed, severity, comparison, threshold, unit) and each
    rule's rationale."""
    s = settings()
    lines = ["| id | title | seed | severity | check | threshold | unit |",
             "|---|---|---|---|---|---|---|"]
    for rule in RULES.values():
        lines.append(f"| `{rule.id}` | {rule.title} | {rule.seed} | {s[rule.id].severity} | "
                     f"{rule.comparison} | {_threshold(rule.id)} | {rule.unit} |")
    lines.append("")
    for rule in RULES.values():
        lines += [f"**`{rule.id}`** ({rule.category}; {rule.seed}). {rule.rationale}", ""]
    return "\n".join(lines).rstrip() + "\n"


def render(text: str) -> str:
    """``text`` with the section between the markers replaced by :func:`rules_markdown`."""
    before, rest = text.split(START)
    _, after = rest.split(END)
    return f"{before}{START}\n\n{rules_markdown()}\n{END}{after}"

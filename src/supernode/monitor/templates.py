"""The subset of Prometheus alert templating the rule pack uses, expanded the same way.

Annotations may contain only ``{{ $labels.NAME }}`` and ``{{ $value | printf "FMT" }}``
with ``FMT`` one of ``%.Nf``, ``%.Ng`` or ``%d``-free forms, because those expand
identically in Go's ``text/template`` (``fmt.Sprintf``) and here; anything else is refused
when the rule is built. Go prints NaN and infinities as ``NaN``, ``+Inf`` and ``-Inf``.
"""

from __future__ import annotations

import math
import re

TOKEN = re.compile(r"\{\{(.*?)\}\}")
LABEL = re.compile(r"\s*\$labels\.([a-zA-Z_][a-zA-Z0-9_]*)\s*")
VALUE = re.compile(r'\s*\$value\s*\|\s*printf\s+"(%\.\d+[fg])"\s*')


def check_template(text: str) -> set[str]:
    """The label names ``text`` uses; ValueError for any unsupported template action."""
    names = set()
    for token in TOKEN.findall(text):
        label = LABEL.fullmatch(token)
        if label:
            names.add(label.group(1))
        elif not VALUE.fullmatch(token):
            raise ValueError(f"unsupported template action {{{{{token}}}}}")
    if "{{" in TOKEN.sub("", text) or "}}" in TOKEN.sub("", text):
        raise ValueError(f"unbalanced template braces in {text!r}")
    return names


def go_format(fmt: str, value: float) -> str:
    """``fmt.Sprintf(fmt, value)`` for ``%.Nf`` and ``%.Ng``."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return fmt % value


def expand(text: str, labels: dict[str, str], value: float) -> str:
    """``text`` with its template actions replaced (a missing label prints nothing: Go's
    zero value of a ``map[string]string`` entry)."""
    def replace(match: re.Match) -> str:
        token = match.group(1)
        label = LABEL.fullmatch(token)
        if label:
            return labels.get(label.group(1), "")
        found = VALUE.fullmatch(token)
        assert found is not None, token
        return go_format(found.group(1), value)

    return TOKEN.sub(replace, text)


def label(name: str) -> str:
    """The template action printing label ``name``."""
    return f"{{{{ $labels.{name} }}}}"


def value(fmt: str = "%.3g") -> str:
    """The template action printing the alert's value with ``fmt``."""
    return f'{{{{ $value | printf "{fmt}" }}}}'

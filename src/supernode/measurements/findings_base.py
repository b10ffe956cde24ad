"""One finding and the NCCL variables it cites, shared by the comparison's rules
(:mod:`.findings`) and the NCCL log's (:mod:`.log_findings`).

A variable comes with its documented meaning (``data/nccl/env.yaml``, from NCCL's
environment documentation); nothing is recommended beyond what the documentation says a
variable does.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from supernode.spec.loader import parse_text


@dataclass(frozen=True)
class Variable:
    """An NCCL environment variable and its documented meaning."""

    name: str
    meaning: str


@dataclass(frozen=True)
class Finding:
    """One observation: severity (critical, warning, info), a code, text, variables."""

    severity: str
    code: str
    message: str
    variables: tuple[Variable, ...] = ()


@lru_cache(maxsize=1)
def nccl_variables() -> dict[str, str]:
    """Documented meaning of each NCCL variable the findings cite."""
    text = (resources.files("supernode") / "data" / "nccl" / "env.yaml").read_text("utf-8")
    doc = parse_text(text, source="nccl/env.yaml")
    return {name: entry["meaning"] for name, entry in doc["variables"].items()}


def variables(*names: str) -> tuple[Variable, ...]:
    """The named variables with their meaning."""
    table = nccl_variables()
    return tuple(Variable(n, table[n]) for n in names)


def size_label(message_bytes: int) -> str:
    """``268435456`` -> ``256 MiB``."""
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if message_bytes >= scale:
            value = message_bytes / scale
            return f"{value:.0f} {unit}" if value == int(value) else f"{value:.3g} {unit}"
    return f"{message_bytes} B"

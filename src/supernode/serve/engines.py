"""Serving engines' default scheduler limits (``data/serve/engines.yaml``).

An engine schedules at most ``max_num_seqs`` sequences per iteration on one instance
(per attention-DP rank) unless told otherwise; a validation case that names its engine and
publishes no batch limit is held to that default, beside its KV-cache limit.
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from typing import Any

from supernode.spec.loader import parse_text

ENGINES_FILE = "serve/engines.yaml"


@lru_cache(maxsize=1)
def engine_limits() -> dict[str, int]:
    """Default most sequences in flight per rank, by engine name (engines listed only)."""
    text = (resources.files("supernode") / "data" / ENGINES_FILE).read_text("utf-8")
    document: dict[str, Any] = parse_text(text, source=ENGINES_FILE)
    return {name: int(entry["max_sequences_per_rank"])
            for name, entry in document["engines"].items()}


def default_max_sequences(engine: object) -> int | None:
    """Engine ``engine``'s default most sequences per rank, or None (not listed: no cap)."""
    if not isinstance(engine, str):
        return None
    return engine_limits().get(engine)

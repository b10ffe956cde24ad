"""Mean request lengths of named benchmark datasets (``data/serve/datasets.yaml``).

A serving case that names a ``dataset`` and leaves a length null (its source did not
publish the mean) takes the mean from this table, keyed by the dataset's name; a length
the case states is kept. Each entry cites where its figures were read.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

from supernode.spec.loader import parse_text

DATASETS_FILE = "serve/datasets.yaml"


@dataclass(frozen=True)
class DatasetLengths:
    """Mean prompt (``input_tokens``) and generated (``output_tokens``) tokens per request
    of a named dataset, over its ``samples`` requests."""

    name: str
    input_tokens: float
    output_tokens: float
    samples: int


@lru_cache(maxsize=1)
def dataset_table() -> dict[str, DatasetLengths]:
    """Every named dataset of the packaged table, by name."""
    text = (resources.files("supernode") / "data" / DATASETS_FILE).read_text("utf-8")
    document: dict[str, Any] = parse_text(text, source=DATASETS_FILE)
    return {name: DatasetLengths(name=name, input_tokens=float(entry["input_tokens_mean"]),
                                 output_tokens=float(entry["output_tokens_mean"]),
                                 samples=int(entry["samples"]))
            for name, entry in document["datasets"].items()}


def dataset_lengths(name: object) -> DatasetLengths | None:
    """The mean lengths of dataset ``name`` (tokens), or None for a name not in the table."""
    if not isinstance(name, str):
        return None
    return dataset_table().get(name)

"""Serving constants (``data/serve/calibration.yaml``) and the kernel calibration they imply.

The serving model prices every GEMM, attention core and stream with the step model's
kernels (:mod:`supernode.estimate.kernels`) under the step model's calibration
(:func:`supernode.estimate.calibration.default_calibration`), with the serving file's
overrides of the kernel constants that differ in an inference engine (``kernel`` entries)
and its own constants (``serve`` entries). ``fitted`` ones are refitted from the public
serving cases (``python -m supernode.serve.fit``), ``fixed`` ones carry their source.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from functools import lru_cache
from importlib import resources
from typing import Any

from supernode.estimate.calibration import Calibration, default_calibration
from supernode.spec.loader import parse_text

SERVE_CALIBRATION_FILE = "serve/calibration.yaml"


@dataclass(frozen=True)
class ServeConstants:
    """Serving-only constants (SI): see ``data/serve/calibration.yaml`` for each."""

    iteration_overhead_s: float
    decode_memory_eta: float
    comm_exposed: float
    prefill_chunk_tokens: float
    moe_token_imbalance: float
    moe_layer_overhead_s: float
    kernel: Calibration

    def replace(self, **changes: float) -> ServeConstants:
        """A copy with some constants changed (kernel ones by their kernel name)."""
        own = {f.name for f in fields(self)} - {"kernel"}
        values: dict[str, Any] = {f.name: getattr(self, f.name) for f in fields(self)}
        values.update({k: v for k, v in changes.items() if k in own})
        kernel = {k: v for k, v in changes.items() if k not in own}
        values["kernel"] = self.kernel.replace(**kernel) if kernel else self.kernel
        return ServeConstants(**values)


def read_serve_calibration_document() -> dict[str, Any]:
    """The raw serving calibration document (values, kinds, bounds, notes)."""
    text = (resources.files("supernode") / "data" / SERVE_CALIBRATION_FILE).read_text("utf-8")
    document: dict[str, Any] = parse_text(text, source=SERVE_CALIBRATION_FILE)
    return document


@lru_cache(maxsize=1)
def default_serve_constants() -> ServeConstants:
    """The committed serving constants over the step model's kernel calibration."""
    doc = read_serve_calibration_document()
    values = {name: float(entry["value"]) for name, entry in doc["constants"].items()}
    kernel_names = {f.name for f in fields(Calibration)}
    kernel = default_calibration().replace(**{k: v for k, v in values.items()
                                              if k in kernel_names})
    own = {k: v for k, v in values.items() if k not in kernel_names}
    return ServeConstants(kernel=kernel, **own)

"""Measured fused-attention kernel throughput by length, head size, mask and pass.

The tables (``data/catalog/attention_kernels.yaml``, each with its source) hold BF16
TFLOP/s of each kernel (``te-cudnn``: cuDNN fused attention as Transformer Engine runs it,
the default; ``fa3``: FlashAttention-3; ``fa2``: FlashAttention-2 / PyTorch SDPA's flash
backend) on the part it was measured on, at sequence lengths 512 to 16k (queries = keys),
head dimensions 64 / 128 / 256, with and without the causal mask, forward and backward
(Shah et al., arXiv:2407.08608, Figs. 5 and 6, H100 80GB SXM5).

:func:`kernel_tflops` reads a table at any length and head size: linear in ``log2`` of the
length between measured points, flat beyond the longest (every kernel has plateaued by
16k), and below the shortest scaled by ``L / (L + K)``, the per-query-block fixed cost
(``K`` = :data:`SHORT_HALF_KEYS` keys); linear in head dimension between tables, the
nearest table outside. The causal backward, which FA3 does not publish, is the
non-causal backward times the forward's causal / non-causal ratio at the same length and
head size (the diagonal blocks cost both passes alike).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

import numpy as np

from supernode.errors import InputError
from supernode.spec.loader import parse_text

#: The kernel Megatron-Core with Transformer Engine runs (TE's cuDNN FusedAttention).
DEFAULT_KERNEL = "te-cudnn"
#: Keys per query at which a kernel below the shortest measured length runs at half its
#: rate there (fitted to the FA3 causal head-dim-128 sweep, arXiv:2407.08608 Fig. 5).
SHORT_HALF_KEYS = 256.0
KERNEL_FILE = "catalog/attention_kernels.yaml"

Curves = dict[float, np.ndarray]


@dataclass(frozen=True)
class KernelTable:
    """One kernel's measured curves on its reference part (TFLOP/s per length)."""

    name: str
    part: str
    lengths: np.ndarray
    curves: dict[tuple[bool, bool], Curves]  # (backward, causal) -> head dim -> rates


@lru_cache(maxsize=1)
def kernel_tables() -> dict[str, KernelTable]:
    """Every kernel of the data file by name."""
    text = (resources.files("supernode") / "data" / KERNEL_FILE).read_text("utf-8")
    doc = parse_text(text, source=KERNEL_FILE)
    lengths = np.asarray(doc["lengths"], dtype=float)
    out: dict[str, KernelTable] = {}
    for name, entry in doc["kernels"].items():
        part, passes = next(iter(entry["parts"].items()))
        curves: dict[tuple[bool, bool], Curves] = {}
        for pass_name, masks in passes.items():
            for mask, dims in masks.items():
                curves[(pass_name == "backward", mask == "causal")] = {
                    float(d): np.asarray(r, dtype=float) for d, r in dims.items()}
        out[name] = KernelTable(name, part, lengths, curves)
    return out


def kernel_table(kernel: str) -> KernelTable:
    """The table of ``kernel``; InputError naming the known kernels."""
    tables = kernel_tables()
    if kernel not in tables:
        raise InputError("kernel", f"unknown attention kernel {kernel!r}; known: "
                                   f"{', '.join(sorted(tables))}")
    return tables[kernel]


def _along_length(table: KernelTable, rates: np.ndarray, length: Any) -> Any:
    """A curve read at ``length`` (see module doc)."""
    length = np.maximum(np.asarray(length, dtype=float), 1.0)
    shortest = table.lengths[0]
    inside = np.interp(np.log2(np.maximum(length, shortest)), np.log2(table.lengths), rates)
    short = rates[0] * (length / (length + SHORT_HALF_KEYS)) / (
        shortest / (shortest + SHORT_HALF_KEYS))
    return np.where(length < shortest, short, inside)


def _curve(table: KernelTable, backward: bool, causal: bool, head_dim: float,
           length: Any) -> Any:
    """One measured (pass, mask) family read at ``head_dim`` and ``length``."""
    family = table.curves[(backward, causal)]
    dims = sorted(family)
    values = [_along_length(table, family[d], length) for d in dims]
    if head_dim <= dims[0]:
        return values[0]
    for lo, hi, v_lo, v_hi in zip(dims, dims[1:], values, values[1:], strict=False):
        if head_dim <= hi:
            t = (head_dim - lo) / (hi - lo)
            return v_lo + t * (v_hi - v_lo)
    return values[-1]


def kernel_tflops(kernel: str, head_dim: float, length: Any, causal: bool,
                  backward: bool) -> Any:
    """Measured TFLOP/s of ``kernel`` on its reference part at sequence ``length``
    (queries = keys; arrays broadcast), ``head_dim``, with or without the causal mask,
    forward or backward (BF16)."""
    table = kernel_table(kernel)
    if (backward, causal) in table.curves:
        return _curve(table, backward, causal, head_dim, length)
    full = _curve(table, True, False, head_dim, length)
    ratio = (_curve(table, False, True, head_dim, length)
             / _curve(table, False, False, head_dim, length))
    return full * ratio

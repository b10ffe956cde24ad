"""Bytes per stored element and the precision each group of GEMMs runs at when serving.

* ``bf16`` 2 B; ``fp8`` 1 B (E4M3, per-tensor or block scales, negligible);
  ``fp4`` 0.5625 B: NVFP4 stores 4-bit E2M1 values with one FP8 E4M3 scale per 16 values
  (NVIDIA Technical Blog "Introducing NVFP4 for Efficient and Accurate Low-Precision
  Inference", June 2025: 4.5 bits per value); MXFP4 (one 8-bit scale per 32) is 0.53 B.
* The validation format's ``precision`` is the math precision of the dominant weight GEMMs:
  every linear layer of a dense model, the routed experts of a MoE model. A MoE model's
  other linear layers (attention, dense layers, shared experts) run at FP8 when the expert
  precision is FP8 or FP4 (DeepSeek-V3 FP8 checkpoints, the NVFP4 checkpoints of
  DeepSeek-R1 keep attention in FP8), in BF16 otherwise. Embedding and output layer: BF16.
* The KV cache, when not stated, is FP8 where the weights are 8-bit or narrower and the
  part has FP8 units (TensorRT-LLM's ModelOpt FP8 checkpoints set ``kv_cache_quant_algo:
  FP8``), else BF16.
"""

from __future__ import annotations

from dataclasses import dataclass

from supernode.errors import InputError

#: Bytes per element of a stored tensor by precision name (see module docstring).
ELEMENT_BYTES: dict[str, float] = {"bf16": 2.0, "fp16": 2.0, "fp8": 1.0, "fp4": 0.5625}
#: Precisions a serving workload may name.
PRECISIONS = ("bf16", "fp8", "fp4")


@dataclass(frozen=True)
class ServePrecision:
    """Math and storage precisions of one deployment (names of :data:`ELEMENT_BYTES`).

    ``main``: math of the dominant GEMMs (all layer GEMMs of a dense model, the routed
    experts of a MoE model); ``other``: math of a MoE model's other layer GEMMs;
    ``weights``: storage of the dominant GEMMs' weights; ``kv``: the KV cache.
    """

    main: str
    other: str
    weights: str
    kv: str

    @property
    def weight_bytes(self) -> float:
        """Bytes per weight element of the dominant GEMMs."""
        return ELEMENT_BYTES[self.weights]

    @property
    def other_bytes(self) -> float:
        """Bytes per weight element of the other linear layers."""
        return ELEMENT_BYTES[self.other]

    @property
    def kv_bytes(self) -> float:
        """Bytes per cached key/value element."""
        return ELEMENT_BYTES[self.kv]


def resolve_precision(main: str, weights: str | None, kv: str | None, moe: bool,
                      peaks: dict[str, float], path: str = "precision") -> ServePrecision:
    """The deployment's precisions; ``weights``/``kv`` None are chosen (module docstring).

    ``peaks``: the part's dense peaks by precision (FP4 math needs a published FP4 peak;
    FP8 math on a part without FP8 units runs in BF16, as the kernel model does).
    """
    for name, value in ((path, main), ("weights_precision", weights),
                        ("kv_cache_precision", kv)):
        if value is not None and value not in PRECISIONS:
            raise InputError(name, f"unknown precision {value!r}; allowed: "
                                   f"{', '.join(PRECISIONS)}")
    if main == "fp4" and "fp4" not in peaks:
        raise InputError(path, f"fp4 needs a part with FP4 units; this part publishes "
                               f"{', '.join(sorted(peaks))}")
    if kv == "fp4":
        raise InputError("kv_cache_precision", "allowed: bf16, fp8")
    narrow = main in ("fp8", "fp4")
    other = ("fp8" if narrow else "bf16") if moe else main
    if kv is None:
        kv = "fp8" if narrow and "fp8" in peaks else "bf16"
    return ServePrecision(main=main, other=other, weights=weights or main, kv=kv)

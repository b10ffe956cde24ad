"""Predict a ``collective`` validation case (``supernode-validation/1``).

A case gives ``system`` {accelerator, peak_dense_bf16_tflops, scale_up_gpus,
scale_up_gigabytes_per_s, scale_out_gigabits_per_s, gpus, in_network_reduction},
``collective``, ``ranks`` and ``message_bytes``; the score is nccl-tests' bus bandwidth.
The fabric is built by :func:`~supernode.collectives.systems.fabric_from_validation_system`
and the algorithm chosen as NCCL would (fastest of the algorithms NCCL runs).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from supernode.collectives.busbw import busbw_bytes_per_s
from supernode.collectives.efficiency import EfficiencyTable
from supernode.collectives.explain import explain
from supernode.collectives.model import choose
from supernode.collectives.systems import fabric_from_validation_system
from supernode.errors import InputError
from supernode.units import GBYTE_PER_S

#: Collectives a ``collective`` case may name (nccl-tests' names without ``_perf``).
SUPPORTED_COLLECTIVES = frozenset({
    "all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast", "reduce",
})
_ALIASES = {"allreduce": "all_reduce", "allgather": "all_gather",
            "reducescatter": "reduce_scatter", "alltoall": "all_to_all",
            "sendrecv": "p2p", "send_recv": "p2p"}


class UnsupportedCase(ValueError):
    """The case names something the collective models cannot handle; the message says why."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


def collective_case_inputs(case: Mapping[str, Any]) -> tuple[str, int, float, dict[str, Any]]:
    """Checked ``(op, ranks, message_bytes, system)`` of a collective case."""
    if case.get("kind", "collective") != "collective":
        raise UnsupportedCase(f"kind {case.get('kind')!r} is not a collective case")
    raw = str(case.get("collective", "")).lower()
    op = _ALIASES.get(raw, raw)
    if op not in SUPPORTED_COLLECTIVES and op != "p2p":
        raise UnsupportedCase(f"collective {raw!r} is not modelled; modelled: "
                              f"{', '.join(sorted(SUPPORTED_COLLECTIVES | {'p2p'}))}")
    system = case.get("system")
    if not isinstance(system, dict):
        raise InputError("system", "a collective case needs a `system` mapping")
    ranks, size = case.get("ranks"), case.get("message_bytes")
    if not isinstance(ranks, int) or isinstance(ranks, bool) or ranks < 1:
        raise InputError("ranks", f"got {ranks!r}; an integer ≥ 1 is required")
    if not isinstance(size, int | float) or isinstance(size, bool) or size < 0:
        raise InputError("message_bytes", f"got {size!r}; a number ≥ 0 is required")
    gpus = system.get("gpus")
    if isinstance(gpus, int) and ranks > gpus:
        raise UnsupportedCase(f"{ranks} ranks exceed the system's {gpus} GPUs")
    if ranks > int(system.get("scale_up_gpus") or 0) and not system.get(
            "scale_out_gigabits_per_s"):
        raise UnsupportedCase("ranks span several scale-up domains but "
                              "scale_out_gigabits_per_s is not given")
    return op, ranks, float(size), system


def predict_collective_case(case: Mapping[str, Any], *,
                            tables: Mapping[str, EfficiencyTable] | None = None
                            ) -> dict[str, Any]:
    """Predict one ``collective`` case.

    Returns ``busbw_gigabytes_per_s`` (GB/s, nccl-tests definition), ``time_s`` (seconds),
    ``algorithm`` (the chosen one), ``path`` (algorithm/protocol over the tiers used, with
    their tables and routing), ``effect`` (the fabric effects that drove it,
    :mod:`.explain`) and a one-line ``detail`` holding both. Raises
    :class:`UnsupportedCase` for collectives that are not modelled and
    :class:`~supernode.errors.InputError` for malformed inputs.
    """
    op, ranks, size, system = collective_case_inputs(case)
    fabric = fabric_from_validation_system(system, ranks, tables=tables)
    choice = choose(op, size, ranks, fabric, tables=tables)
    time_s, algorithm = float(choice.time_s), str(choice.algorithm)
    busbw = busbw_bytes_per_s(op, size, ranks, time_s) / GBYTE_PER_S
    path, found = explain(op, ranks, fabric, algorithm, str(choice.protocol), tables=tables)
    effect = "; ".join(found)
    detail = (f"{path}, {choice.binding} binds; effect: {effect}; {ranks} ranks, "
              f"{size:.4g} B -> {time_s * 1e6:.4g} us, busbw {busbw:.4g} GB/s")
    return {"busbw_gigabytes_per_s": float(busbw), "time_s": float(time_s),
            "algorithm": algorithm, "path": path, "effect": effect, "detail": detail}

"""Pipeline schedules: the order in which one pipeline device runs its passes.

Megatron-LM's 1F1B and interleaved 1F1B (Narayanan et al., SC'21;
``forward_backward_pipelining_with_interleaving``): device ``r`` of ``p`` with ``v``
model chunks and ``M`` micro-batches runs ``w = (p - r - 1) * 2 + (v - 1) * p`` warm-up
forwards (``p - r - 1`` without interleaving), then alternates one forward and one
backward, then drains the backwards. Forward number ``k`` is chunk ``(k // p) % v`` of
micro-batch ``(k // (p v)) p + k % p``; backwards take chunks in reverse. Chunk ``c`` of
device ``r`` is virtual stage ``c p + r``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Op:
    """One pass on a device: ``kind`` F or B, virtual stage, micro-batch."""

    kind: str
    stage: int
    microbatch: int


def _chunk_mb(k: int, p: int, v: int, backward: bool) -> tuple[int, int]:
    chunk = (k // p) % v
    if backward:
        chunk = v - 1 - chunk
    return chunk, (k // (p * v)) * p + k % p


def device_order(device: int, pp: int, vpp: int, microbatches: int) -> list[Op]:
    """The passes of pipeline ``device`` in execution order (1F1B, interleaved if vpp > 1).

    Interleaving needs ``microbatches % pp == 0`` (as in Megatron); otherwise the
    schedule falls back to plain 1F1B over ``pp * vpp`` virtual stages on ``pp`` devices.
    """
    total = microbatches * vpp
    if vpp == 1:
        warm = min(pp - device - 1, microbatches)
    else:
        warm = min((pp - device - 1) * 2 + (vpp - 1) * pp, total)
    if vpp > 1 and microbatches % pp:
        return [Op(kind, c * pp + device, m) for kind in ("F", "B") for c in
                (range(vpp) if kind == "F" else reversed(range(vpp)))
                for m in range(microbatches)]

    def fwd(k: int) -> Op:
        c, m = _chunk_mb(k, pp, vpp, False)
        return Op("F", c * pp + device, m)

    def bwd(k: int) -> Op:
        c, m = _chunk_mb(k, pp, vpp, True)
        return Op("B", c * pp + device, m)

    order = [fwd(k) for k in range(warm)]
    for i in range(total - warm):
        order += [fwd(warm + i), bwd(i)]
    order += [bwd(i) for i in range(total - warm, total)]
    return order

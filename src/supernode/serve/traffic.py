"""What a serving deployment is asked to do: lengths, load and latency targets (SI)."""

from __future__ import annotations

from dataclasses import dataclass

#: Phases a measurement or a pool may cover.
PHASES = ("both", "prefill", "decode")


@dataclass(frozen=True)
class Traffic:
    """Mean prompt (``isl``) and generated (``osl``) tokens per request; ``concurrency``
    (requests in flight in the whole system, closed loop) or ``request_rate`` (requests/s,
    open loop), both None for an offline run at saturation; latency targets in seconds
    (None: none); ``phase`` the side measured (``both`` end to end)."""

    isl: float
    osl: float | None
    concurrency: float | None = None
    request_rate: float | None = None
    ttft_s: float | None = None
    tpot_s: float | None = None
    phase: str = "both"

    @property
    def decode_context(self) -> float:
        """Mean cached tokens per sequence while it decodes: ``isl + osl / 2``."""
        return self.isl + (self.osl or 0.0) / 2.0

    @property
    def peak_context(self) -> float:
        """Cached tokens a sequence reaches (what a no-eviction scheduler reserves)."""
        return self.isl + (self.osl or 0.0)

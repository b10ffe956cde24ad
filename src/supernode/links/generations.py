"""Link generations as sourced data: ``data/links/generations.yaml`` read into SI objects.

A generation describes one link in one direction: lanes × lane rate on the wire, the data
rate left after encoding and FEC, the FEC code, the frame a CRC protects and a
retransmission resends, how a failed frame is recovered, and the standard's limit on the
raw bit error rate. Fields no public source gives are listed under ``assumed`` and carried
into every result that uses them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Literal

from pydantic import Field, model_validator

from supernode.errors import InputError
from supernode.spec.base import StrictModel
from supernode.spec.loader import parse_text, validate_document
from supernode.units import GBIT_PER_S, NS

SCHEMA = "supernode-link-generations/1"
Family = Literal["nvlink", "pcie", "ethernet", "infiniband"]
RetryKind = Literal["link_replay", "transport_go_back_n"]


class FecSpec(StrictModel):
    """A Reed-Solomon code RS(n, k) over ``symbol_bits``-bit symbols (file units)."""

    code: Literal["reed_solomon"] = Field("reed_solomon", description="Code family.")
    n: int = Field(ge=2, le=4096, description="Codeword length, symbols.")
    k: int = Field(ge=1, description="Data symbols per codeword.")
    symbol_bits: int = Field(ge=1, le=16, description="Bits per symbol.")
    correctable_symbols: int = Field(ge=0, description="Symbol errors the decoder corrects, t.")
    interleave: int = Field(1, ge=1, description="Codewords interleaved per lane group.")
    latency_ns: float = Field(ge=0, description="Decode latency added to every frame, ns.")

    @model_validator(mode="after")
    def _sizes(self) -> FecSpec:
        if not self.k < self.n or 2 * self.correctable_symbols > self.n - self.k:
            raise ValueError(f"RS({self.n},{self.k}) cannot correct "
                             f"{self.correctable_symbols} symbols (at most (n-k)/2)")
        return self


class RetrySpec(StrictModel):
    """How a frame that fails its CRC is recovered."""

    kind: RetryKind = Field(description="link_replay (PCIe, NVLink) or transport_go_back_n "
                                        "(InfiniBand RC, RoCE).")
    latency_ns: float = Field(gt=0, description="Time from the bad frame to its resend, ns.")
    timeout_exponent: int | None = Field(
        None, ge=0, le=31, description="Transport retries only: the RC local ACK timeout "
        "exponent t, timeout 4.096 us x 2^t (IBTA Vol. 1, QP attribute Local ACK Timeout; "
        "NCCL_IB_TIMEOUT), which recovers a lost last packet that no later packet "
        "reveals; null for link replay.")


class GenerationSpec(StrictModel):
    """One link generation as written in the data file (file units)."""

    family: Family = Field(description="Link family.")
    description: str = Field(description="What the entry describes.")
    lanes: int = Field(ge=1, le=64, description="Lanes per direction.")
    lane_rate_gbit_per_s: float = Field(gt=0, description="Signalling rate per lane, Gb/s.")
    modulation: Literal["nrz", "pam4"] = Field(description="Line code.")
    data_rate_gbit_per_s: float = Field(gt=0, description="Rate after encoding and FEC, Gb/s.")
    fec: FecSpec | None = Field(None, description="Forward error correction (null: none).")
    frame_payload_bytes: int = Field(gt=0, description="Payload bytes per frame.")
    frame_bytes: int = Field(gt=0, description="Frame bytes above the FEC (CRC-protected).")
    retry: RetrySpec = Field(description="Recovery of a failed frame.")
    max_pre_fec_ber: float | None = Field(None, gt=0, lt=0.5,
                                          description="Standard's raw BER limit.")
    max_post_fec_ber: float | None = Field(
        None, gt=0, lt=0.5, description="Limit on the BER after the FEC (what the layer above "
        "and the port's symbol/effective error counters see): the standard's objective or "
        "the vendor's operational threshold; null: none published.")
    assumed: list[str] = Field(default_factory=list, description="Unsourced fields.")
    sources: list[str] = Field(min_length=1, description="Where the figures come from.")
    notes: str = Field("", description="Free text.")

    @model_validator(mode="after")
    def _consistent(self) -> GenerationSpec:
        if self.frame_payload_bytes > self.frame_bytes:
            raise ValueError("frame_payload_bytes exceeds frame_bytes")
        if self.data_rate_gbit_per_s > self.lanes * self.lane_rate_gbit_per_s * (1 + 1e-6):
            raise ValueError("data rate exceeds lanes x lane rate")
        return self


class DrainPolicySpec(StrictModel):
    """When a link is drained (policy, file units)."""

    max_bandwidth_loss: float = Field(gt=0, lt=1, description="Tolerated retransmission "
                                                              "bandwidth loss (fraction).")
    watch_decades: float = Field(ge=0, description="Watch level: decades below the drain BER.")
    reference_message_bytes: int = Field(gt=0, description="Message for latency figures.")
    source: str = Field(description="Why this policy.")


class GenerationsFile(StrictModel):
    """The whole data file."""

    schema_: Literal["supernode-link-generations/1"] = Field(alias="schema")
    drain_policy: DrainPolicySpec
    generations: dict[str, GenerationSpec]


@dataclass(frozen=True)
class Fec:
    """RS(n, k) with ``t`` correctable symbols of ``symbol_bits``; latency in seconds."""

    n: int
    k: int
    symbol_bits: int
    t: int
    interleave: int
    latency_s: float


@dataclass(frozen=True)
class LinkGeneration:
    """A link generation in SI units (bytes/s, seconds); one link, one direction."""

    name: str
    family: str
    lanes: int
    line_rate_bytes_per_s: float
    data_rate_bytes_per_s: float
    fec: Fec | None
    frame_payload_bytes: int
    frame_bytes: int
    retry_kind: str
    retry_latency_s: float
    tail_timeout_s: float | None
    max_pre_fec_ber: float | None
    max_post_fec_ber: float | None
    assumed: tuple[str, ...]
    sources: tuple[str, ...]

    @property
    def goodput_bytes_per_s(self) -> float:
        """Payload rate with no errors: data rate × payload / frame (bytes/s)."""
        return self.data_rate_bytes_per_s * self.frame_payload_bytes / self.frame_bytes


#: Unit of the InfiniBand RC local ACK timeout: 4.096 us x 2^t (IBTA Vol. 1, QP attribute
#: Local ACK Timeout).
RC_TIMEOUT_UNIT_S = 4.096e-6


def rc_timeout_s(exponent: int | None) -> float | None:
    """The RC transport's local ACK timeout for exponent ``exponent`` (s); None for None."""
    return None if exponent is None else RC_TIMEOUT_UNIT_S * 2.0 ** exponent


def _convert(name: str, spec: GenerationSpec) -> LinkGeneration:
    fec = None
    if spec.fec is not None:
        f = spec.fec
        fec = Fec(f.n, f.k, f.symbol_bits, f.correctable_symbols, f.interleave,
                  f.latency_ns * NS)
    return LinkGeneration(
        name=name, family=spec.family, lanes=spec.lanes,
        line_rate_bytes_per_s=spec.lanes * spec.lane_rate_gbit_per_s * GBIT_PER_S,
        data_rate_bytes_per_s=spec.data_rate_gbit_per_s * GBIT_PER_S,
        fec=fec, frame_payload_bytes=spec.frame_payload_bytes, frame_bytes=spec.frame_bytes,
        retry_kind=spec.retry.kind, retry_latency_s=spec.retry.latency_ns * NS,
        tail_timeout_s=rc_timeout_s(spec.retry.timeout_exponent),
        max_pre_fec_ber=spec.max_pre_fec_ber, max_post_fec_ber=spec.max_post_fec_ber,
        assumed=tuple(spec.assumed),
        sources=tuple(spec.sources))


@lru_cache(maxsize=1)
def read_generations_file() -> GenerationsFile:
    """The packaged link data file, validated."""
    path = "links/generations.yaml"
    text = (resources.files("supernode") / "data" / path).read_text(encoding="utf-8")
    return validate_document(parse_text(text, source=path), GenerationsFile, source=path)


@lru_cache(maxsize=1)
def link_generations() -> dict[str, LinkGeneration]:
    """Every link generation by name, in SI units."""
    return {name: _convert(name, spec)
            for name, spec in read_generations_file().generations.items()}


def get_generation(name: str, path: str = "generation") -> LinkGeneration:
    """The generation called ``name``; an unknown name is an :class:`InputError`."""
    table = link_generations()
    key = name.strip().lower()
    if key not in table:
        raise InputError(path, f"unknown link generation {name!r}; known: "
                               f"{', '.join(sorted(table))}")
    return table[key]


def generation_for_rate(family: str, bytes_per_s: float) -> LinkGeneration:
    """The generation of ``family`` whose one-link data rate matches ``bytes_per_s``.

    An exact match (within 1 %) wins; otherwise the generation nearest in rate. Used where
    only a link's capacity is known (netsim's ``ber=`` failures).
    """
    candidates = [g for g in link_generations().values() if g.family == family]
    if not candidates:
        raise InputError("generation", f"no link generation of family {family!r}")
    return min(candidates, key=lambda g: abs(math.log(g.data_rate_bytes_per_s / bytes_per_s)))

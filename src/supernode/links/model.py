"""The link-layer model: effective bandwidth and retransmission latency from a bit error rate.

For one link of a :class:`~supernode.links.generations.LinkGeneration`:

* Frame error probability ``P``: with FEC and a raw BER, a frame spanning ``c`` codewords
  fails when any of them is uncorrectable, ``P = 1 - (1 - P_cw)^c``
  (:mod:`supernode.links.fec`); with a post-FEC BER ``b`` (or no FEC),
  ``P = 1 - (1 - b)^L`` for a frame of ``L`` bits. The CRC is assumed to catch every bad
  frame (32-bit CRCs miss about 2^-32 of them).
* Recovery is go-back-N, both for link-level replay (PCIe ACK/NAK, NVLink) and for the
  InfiniBand/RoCE RC transport (resend from the NAKed sequence number): a bad frame and
  the ``W - 1`` frames sent behind it during the retry latency ``T`` are sent again, so
  the throughput efficiency is ``η = (1 - P) / (1 + (W - 1) P)`` with
  ``W = max(1, ceil(T · frame rate))`` (Bertsekas & Gallager, *Data Networks*, 2nd ed.,
  §2.4.2, go back n). Effective bandwidth = goodput × η.
* Added latency of a message of ``F`` frames: every retry stalls the stream by ``T``; the
  retries before the ``F`` frames all get through are negative-binomial,
  ``R ~ NB(F, 1 - P)``, so the added latency is ``T · R``: mean ``T F P / (1 - P)``,
  tails from the NB quantiles. The FEC decode latency is added to every frame, errors or
  not, and reported apart.
* The InfiniBand/RoCE RC transport learns of a lost packet from the next one (an
  out-of-sequence NAK); the message's last packet has no next one, so its loss waits for
  the QP's local ACK timeout ``T_to = 4.096 us x 2^t`` (``t`` = NCCL_IB_TIMEOUT, 20 by
  default: 4.29 s). With probability ``P`` the added latency is ``T_to`` more: mean
  ``+ P T_to``, and a quantile ``q`` past ``1 - P`` lands beyond ``T_to``
  (:func:`retry_latency_quantile_s`). Link-level replay has no such timeout.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from supernode.bounds import MAX_MESSAGE_BYTES, check_number
from supernode.errors import InputError
from supernode.links.binomial import negative_binomial_ppf
from supernode.links.fec import (
    check_ber,
    codeword_failure_probability,
    codewords_per_frame,
    post_fec_ber,
)
from supernode.links.generations import LinkGeneration


@dataclass(frozen=True)
class LinkPerformance:
    """A link at a given BER (SI: bytes/s, seconds; probabilities dimensionless)."""

    generation: str
    pre_fec_ber: float | None
    post_fec_ber: float
    frame_error_probability: float
    line_rate_bytes_per_s: float
    data_rate_bytes_per_s: float
    goodput_bytes_per_s: float
    effective_bytes_per_s: float
    window_frames: int
    message_bytes: int
    message_frames: int
    fec_latency_s: float
    retry_latency_s: float
    added_latency_mean_s: float
    added_latency_p99_s: float
    added_latency_p999_s: float
    assumed: tuple[str, ...]
    tail_timeout_s: float | None = None

    @property
    def bandwidth_fraction(self) -> float:
        """Effective / error-free goodput: the slowdown factor retransmissions cause."""
        return self.effective_bytes_per_s / self.goodput_bytes_per_s

    def as_dict(self) -> dict[str, Any]:
        """Plain data for JSON output (SI values, keys with units)."""
        return {
            "generation": self.generation, "pre_fec_ber": self.pre_fec_ber,
            "post_fec_ber": self.post_fec_ber,
            "frame_error_probability": self.frame_error_probability,
            "line_rate_bytes_per_s": self.line_rate_bytes_per_s,
            "data_rate_bytes_per_s": self.data_rate_bytes_per_s,
            "goodput_bytes_per_s": self.goodput_bytes_per_s,
            "effective_bytes_per_s": self.effective_bytes_per_s,
            "bandwidth_fraction": self.bandwidth_fraction,
            "window_frames": self.window_frames, "message_bytes": self.message_bytes,
            "message_frames": self.message_frames, "fec_latency_s": self.fec_latency_s,
            "retry_latency_s": self.retry_latency_s,
            "added_latency_mean_s": self.added_latency_mean_s,
            "added_latency_p99_s": self.added_latency_p99_s,
            "added_latency_p999_s": self.added_latency_p999_s,
            "tail_timeout_s": self.tail_timeout_s,
            "assumed": list(self.assumed),
        }


def frame_error_probability(gen: LinkGeneration, *, pre_fec_ber: float | None = None,
                            post_fec_ber_value: float | None = None) -> tuple[float, float]:
    """``(P, post-FEC BER)``: probability that one frame fails its CRC, from either BER."""
    if (pre_fec_ber is None) == (post_fec_ber_value is None):
        raise InputError("ber", "give exactly one of a pre-FEC and a post-FEC bit error rate")
    bits = 8 * gen.frame_bytes
    if pre_fec_ber is not None and gen.fec is not None:
        p_cw = codeword_failure_probability(pre_fec_ber, gen.fec)
        count = codewords_per_frame(gen.frame_bytes, gen.fec)
        frame = -math.expm1(count * math.log1p(-p_cw)) if p_cw < 1 else 1.0
        return frame, post_fec_ber(pre_fec_ber, gen.fec)
    residual = pre_fec_ber if pre_fec_ber is not None else post_fec_ber_value
    assert residual is not None  # exactly one of the two is given (checked above)
    frame = -math.expm1(bits * math.log1p(-residual)) if residual < 1 else 1.0
    return frame, residual


def go_back_n_efficiency(p: float, window: int) -> float:
    """Throughput efficiency (1 - P) / (1 + (W - 1) P) of go-back-N with window ``W``."""
    return (1.0 - p) / (1.0 + (window - 1) * p)


def retry_latency_quantile_s(q: float, frames: int, p: float, retry_s: float,
                             tail_timeout_s: float | None = None) -> float:
    """``q``-quantile of the latency retries add to a message of ``frames`` frames (s).

    ``tail_timeout_s``: the transport's timeout for a lost last frame (None: link replay).
    The added latency is then ``T R + T_to B`` with ``B`` the last frame's loss (probability
    ``p``); as ``T R`` stays far below ``T_to``, the quantile ``q`` is the NB quantile at
    ``q / (1 - p)`` when ``q < 1 - p``, else ``T_to`` plus the NB quantile at
    ``(q - (1 - p)) / p``.
    """
    if p <= 0.0:
        return 0.0
    if p >= 1.0:
        return math.inf
    def nb(level: float) -> float:
        return float(negative_binomial_ppf(min(level, 1.0), frames, 1.0 - p)) * retry_s

    if tail_timeout_s is None:
        return nb(q)
    if q < 1.0 - p:
        return nb(q / (1.0 - p))
    return tail_timeout_s + nb((q - (1.0 - p)) / p)


def link_performance(gen: LinkGeneration, *, pre_fec_ber: float | None = None,
                     post_fec_ber: float | None = None,
                     message_bytes: int = 1 << 20) -> LinkPerformance:
    """Effective bandwidth and retransmission latency of one link of ``gen`` at a BER.

    Give the raw BER measured before the FEC (``pre_fec_ber``, what PHY counters report)
    or the residual BER after it (``post_fec_ber``); links without FEC take either.
    ``message_bytes`` sizes the message whose added latency is reported.
    """
    pre = None if pre_fec_ber is None else check_ber(pre_fec_ber, "pre_fec_ber")
    post_in = None if post_fec_ber is None else check_ber(post_fec_ber, "post_fec_ber")
    if not isinstance(message_bytes, int | np.integer) or message_bytes < 1:
        raise InputError("message_bytes", f"got {message_bytes!r}; an integer >= 1 is required")
    check_number("message_bytes", int(message_bytes), 1, MAX_MESSAGE_BYTES, "bytes (1 TiB)")
    p, post = frame_error_probability(gen, pre_fec_ber=pre, post_fec_ber_value=post_in)
    frame_rate = gen.data_rate_bytes_per_s / gen.frame_bytes
    window = max(1, math.ceil(gen.retry_latency_s * frame_rate))
    efficiency = go_back_n_efficiency(p, window)
    frames = max(1, math.ceil(message_bytes / gen.frame_payload_bytes))
    t = gen.retry_latency_s
    tail = gen.tail_timeout_s  # None for link-level replay (no transport timeout)
    mean = t * frames * p / (1.0 - p) + p * (tail or 0.0) if p < 1.0 else math.inf
    return LinkPerformance(
        generation=gen.name, pre_fec_ber=pre, post_fec_ber=post,
        frame_error_probability=p, line_rate_bytes_per_s=gen.line_rate_bytes_per_s,
        data_rate_bytes_per_s=gen.data_rate_bytes_per_s,
        goodput_bytes_per_s=gen.goodput_bytes_per_s,
        effective_bytes_per_s=gen.goodput_bytes_per_s * efficiency,
        window_frames=window, message_bytes=int(message_bytes), message_frames=frames,
        fec_latency_s=gen.fec.latency_s if gen.fec is not None else 0.0,
        retry_latency_s=t, added_latency_mean_s=mean,
        added_latency_p99_s=retry_latency_quantile_s(0.99, frames, p, t, tail),
        added_latency_p999_s=retry_latency_quantile_s(0.999, frames, p, t, tail),
        tail_timeout_s=tail,
        assumed=gen.assumed)

"""Reed-Solomon FEC under random bit errors: codeword failures and post-FEC error rates.

With independent bit errors at rate ``p`` (the raw, pre-FEC BER), an ``m``-bit symbol is
wrong with probability ``q = 1 - (1 - p)^m``. An RS(n, k) decoder correcting ``t`` symbols
fails when more than ``t`` of the ``n`` symbols of a codeword are wrong:
``P_cw = P[X > t]``, ``X ~ Binomial(n, q)`` (Lin & Costello, *Error Control Coding*,
2nd ed., §7.5; the standard estimate behind IEEE 802.3's 2.4e-4 pre-FEC limit for
RS(544,514)). A failed codeword keeps its ``X`` wrong symbols, so the post-FEC symbol
error rate is ``E[X; X > t] / n`` and the post-FEC BER that times ``p / q`` (bit errors
per wrong symbol / ``m``). PAM4 links see error bursts (DFE error propagation) that this
independent-error model does not: give a measured post-FEC BER where one exists.
"""

from __future__ import annotations

import math

import numpy as np

from supernode.errors import InputError
from supernode.links.binomial import binomial_pmf, binomial_sf
from supernode.links.generations import Fec


def check_ber(ber: float | str, path: str = "ber") -> float:
    """``ber`` as a float if it is a bit error rate in [0, 0.5]; else InputError."""
    try:
        value = float(ber)
    except (TypeError, ValueError):
        raise InputError(path, f"got {ber!r}; a bit error rate is a number in [0, 0.5]"
                         ) from None
    if not (math.isfinite(value) and 0.0 <= value <= 0.5):
        raise InputError(path, f"got {ber!r}; a bit error rate is a number in [0, 0.5]")
    return value


def symbol_error_probability(ber: float, symbol_bits: int) -> float:
    """Probability that an ``symbol_bits``-bit symbol holds at least one bit error."""
    return float(-np.expm1(symbol_bits * np.log1p(-ber))) if ber > 0 else 0.0


def codeword_failure_probability(ber: float, fec: Fec) -> float:
    """Probability that one RS codeword has more than ``t`` wrong symbols (uncorrectable)."""
    q = symbol_error_probability(ber, fec.symbol_bits)
    if q <= 0.0:
        return 0.0
    return float(binomial_sf(fec.t, fec.n, q))


def post_fec_ber(ber: float, fec: Fec | None) -> float:
    """Bit error rate after decoding, for a raw (pre-FEC) BER ``ber``; ``ber`` without FEC."""
    if fec is None or ber <= 0.0:
        return ber
    q = symbol_error_probability(ber, fec.symbol_bits)
    wrong = np.arange(fec.t + 1, fec.n + 1)
    symbol_rate = float(np.sum(wrong * binomial_pmf(wrong, fec.n, q))) / fec.n
    return min(0.5, symbol_rate * ber / q)


def codewords_per_frame(frame_bytes: int, fec: Fec) -> float:
    """Codewords a frame of ``frame_bytes`` (above the FEC) occupies: bits / (k · m)."""
    return max(1.0, 8.0 * frame_bytes / (fec.k * fec.symbol_bits))

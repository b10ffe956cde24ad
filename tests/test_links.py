"""The link-layer model: closed forms computed by hand, monotonicity in BER, drain levels."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from supernode.errors import InputError
from supernode.links import (
    ber_thresholds,
    codeword_failure_probability,
    get_generation,
    link_generations,
    link_performance,
    post_fec_ber,
)
from supernode.links.generations import generation_for_rate


def test_pcie5_closed_form_by_hand():
    """PCIe 5.0 x16, no FEC, residual BER 1e-9: every figure from the formulas by hand."""
    gen = get_generation("pcie5-x16")
    perf = link_performance(gen, post_fec_ber=1e-9, message_bytes=2**20)
    bits = 280 * 8                                   # TLP frame: 256 B payload + 24 B
    p = 1 - (1 - 1e-9) ** bits                      # ≈ 2.24e-6
    data = 32e9 * 16 * 128 / 130 / 8                # 128b/130b: 63.08 GB/s
    window = math.ceil(500e-9 * data / 280)         # frames sent during a 500 ns replay
    assert window == 113
    goodput = data * 256 / 280
    efficiency = (1 - p) / (1 + (window - 1) * p)   # go-back-N
    assert perf.frame_error_probability == pytest.approx(p, rel=1e-9)
    assert perf.goodput_bytes_per_s == pytest.approx(goodput, rel=1e-6)
    assert perf.effective_bytes_per_s == pytest.approx(goodput * efficiency, rel=1e-9)
    frames = 2**20 // 256                           # 4,096 frames in 1 MiB
    assert perf.added_latency_mean_s == pytest.approx(500e-9 * frames * p / (1 - p), rel=1e-9)
    # No retry at all: (1-p)^4096 = 0.99087 >= 0.99, so the p99 adds nothing; with one
    # retry allowed the probability is 0.99087 + 4096 p (1-p)^4096 = 0.99996 >= 0.999.
    none = (1 - p) ** frames
    assert none > 0.99 and none + frames * p * (1 - p) ** frames > 0.999 > none
    assert perf.added_latency_p99_s == 0.0
    assert perf.added_latency_p999_s == pytest.approx(500e-9)


def test_single_frame_retry_tail_is_geometric():
    """One frame: retries are geometric, P(R >= k) = P^k; p99 is the smallest k with
    1 - P^(k+1) >= 0.99. At P = 0.05 that is k = 1 (0.9975), at P = 0.2, k = 2 (0.992)."""
    gen = get_generation("nvlink4")
    bits = gen.frame_bytes * 8
    for p, k99 in ((0.05, 1), (0.2, 2)):
        ber = 1 - (1 - p) ** (1 / bits)
        perf = link_performance(gen, post_fec_ber=ber, message_bytes=1)
        assert perf.frame_error_probability == pytest.approx(p, rel=1e-9)
        assert perf.added_latency_p99_s == pytest.approx(k99 * gen.retry_latency_s)
        assert perf.added_latency_mean_s == pytest.approx(gen.retry_latency_s * p / (1 - p))


def test_reed_solomon_against_a_direct_sum():
    """RS(544,514), t = 15, 10-bit symbols: the binomial tail summed term by term."""
    fec = get_generation("ethernet-400g").fec
    ber = 1e-3
    q = 1 - (1 - ber) ** 10
    terms = [math.comb(544, i) * q**i * (1 - q) ** (544 - i) for i in range(16, 545)]
    assert codeword_failure_probability(ber, fec) == pytest.approx(math.fsum(terms), rel=1e-9)
    residual = math.fsum(i / 544 * t for i, t in zip(range(16, 545), terms, strict=True))
    assert post_fec_ber(ber, fec) == pytest.approx(residual * ber / q, rel=1e-9)


def test_rs544_at_the_ieee_limit_leaves_about_1e_15():
    """At the 2.4e-4 raw-BER limit of IEEE 802.3 the random-error post-FEC BER is ~1e-15
    (802.3's 1e-13 target leaves margin for bursts)."""
    fec = get_generation("infiniband-ndr").fec
    assert 1e-16 < post_fec_ber(2.4e-4, fec) < 1e-14


def test_rates_from_lanes_and_coding():
    ndr = get_generation("infiniband-ndr")
    assert ndr.line_rate_bytes_per_s * 8 == pytest.approx(425e9)   # 4 x 106.25 Gb/s
    assert ndr.data_rate_bytes_per_s * 8 == pytest.approx(400e9)
    pcie6 = get_generation("pcie6-x16")
    assert pcie6.data_rate_bytes_per_s * 8 == pytest.approx(64e9 * 16 * 236 / 256)
    for gen in link_generations().values():
        assert gen.data_rate_bytes_per_s <= gen.line_rate_bytes_per_s * (1 + 1e-9)
        assert gen.sources


ERROR_RATES = st.floats(min_value=1e-15, max_value=3e-2, allow_nan=False)


@given(st.sampled_from(sorted(link_generations())), ERROR_RATES, ERROR_RATES,
       st.sampled_from(["pre", "post"]))
def test_monotone_in_ber(name, a, b, which):
    """More bit errors never give more bandwidth or less added latency."""
    low, high = sorted((a, b))
    gen = get_generation(name)
    key = "pre_fec_ber" if which == "pre" else "post_fec_ber"
    p_low = link_performance(gen, **{key: low})
    p_high = link_performance(gen, **{key: high})
    assert p_high.effective_bytes_per_s <= p_low.effective_bytes_per_s * (1 + 1e-12)
    assert p_high.frame_error_probability >= p_low.frame_error_probability
    assert p_high.post_fec_ber >= p_low.post_fec_ber
    for field in ("added_latency_mean_s", "added_latency_p99_s", "added_latency_p999_s"):
        assert getattr(p_high, field) >= getattr(p_low, field)
    assert p_low.added_latency_p99_s <= p_low.added_latency_p999_s


def test_drain_thresholds():
    """Standard limit where there is one, the 1 % bandwidth rule elsewhere; watch a decade below."""
    eth = ber_thresholds("ethernet-400g")
    assert (eth.criterion, eth.drain_pre_fec_ber) == ("spec", 2.4e-4)
    assert eth.watch_pre_fec_ber == pytest.approx(2.4e-5)
    nv = ber_thresholds("nvlink4")
    assert nv.criterion == "bandwidth"
    assert nv.bandwidth_loss_at_drain == pytest.approx(0.01, rel=1e-6)
    loss = 1 - link_performance(get_generation("nvlink4"), pre_fec_ber=nv.drain_pre_fec_ber
                                ).bandwidth_fraction
    assert loss == pytest.approx(0.01, rel=1e-6)
    pcie6 = ber_thresholds("pcie6-x16")
    assert pcie6.drain_pre_fec_ber == 1e-6 and pcie6.drain_post_fec_ber < 1e-6


def test_nvlink5_has_its_fec():
    """Issue 25: NVLink 5 exposes FEC counters (DCGM's FEC history of 0-15 corrected symbols,
    raw and effective BER), so a healthy 200G PAM4 lane's raw BER of 1e-6 costs nothing
    after the FEC (it cost 29 % modelled without one) and the drain level is the code's
    pre-FEC limit, not a level such a lane exceeds."""
    gen = get_generation("nvlink5")
    assert gen.fec is not None and gen.fec.t == 15
    perf = link_performance(gen, pre_fec_ber=1e-6)
    assert 1 - perf.bandwidth_fraction < 1e-9
    drain = ber_thresholds("nvlink5")
    assert (drain.criterion, drain.drain_pre_fec_ber) == ("spec", 2.4e-4)
    assert drain.drain_pre_fec_ber > 1e-6
    assert {"fec.n", "max_pre_fec_ber"} <= set(gen.assumed)


def test_lost_tail_packet_waits_the_rc_timeout():
    """Issue 25: on the RC transport a lost last packet is found by the local ACK timeout
    (4.096 us x 2^20 at NCCL's default NCCL_IB_TIMEOUT), not by a NAK round trip: the mean
    gains P x 4.29 s and the p99.9 holds the timeout once P > 0.001; link replay has none."""
    from scipy.stats import nbinom

    gen = get_generation("infiniband-ndr")
    timeout = 4.096e-6 * 2 ** 20
    assert gen.tail_timeout_s == pytest.approx(timeout)
    perf = link_performance(gen, post_fec_ber=1e-7)
    p, frames, t = perf.frame_error_probability, perf.message_frames, gen.retry_latency_s
    assert p > 1e-3
    assert perf.added_latency_mean_s == pytest.approx(t * frames * p / (1 - p) + p * timeout)
    tail = nbinom.ppf((0.999 - (1 - p)) / p, frames, 1 - p) * t
    assert perf.added_latency_p999_s == pytest.approx(timeout + tail)
    assert perf.added_latency_p99_s < 1e-3          # 1 - P > 0.99: no timeout in the p99
    nv = link_performance(get_generation("nvlink4"), post_fec_ber=1e-7)
    assert nv.tail_timeout_s is None and nv.added_latency_p999_s < 1e-3


def test_effective_drain_levels():
    """What monitoring compares with is a post-FEC BER: the sourced post-FEC limit where
    one is published (ibdiagnet's 1e-12 for InfiniBand, IEEE 802.3's 1e-13 for 400/800GbE),
    else the model's post-FEC BER at the raw drain level (the raw level itself without
    FEC); the watch level a decade under."""
    for name, level in (("infiniband-hdr", 1e-12), ("infiniband-ndr", 1e-12),
                        ("infiniband-xdr", 1e-12), ("ethernet-400g", 1e-13),
                        ("ethernet-800g", 1e-13)):
        t = ber_thresholds(name)
        assert (t.drain_effective_ber, t.effective_criterion) == (level, "spec"), name
        assert t.watch_effective_ber == pytest.approx(level / 10)
        assert t.drain_post_fec_ber < level          # the independent-error model is optimistic
    for name in ("nvlink4", "pcie5-x16", "pcie6-x16"):
        t = ber_thresholds(name)
        assert t.effective_criterion == "model"
        assert t.drain_effective_ber == t.drain_post_fec_ber
    assert ber_thresholds("pcie5-x16").drain_effective_ber == 1e-12     # no FEC: raw = post


def test_scale_out_generation_of_clusters():
    from supernode.cluster.load import load_cluster
    from supernode.links import scale_out_generation

    examples = Path(__file__).parents[1] / "examples"
    assert scale_out_generation(load_cluster("dgx-h100-superpod-su")).name == "infiniband-ndr"
    assert scale_out_generation(load_cluster("dgx-a100-selene-like")).name == "infiniband-hdr"
    assert scale_out_generation(load_cluster(examples / "gb300-nvl72-3rack.yaml")).name == \
        "infiniband-xdr"
    assert scale_out_generation(load_cluster("cloudmatrix384")).name == "ethernet-400g"
    assert scale_out_generation(load_cluster("hgx-h100")) is None          # one server


def test_bad_inputs():
    gen = get_generation("nvlink5")
    with pytest.raises(InputError, match="exactly one"):
        link_performance(gen)
    with pytest.raises(InputError, match=r"\[0, 0.5\]"):
        link_performance(gen, pre_fec_ber=2.0)
    with pytest.raises(InputError, match="known"):
        get_generation("nvlink9")


def test_generation_for_rate():
    assert generation_for_rate("infiniband", 50e9).name == "infiniband-ndr"
    assert generation_for_rate("nvlink", 50e9).name == "nvlink5"


def test_netsim_slow_link_by_ber_uses_the_link_model():
    """`slow:link:U-V:ber=B` slows the link by the link model's bandwidth fraction."""
    from supernode.cluster.load import load_cluster
    from supernode.netsim import apply_failures, network_from_cluster

    net = network_from_cluster(load_cluster("dgx-h100-superpod-su"))
    _, (nic, nvl, named) = apply_failures(net, [
        "slow:link:leaf/0-spine/0:ber=1e-3", "slow:link:acc/0-scale_up_l1/0/0:ber=1e-7",
        "slow:link:leaf/0-spine/1:ber=1e-3@ethernet-400g"])
    ndr = link_performance(get_generation("infiniband-ndr"), pre_fec_ber=1e-3)
    assert nic.factor == pytest.approx(ndr.bandwidth_fraction)      # 400 Gb/s NICs
    nvlink4 = link_performance(get_generation("nvlink4"), pre_fec_ber=1e-7)
    assert nvl.factor == pytest.approx(nvlink4.bandwidth_fraction)  # H100: 450 GB/s
    assert named.factor == pytest.approx(link_performance(
        get_generation("ethernet-400g"), pre_fec_ber=1e-3).bandwidth_fraction)
    assert 0 < nic.factor < 1 and 0 < nvl.factor < 1
    with pytest.raises(InputError, match="ber=B"):
        apply_failures(net, ["slow:link:leaf/0-spine/0:ber=lots"])


def test_link_command():
    import json

    from typer.testing import CliRunner

    from supernode.commands import app, register_all

    register_all()
    runner = CliRunner()
    listing = runner.invoke(app, ["link"])
    assert listing.exit_code == 0 and "infiniband-ndr" in listing.output
    result = runner.invoke(app, ["link", "infiniband-ndr", "--ber", "1e-3", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    expected = link_performance(get_generation("infiniband-ndr"), pre_fec_ber=1e-3)
    assert data["performance"]["effective_bytes_per_s"] == pytest.approx(
        expected.effective_bytes_per_s)
    assert data["thresholds"]["drain_pre_fec_ber"] == 2.4e-4
    bad = runner.invoke(app, ["link", "infiniband-ndr", "--ber", "0.7"])
    assert bad.exit_code == 2 and bad.output.startswith("error:")


def _outcome(f, *args):
    """A value as a float, or the type of the exception raised."""
    try:
        return float(f(*args))
    except ArithmeticError as exc:
        return type(exc)


@given(st.integers(1, 600), st.data(), st.floats(0.0, 1.0))
def test_binomial_functions_are_scipy_stats_own(n, data, p):
    """The binomial pmf and survival function the FEC model calls without importing
    scipy.stats give scipy.stats.binom's values exactly (and its errors: scipy raises
    OverflowError for some p near the smallest normal float, either way)."""
    from scipy.stats import binom

    from supernode.links.binomial import binomial_pmf, binomial_sf

    k = data.draw(st.integers(0, n))
    assert _outcome(binomial_sf, k, n, p) == _outcome(binom.sf, k, n, p)
    assert _outcome(binomial_pmf, k, n, p) == _outcome(binom.pmf, k, n, p)


@given(st.floats(0.0, 1.0), st.integers(1, 5000), st.floats(0.5, 1.0) | st.just(0.0))
def test_negative_binomial_quantile_is_scipy_stats_own(q, n, p):
    """The retry-latency quantile's negative-binomial ppf is scipy.stats.nbinom.ppf's,
    edges included (q = 0 and 1; p = 0, outside the domain: NaN), for success
    probabilities of a frame from 0.5 up (a lower one drains the link long before)."""
    from scipy.stats import nbinom

    from supernode.links.binomial import negative_binomial_ppf

    got, want = _outcome(negative_binomial_ppf, q, n, p), _outcome(nbinom.ppf, q, n, p)
    assert got == want or (got != got and want != want)  # NaN equals NaN here


def test_link_model_does_not_import_scipy_stats():
    """The drain thresholds (the design review's monitoring stage) and a link's
    performance are computed without importing scipy.stats (half a second)."""
    import subprocess
    import sys

    code = ("import sys; from supernode.links import ber_thresholds, link_performance, "
            "get_generation; ber_thresholds('ethernet-400g'); "
            "link_performance(get_generation('ethernet-400g'), pre_fec_ber=1e-5); "
            "print('scipy.stats' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"

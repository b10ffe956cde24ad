"""The committed efficiency tables match a fresh refit; the data file is well formed."""

from __future__ import annotations

import numpy as np
import pytest

from supernode.collectives import calibrate, case_groups, load_efficiency_tables
from supernode.collectives.efficiency import efficiency_curve
from supernode.collectives.efficiency_file import read_efficiency_file, tables_from_file_spec
from supernode.errors import InputError
from supernode.spec.casefile import read_cases, source_of


def _groups():
    return case_groups.collective_groups(read_cases())


def test_calibration_check_passes(capsys):
    status = calibrate.main(["--check"])
    out, err = capsys.readouterr()
    assert status == 0, out + err
    assert "rms log error" in out and "95%" in out
    assert "ON BOUND" not in err  # no fitted constant sits on its bound


def _committed(spec) -> dict:
    return {k: getattr(spec.tables[k[0]], k[1])
            for k in calibrate.free_parameters(spec, _groups())}


def test_write_round_trips(tmp_path):
    spec = read_efficiency_file()
    path = tmp_path / "efficiency.yaml"
    calibrate.write(spec, _committed(spec), path)
    assert path.read_text(encoding="utf-8").startswith("# Collective")
    assert tables_from_file_spec(read_efficiency_file(path)) == load_efficiency_tables()


def test_drift_is_detected():
    spec = read_efficiency_file()
    committed = _committed(spec)
    assert ("nvlink3", "simple_efficiency") in committed
    assert calibrate.drift(spec, committed) == []
    moved = calibrate.with_values(spec, {("nvlink3", "simple_efficiency"): 0.5})
    assert calibrate.drift(moved, committed) == [
        f"nvlink3.simple_efficiency: committed 0.5, refit "
        f"{committed[('nvlink3', 'simple_efficiency')]}"]


def test_priors_never_come_from_the_committed_fit():
    spec = read_efficiency_file()
    moved = calibrate.with_values(spec, {("nvlink4", "in_network_efficiency"): 0.3})
    # nvlink5 derives its NVLS prior from nvlink4's *prior* (NCCL 0.85 x 0.74/0.85)
    assert calibrate.prior_value(moved, "nvlink5", "in_network_efficiency") == pytest.approx(
        0.74, rel=1e-4)
    assert calibrate.prior_value(moved, "nvlink3", "simple_efficiency") == pytest.approx(0.822)


def test_committed_tables_fit_the_cases():
    errors = case_groups.log_errors(_groups(), load_efficiency_tables())
    assert len(errors) >= 30
    assert np.median(np.abs(errors)) < 0.05


def test_source_is_the_benchmark_page():
    key = source_of("oracle-quickstart/oci-gpu-quickstarts nvidia/GB200/"
                               "README-GB200.md @2a52, '#### NCCL All Reduce'")
    assert key == "oracle-quickstart/oci-gpu-quickstarts nvidia/GB200/README-GB200.md"
    assert source_of("Azure/AI-benchmarking-guide Azure_Results/ND_A100_v4_"
                                "results.md ('NCCL Bandwidth')").endswith("ND_A100_v4_results.md")


def test_tables_are_physical():
    tables = load_efficiency_tables()
    for name, table in tables.items():
        assert 0 < table.simple_efficiency <= 1, name
        for protocol in ("ll", "ll128"):
            if table.has(protocol):
                assert table.efficiency(protocol, 1e9) <= table.simple_efficiency, name
        assert table.simple_latency_s < 30e-6 and table.ll_latency_s <= table.simple_latency_s
    # NCCL's scalings hold between generations
    assert tables["nvlink3"].ll128_max_bytes_per_s == pytest.approx(
        tables["nvlink4"].ll128_max_bytes_per_s * 20 / 36.7, rel=1e-4)
    assert tables["nvlink3"].ll_latency_s == pytest.approx(
        tables["nvlink4"].ll_latency_s * 1980 / 1410, rel=1e-4)
    ndr, xdr = tables["infiniband_ndr"], tables["infiniband_xdr"]
    assert ndr.simple_latency_s == xdr.simple_latency_s


def test_efficiency_curve_rises_to_eta_max():
    table = load_efficiency_tables()["nvlink4"]
    w = np.logspace(3, 13, 50)
    curve = efficiency_curve(table, w)
    assert np.all(np.diff(curve) > 0)
    assert curve[-1] == pytest.approx(table.simple_efficiency, rel=1e-4)
    half = efficiency_curve(table, table.simple_half_bandwidth_bytes)
    assert half == pytest.approx(table.simple_efficiency / 2)


def test_bad_tables_are_input_errors(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("tables:\n  x:\n    description: d\n    simple_efficiency: 2.0\n")
    with pytest.raises(InputError, match="simple_efficiency"):
        read_efficiency_file(bad)
    bad.write_text("tables:\n  x:\n    description: d\n    derived_from: y\n")
    with pytest.raises(InputError, match="derived_from"):
        tables_from_file_spec(read_efficiency_file(bad))
    bad.write_text("tables:\n  x:\n    description: d\n    simple_latency_us: 1\n"
                   "    simple_efficiency: 0.5\n    simple_half_bandwidth_bytes: 0\n"
                   "    fitted: [colour]\n")
    with pytest.raises(InputError, match="colour"):
        read_efficiency_file(bad)

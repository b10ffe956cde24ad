"""The committed efficiency tables match a fresh refit; the data file is well formed."""

from __future__ import annotations

import numpy as np
import pytest

from supernode.collectives import calibrate, load_efficiency_tables
from supernode.collectives.efficiency import (
    efficiency_curve,
    read_efficiency_file,
    tables_from_file_spec,
)
from supernode.errors import InputError


def test_calibration_check_passes(capsys):
    status = calibrate.main(["--check"])
    out, err = capsys.readouterr()
    assert status == 0, out + err
    assert "rms log error" in out


def _committed(spec) -> dict:
    groups = calibrate.collective_groups(_cases())
    return {(name, p): getattr(spec.tables[name], p)
            for free, _ in calibrate.fit_blocks(spec, groups) for name, p in free}


def _cases() -> list[dict]:
    import json

    return json.loads(calibrate.default_cases_path().read_text(encoding="utf-8"))["cases"]


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


def test_committed_tables_fit_the_cases():
    errors = calibrate.log_errors(calibrate.collective_groups(_cases()), load_efficiency_tables())
    assert len(errors) >= 10
    assert np.max(np.abs(errors)) < 0.05


def test_tables_are_physical():
    tables = load_efficiency_tables()
    for name, table in tables.items():
        assert 0 < table.simple_efficiency <= 1, name
        assert table.ll128_efficiency is None or table.ll128_efficiency <= table.simple_efficiency
        assert table.step_latency_s < 20e-6
    assert tables["nvlink5"].in_network_efficiency == pytest.approx(
        tables["nvlink4"].in_network_efficiency * 0.74 / 0.85, rel=1e-4)
    assert tables["infiniband_ndr"] == tables["infiniband_hdr"].__class__(
        "infiniband_ndr", *[getattr(tables["infiniband_hdr"], f) for f in (
            "step_latency_s", "simple_efficiency", "simple_half_bandwidth_bytes",
            "ll128_efficiency", "in_network_efficiency")])


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
    bad.write_text("tables:\n  x:\n    description: d\n    step_latency_us: 1\n"
                   "    simple_efficiency: 0.5\n    simple_half_bandwidth_bytes: 0\n"
                   "    fitted: [colour]\n")
    with pytest.raises(InputError, match="colour"):
        read_efficiency_file(bad)

"""The committed step-time calibration is what the documented procedure refits."""

from supernode.estimate.calibrate import drift, refit
from supernode.estimate.calibration import read_calibration_document


def test_committed_constants_match_a_refit():
    assert drift(refit()) == []


def test_every_constant_is_documented():
    doc = read_calibration_document()
    assert "procedure" in doc
    for name, entry in doc["constants"].items():
        assert entry["kind"] in ("fitted", "fixed"), name
        assert entry.get("note"), name
        if entry["kind"] == "fitted":
            low, high = entry["bounds"]
            assert low <= entry["value"] <= high, name

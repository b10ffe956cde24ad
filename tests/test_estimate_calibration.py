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


def test_leave_one_out_error_of_the_step_model():
    """Out-of-sample check: refit on all training cases but one, predict the one left out.

    The in-sample bounds (tests/test_estimate_validation.py) are goodness of fit; this is
    the error to expect on a new case of the same family.
    """
    import numpy as np

    from supernode.estimate.calibrate import log_errors, training_cases
    from supernode.estimate.calibration import default_calibration

    cases = training_cases()
    errors = []
    for i, case in enumerate(cases):
        fit = refit(cases[:i] + cases[i + 1:])
        errors.append(float(np.expm1(log_errors(default_calibration().replace(**fit),
                                                [case])[0])))
    assert np.mean(np.abs(errors)) <= 0.06, errors
    assert np.max(np.abs(errors)) <= 0.12, errors

"""The tests' shared design memo (:mod:`designs`): one review per input per process, and
every caller its own copy."""

from __future__ import annotations

from designs import RUNS, example_design, example_input


def test_one_review_per_input_and_every_caller_its_own_copy():
    first = example_design("flawed", simulate=False)
    runs = len(RUNS)
    again = example_design("flawed", simulate=False)
    assert len(RUNS) == runs and RUNS.count(example_input("flawed", simulate=False)) == 1
    assert again.to_dict() == first.to_dict() and again is not first
    again.data["verdict"]["errors"].append("changed by one test")
    again.files.clear()
    third = example_design("flawed", simulate=False)
    assert "changed by one test" not in third.errors and third.files == first.files != {}

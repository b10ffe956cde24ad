"""The design review of a straddling best plan (issue 24 item 6) and the timeline's group
rows (issue 24: they are the exact union of their parts), on results data."""

from __future__ import annotations

from types import SimpleNamespace

from designs import example_design
from hypothesis import given
from hypothesis import strategies as st

from supernode.design.simulation import merge_intervals, timeline_by_dimension


def _measure(intervals) -> float:
    return sum(e - s for s, e in merge_intervals([tuple(iv) for iv in intervals], 0.0))


def _assert_groups_add_up(lanes: dict) -> None:
    groups = {name: lane for name, lane in lanes.items() if lane.get("parts")}
    assert "communication" in groups
    for name, lane in groups.items():
        parts = [lanes[p] for p in lane["parts"]]
        union = merge_intervals([tuple(iv) for p in parts for iv in p["intervals"]], 0.0)
        assert lane["intervals"] == union, name
        assert abs(lane["busy_s"] - _measure(union)) <= 1e-12 * max(1.0, lane["busy_s"])
        assert max(p["busy_s"] for p in parts) <= lane["busy_s"] * (1 + 1e-12)
        assert lane["busy_s"] <= sum(p["busy_s"] for p in parts) * (1 + 1e-12)
        assert lane["transfers"] == sum(p["transfers"] for p in parts)
    comm = set(groups["communication"]["parts"])
    assert comm == {n for n, lane in lanes.items()
                    if n not in ("compute", "optimizer") and not lane.get("parts")}


def test_design_of_a_straddling_best_plan_is_confirmed_by_its_simulation():
    data = example_design("deepseek-v3-nvl72").data
    sim, reviewed, plans = data["simulation"], data["reviewed_plan"], data["plans"]
    check = sim["straddle_check"]
    assert check["confirmed"] == (check["simulated_win"] > check["margin"])
    assert check["simulated_step_time_s"] < check["inside_simulated_step_time_s"]
    first = plans["plans"][0]
    # the reviewed plan is the first plan, straddling only when the simulation confirms
    assert (reviewed["tp"], reviewed["ep"], reviewed["pp"]) == (first["tp"], first["ep"],
                                                               first["pp"])
    assert reviewed["straddles_domain"] == check["confirmed"]
    if check["confirmed"]:
        assert first["straddling_groups"] == check["straddles"]
        ep_tier = first["placement"]["ep"]
        assert any(g["dim"] == "ep" for g in first["straddling_groups"]) == (
            ep_tier != "scale_up")
    assert plans["best_inside_domain"]["plan"] == check["inside_plan"]
    _assert_groups_add_up(sim["timeline_by_dimension"]["lanes"])


_CATEGORIES = ["compute", "optimizer", "tp", "tp all_gather", "tp reduce_scatter", "dp",
               "dp reduce_scatter", "ep", "ep all_to_all", "pp", "communication"]


@given(st.lists(st.tuples(st.sampled_from(_CATEGORIES), st.floats(0, 1), st.floats(0, 0.2)),
                min_size=1, max_size=60))
def test_group_rows_are_the_union_of_their_parts(spans):
    rows = [("job0", f"r{i % 3}", cat, start, start + length)
            for i, (cat, start, length) in enumerate(spans)]
    result = SimpleNamespace(tables=SimpleNamespace(timeline=rows, duration_s=1.2))
    lanes = timeline_by_dimension(result)["lanes"]
    if any(c not in ("compute", "optimizer") for c, _, _ in spans):
        _assert_groups_add_up(lanes)
    else:
        assert "communication" not in lanes

"""Plans whose TP/CP/EP groups straddle a scale-up domain rank after those inside unless
they win by more than the margin (issue 24 item 6, supernode.planner.straddle)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import given
from hypothesis import strategies as st

from supernode.errors import InputError
from supernode.planner import Layout, build_target, plan_job
from supernode.planner.mapping import group_factors, slowest_tier
from supernode.planner.straddle import (
    STRADDLE_MARGIN,
    check_margin,
    rank_straddling,
    straddling_groups,
    win_share,
)

CLUSTER = "examples/design/deepseek-v3-nvl72/cluster.yaml"  # 8 GB200 NVL72 racks
#: On 72-GPU racks: EP 16 straddles (72 / 16 = 4.5), EP 8 does not (72 / 8 = 9); nor does
#: TP 8, but with it EP 8 spans 64 ranks (expert TP = TP: 8 x 8), and that straddles.
STRADDLING = Layout(tp=1, pp=1, dp=576, cp=1, ep=16)
INSIDE = Layout(tp=1, pp=8, dp=72, cp=1, ep=8)


@pytest.fixture(scope="module")
def target():
    return build_target(CLUSTER, "deepseek-v3", global_batch=1152)[0]


@dataclass
class Record:
    layout: Layout
    objective: float
    straddles: tuple[tuple[str, int], ...] = ()
    rank_note: str | None = None


def test_ep16_on_72_gpu_racks_straddles_and_ep8_does_not(target):
    assert straddling_groups(STRADDLING, target.system) == (("ep", 16),)
    assert straddling_groups(INSIDE, target.system) == ()
    assert straddling_groups(Layout(tp=8, pp=1, dp=72, cp=1, ep=8), target.system) == (
        ("ep", 8),)
    # the same group view the estimate costs: the worst EP group crosses beyond tier 0
    f = group_factors(STRADDLING)
    assert slowest_tier(target.system.fabric, f["ep"]) > 0


@pytest.mark.parametrize("win, kept", [(0.03, False), (0.09, False), (0.25, True)])
def test_fastest_plan_straddling_by_a_small_margin_is_demoted(target, win, kept):
    inside = Record(INSIDE, 1.0)
    fast = Record(STRADDLING, 1.0 - win)
    slower_inside = Record(Layout(tp=1, pp=4, dp=144, cp=1, ep=8), 1.01)
    ranked = rank_straddling([fast, inside, slower_inside], target.system, 72)
    assert (ranked[0] is fast) == kept
    if kept:
        assert fast.rank_note.startswith("kept above")
        assert f"wins by {win:.0%}" in fast.rank_note
    else:
        assert ranked == [inside, slower_inside, fast]
        assert fast.rank_note == ("ranked after TP=1 PP=8 DP=72 CP=1 EP=8: EP group of 16 "
                                  f"straddles 72-GPU domains; wins by only {win:.0%}")
    assert inside.rank_note is None and inside.straddles == ()


@given(st.lists(st.tuples(st.booleans(), st.floats(0.5, 2.0)), min_size=1, max_size=12),
       st.floats(0.0, 0.5))
def test_ranking_invariants(flags_objectives, margin):
    """A permutation; no demoted straddler above a plan inside; a straddler above the
    best plan inside wins by more than the margin; each class keeps the given order."""
    system = _SYSTEM
    records = sorted((Record(STRADDLING if s else INSIDE, o) for s, o in flags_objectives),
                     key=lambda r: r.objective)
    ranked = rank_straddling(list(records), system, 72, margin)
    assert sorted(map(id, ranked)) == sorted(map(id, records))
    inside = [r for r in records if not r.straddles]
    if not inside:
        assert ranked == records
        return
    best = inside[0].objective
    first_demoted = next((i for i, r in enumerate(ranked)
                          if r.straddles and win_share(r.objective, best) <= margin),
                         len(ranked))
    assert all(r.straddles for r in ranked[first_demoted:])
    for r in ranked[:first_demoted]:
        assert not r.straddles or win_share(r.objective, best) > margin
    kept = ranked[:first_demoted]
    assert [r.objective for r in kept] == sorted(r.objective for r in kept)


_SYSTEM = build_target(CLUSTER, "deepseek-v3", global_batch=1152)[0].system


@pytest.mark.parametrize("margin", [0.05, 0.5])
def test_plan_job_keeps_or_demotes_the_straddling_winner(target, margin):
    """The example's fastest plans straddle (EP across racks) and beat the best plan
    inside by a share w: a margin under w keeps them first, one over demotes them."""
    report = plan_job(target, top=3, straddle_margin=margin)
    first = report.plans[0]
    d = report.to_dict()
    assert d["straddle_margin"] == margin
    assert d["plans"][0]["straddles_scale_up_domain"] == bool(first.straddles)
    inside = min((r for r in report.outcome.ranked if not r.straddles),
                 key=lambda r: r.objective)
    fastest = min(report.outcome.ranked, key=lambda r: r.objective)
    assert fastest.straddles  # the example's premise
    won = win_share(fastest.objective, inside.objective)
    if won > margin:
        assert first.straddles and first.rank_note.startswith("kept above")
        assert report.inside_best is not None and not report.inside_best.straddles
    else:
        assert not first.straddles and report.inside_best is None
        assert any(line.startswith("Passed over") and "wins by only" in line
                   for line in report.explanation)


@pytest.mark.parametrize("bad", [-0.1, 1.0, 2.0])
def test_margin_out_of_range_is_an_input_error(bad):
    with pytest.raises(InputError, match="straddle-margin"):
        check_margin(bad)
    assert 0 < STRADDLE_MARGIN < 1


@pytest.mark.parametrize("simulated_win, confirmed", [(0.02, False), (0.25, True)])
def test_design_keeps_a_straddling_winner_only_when_the_simulation_confirms(
        target, simulated_win, confirmed):
    """supernode.design.plans.confirm_straddling_best with simulated steps given: a win
    under the margin puts the best plan inside first and simulates it as the reviewed one."""
    from supernode.design.plans import confirm_straddling_best

    report = plan_job(target, top=3, straddle_margin=0.05)
    straddler, inside = report.plans[0], report.inside_best
    assert straddler.straddles and inside is not None
    calls = []

    def simulate(plan, order):
        calls.append((plan.tp, plan.pp, plan.ep, order))
        return {"step_time_s": 1.0}

    sim = {"step_time_s": 1.0 - simulated_win}
    view, plan, order, reviewed = confirm_straddling_best(report, sim, simulate)
    assert calls == [(inside.layout.tp, inside.layout.pp, inside.layout.ep,
                      tuple(inside.layout.order))]
    check = reviewed["straddle_check"]
    assert check["confirmed"] is confirmed
    assert check["simulated_win"] == pytest.approx(simulated_win)
    if confirmed:
        assert reviewed is sim and report.plans[0] is straddler and view["straddles_domain"]
        assert (plan.tp, plan.ep) == (straddler.layout.tp, straddler.layout.ep)
    else:
        assert report.plans[0] is inside and straddler in report.plans[1:]
        assert (plan.tp, plan.pp, plan.ep) == (inside.layout.tp, inside.layout.pp,
                                               inside.layout.ep)
        assert not view["straddles_domain"] and view["ep"] == inside.layout.ep
        assert straddler.rank_note.endswith("(2% simulated, 5% needed)")
        assert check["note"] in report.notes

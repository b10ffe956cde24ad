"""``results.json``: which TP/CP/EP groups of a plan straddle a scale-up domain, and the
simulation's check of a straddling best plan (issue 24, :mod:`supernode.planner.straddle`).
SI units: seconds."""

from __future__ import annotations

from supernode.design.results.base import ResultModel, field


class StraddlingGroup(ResultModel):
    """One parallel dimension whose groups do not sit inside one scale-up domain."""

    dim: str = field("The dimension: tp, cp or ep.")
    group_size: int = field("GPUs of one of its groups.")


class InsideBest(ResultModel):
    """The best plan whose groups stay inside the domains (when the best one straddles)."""

    plan: str = field("Its sizes, knobs and rank order.")
    step_time_s: float = field("Its estimated step time (s).")


class StraddleCheck(ResultModel):
    """A straddling best plan simulated against the best plan inside the domains."""

    straddling_plan: str = field("The planner's straddling best plan.")
    inside_plan: str = field("The best plan whose groups stay inside the domains.")
    straddles: list[StraddlingGroup] = field("The straddling plan's straddling groups.")
    estimated_win: float = field("Share of the step the estimate says it saves.")
    simulated_win: float = field("Share of the step the simulation says it saves.")
    margin: float = field("Share it must save to stay first.")
    confirmed: bool = field("True when the simulated win passes the margin.")
    simulated_step_time_s: float = field("Simulated step of the straddling plan (s).")
    inside_simulated_step_time_s: float = field("Simulated step of the plan inside (s).")
    note: str = field("What the check decided, in words.")

"""Every numeric option of every command checked by one rule before the command runs.

:func:`bound_numeric_options` wraps the type of each int and float option (and
argument) of a command, so a value is refused as a usage error (exit 2, one
``error: --option: ...`` line naming the range) before the command's code sees it:

* every float is finite and 0 or within ``1e-30..1e30`` in size, every integer within
  the signed 64-bit range (:func:`supernode.bounds.number_problem`);
* an option named in :data:`OPTION_LIMITS`, or whose name ends in a unit suffix of
  :data:`SUFFIX_LIMITS` (the file fields' unit limits of ``spec/base.py`` included),
  lies in its documented range (``docs/limits.md``, "Command-line numbers").

The root group applies it to each command as it is loaded
(:class:`supernode.commands._shell.SupernodeGroup`), so commands added later are
covered with no change here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from supernode.bounds import (
    MAX_DAYS,
    MAX_DURATION_S,
    MAX_MESSAGE_BYTES,
    MAX_RUNS,
    MAX_TRACE_JOBS,
    MAX_WORKERS,
    number_problem,
)
from supernode.spec.base import UNIT_LIMITS
from supernode.spec.resolved import MAX_ACCELERATORS

try:  # typer >= 0.26 carries its own copy of click
    from typer._click import exceptions as click_exceptions
except ImportError:  # pragma: no cover - older typer on click
    import click.exceptions as click_exceptions  # type: ignore[no-redef]


@dataclass(frozen=True)
class OptionLimit:
    """The range of one option: ``low``..``high`` in ``unit`` (``low_open``: ``(low, high]``)."""

    low: float | None
    high: float | None
    unit: str = ""
    low_open: bool = False


#: Ranges by option name, the same on every command that has the option.
OPTION_LIMITS: dict[str, OptionLimit] = {
    "--workers": OptionLimit(1, MAX_WORKERS, "processes"),
    "--seed": OptionLimit(0, 2**63 - 1),
    "--jobs": OptionLimit(1, MAX_TRACE_JOBS, "jobs"),
    "--message-bytes": OptionLimit(1, MAX_MESSAGE_BYTES, "bytes (1 TiB)"),
    "--gpus": OptionLimit(1, MAX_ACCELERATORS, "GPUs"),
    "--ranks": OptionLimit(1, MAX_ACCELERATORS, "ranks"),
    "--ranks-per-domain": OptionLimit(1, MAX_ACCELERATORS, "ranks"),
    "--max-gpus": OptionLimit(1, MAX_ACCELERATORS, "GPUs"),
    "--priority-min-gpus": OptionLimit(1, MAX_ACCELERATORS, "GPUs"),
    "--spares": OptionLimit(0, MAX_ACCELERATORS, "hosts"),
    "--days": OptionLimit(0, MAX_DAYS, "days", low_open=True),
    "--runs": OptionLimit(1, MAX_RUNS, "runs"),
    "--iters": OptionLimit(1, 1_000_000, "iterations"),
    "--top": OptionLimit(1, 10_000),
    "--backfill-depth": OptionLimit(1, MAX_TRACE_JOBS, "jobs"),
    "--interval": OptionLimit(1, MAX_DURATION_S, "s"),
    "--arrival-rate-per-h": OptionLimit(0, 1e6, "jobs per hour", low_open=True),
    "--units": OptionLimit(2, 8, "units (memory check: units sharing the lines)"),
    "--hold-out": OptionLimit(0, 64, "sizes per test"),
}

#: Ranges by the unit suffix of an option's name (``--interval-s``: seconds): the file
#: fields' unit limits, and durations in seconds.
SUFFIX_LIMITS: dict[str, OptionLimit] = {
    **{"-" + suffix[1:].replace("_", "-"): OptionLimit(limit.low, limit.high, limit.unit)
       for suffix, limit in UNIT_LIMITS.items()},
    "-s": OptionLimit(0, MAX_DURATION_S, "s (ten years)"),
}



def option_limit(name: str) -> OptionLimit | None:
    """The documented range of option ``name`` (None: only the general rule)."""
    if name in OPTION_LIMITS:
        return OPTION_LIMITS[name]
    matches = [s for s in SUFFIX_LIMITS if name.endswith(s)]
    return SUFFIX_LIMITS[max(matches, key=len)] if matches else None


def value_problem(value: Any, limit: OptionLimit | None) -> str | None:
    """What is wrong with a parsed option value (a number, or a list of them) for
    ``limit`` (None: the general rule only); None when nothing is."""
    items = value if isinstance(value, list | tuple) else (value,)
    bound = limit or OptionLimit(None, None)
    for item in items:
        if isinstance(item, int | float) and not isinstance(item, bool):
            problem = number_problem(item, bound.low, bound.high, bound.unit, bound.low_open)
            if problem is not None:
                return problem
    return None


def _bounded(param: Any, limit: OptionLimit | None) -> Callable[[Any, Any], Any]:
    parse = param.process_value

    def process_value(ctx: Any, value: Any) -> Any:
        parsed = parse(ctx, value)
        problem = value_problem(parsed, limit)
        if problem is not None:
            raise click_exceptions.BadParameter(problem, ctx=ctx, param=param)
        return parsed

    process_value.bounded = True  # type: ignore[attr-defined]
    return process_value


def bound_numeric_options(command: Any) -> Any:
    """``command`` (and, for a group, each of its commands) with every parameter's parsed
    value checked by :func:`value_problem` (its number or numbers; text passes); a value
    refused is a usage error naming the option. Idempotent."""
    for sub in list((getattr(command, "commands", None) or {}).values()):
        bound_numeric_options(sub)
    for param in getattr(command, "params", ()):
        if getattr(param.process_value, "bounded", False):
            continue
        names = [o for o in getattr(param, "opts", ()) if o.startswith("--")]
        limit = next((option_limit(n) for n in names if option_limit(n)), None)
        param.process_value = _bounded(param, limit)
    return command

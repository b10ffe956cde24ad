"""Numbers from users checked before any arithmetic or allocation: one home for the rules.

Every numeric command-line option passes through :func:`check_number` (the CLI applies
it to each int and float option, with the option's documented range from
``commands/_option_limits.py``), and the library entry points that take numbers from a
caller use the same function, so a value is refused with its field or option name, the
range and the unit, never reaching a model as NaN, infinity, a subnormal or an integer
too large for numpy:

* a float must be finite and, unless 0, between :data:`MIN_MAGNITUDE` and
  :data:`MAX_MAGNITUDE` in size (subnormals such as ``1e-320`` turn into NaN or infinity
  when divided or multiplied; ``1e308`` overflows at the first product);
* an integer must fit a signed 64-bit integer (:data:`MAX_INT64`), numpy's size;
* either must lie in the range the caller states, when it states one.

Worker counts (``--workers`` of every command) are bounded here too: at most
:data:`MAX_WORKERS` may be asked for (:func:`check_workers`), and no more processes are
started than there are CPU cores this process may run on (:func:`worker_processes`).
"""

from __future__ import annotations

import math
import os

from supernode.errors import InputError

#: Smallest magnitude a non-zero float may have (far above the subnormals, 2.2e-308).
MIN_MAGNITUDE = 1e-30
#: Largest magnitude a float may have (a product of ten such numbers is still finite).
MAX_MAGNITUDE = 1e30
#: Largest integer magnitude (signed 64-bit, numpy's ``int64``).
MAX_INT64 = 2**63 - 1
#: Most worker processes ``--workers`` may ask for, on every command that has it.
MAX_WORKERS = 256
#: Longest Monte Carlo horizon (``reliability --days``), in days.
MAX_DAYS = 3650.0
#: Most Monte Carlo runs (``reliability --runs``).
MAX_RUNS = 100_000
#: Most jobs of a trace, read or drawn (``schedule --jobs``, trace rows).
MAX_TRACE_JOBS = 1_000_000
#: Largest message of a collective or link option, in bytes (1 TiB).
MAX_MESSAGE_BYTES = 2**40
#: Longest duration a number of seconds may give (an option or a what-if): ten years.
MAX_DURATION_S = 10 * 365 * 86_400


def _shown(value: float) -> str:
    """``value`` as a short readable figure (thousands separated, or in e-notation)."""
    if isinstance(value, int) and not isinstance(value, bool):
        text = f"{value:,}"
        return text if len(text) <= 30 else f"{value:.3e}"
    if value != value or value in (math.inf, -math.inf):
        return str(value)
    if value == int(value) and abs(value) < 1e15:
        return f"{int(value):,}"
    return f"{value:.6g}"


def describe_range(low: float | None, high: float | None, unit: str = "",
                   low_open: bool = False) -> str:
    """The range as text: ``in 1..1,000,000 jobs``, ``in (0, 3,650] days``, ``>= 0``."""
    suffix = f" {unit}" if unit else ""
    if low is not None and high is not None:
        if low_open:
            return f"in ({_shown(low)}, {_shown(high)}]{suffix}"
        return f"in {_shown(low)}..{_shown(high)}{suffix}"
    if low is not None:
        return f"{'>' if low_open else '>='} {_shown(low)}{suffix}"
    if high is not None:
        return f"<= {_shown(high)}{suffix}"
    return f"a number{suffix}"


def number_problem(value: float, low: float | None = None, high: float | None = None,
                   unit: str = "", low_open: bool = False) -> str | None:
    """What is wrong with ``value`` for a field of range ``low``..``high`` (None: fine).

    ``low_open`` makes the lower end exclusive (``(0, high]``). Floats must be finite and
    0 or within :data:`MIN_MAGNITUDE`..:data:`MAX_MAGNITUDE` in size; integers within
    :data:`MAX_INT64` in size.
    """
    allowed = describe_range(low, high, unit, low_open)
    if isinstance(value, bool):
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return f"got {value}; give a finite number {allowed}"
    too_low = low is not None and (value <= low if low_open else value < low)
    if too_low or (high is not None and value > high):
        return f"got {_shown(value)}; must be {allowed}"
    if isinstance(value, float) and value != 0 \
            and not MIN_MAGNITUDE <= abs(value) <= MAX_MAGNITUDE:
        return (f"got {value:g}; a number is 0 or {MIN_MAGNITUDE:g}..{MAX_MAGNITUDE:g} in "
                f"size")
    if isinstance(value, int) and abs(value) > MAX_INT64:
        return f"got {_shown(value)}, more than a 64-bit integer holds"
    return None


def check_number(field: str, value: float, low: float | None = None,
                 high: float | None = None, unit: str = "", low_open: bool = False) -> float:
    """``value`` when it is a usable number in range (:func:`number_problem`); otherwise
    :class:`InputError` at ``field`` saying the range and the unit."""
    problem = number_problem(value, low, high, unit, low_open)
    if problem is not None:
        raise InputError(field, problem)
    return value


def cpu_cores() -> int:
    """CPU cores this process may run on (its affinity mask where the OS has one)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def check_workers(workers: int | None, field: str = "--workers") -> int | None:
    """``workers`` (None: the caller's default) when in 1..:data:`MAX_WORKERS`; else
    :class:`InputError` at ``field``."""
    if workers is None:
        return None
    check_number(field, workers, 1, MAX_WORKERS, "processes")
    return int(workers)


def worker_processes(workers: int, tasks: int) -> int:
    """Processes to start for ``tasks`` tasks when ``workers`` are asked for: never more
    than the tasks, the CPU cores (:func:`cpu_cores`) or :data:`MAX_WORKERS`; at least 1."""
    return max(1, min(int(workers), tasks, cpu_cores(), MAX_WORKERS))

"""``supernode memory check``: one seeded coherence run on the cluster's fabric, checked,
and its failing history shrunk.

The run (:mod:`.sim`) takes its timing from the cluster: the one-way latency of a message
is the scale-up domain's one-hop latency, jitter a third of it (assumed), a line's
serialisation ``line_bytes`` over one scale-up link, the think time between operations one
hop. The program (:mod:`.program`) gives each of ``units`` units
``max(6, ceil(32 / units), ceil(24 / (units - 1)))`` operations on 2 shared lines (fewer
units, longer programs: about 32 operations per run, 48 at 2 units, whose one peer each
gives an access fewer chances to meet another's); every line changes home a quarter of
the way through.

A run that breaks an invariant (:mod:`.checker`) is shrunk: operations are dropped one at
a time, keeping each drop after which the same seed still breaks one, until no single
drop does (a 1-minimal history, Zeller & Hildebrandt, 'Simplifying and Isolating
Failure-Inducing Input', IEEE TSE 2002).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from supernode.errors import InputError
from supernode.memory.checker import Violation, check
from supernode.memory.program import Op, make_program
from supernode.memory.sim import FAULTS, Record, Run, Timing, simulate
from supernode.spec.resolved import Cluster

LINES = 2
#: Operations per run, spread over the units (at least ``MIN_OPS_PER_UNIT`` each).
OPS_PER_RUN = 32
MIN_OPS_PER_UNIT = 6
#: Each unit's operations times its peers (units - 1) reach at least this: a fault shows
#: only where one unit's access meets another's, and two units have one peer each, so
#: their programs are longer (16 operations each caught 982-987 of 1,000 flow-control
#: runs at 2 units, 24 caught 996-1,000; docs/memory.md). 24 leaves 4 and more units as
#: they were (``OPS_PER_RUN`` limits there).
PEER_OPS = 24
MAX_UNITS = 8
#: Mean operation time in hops (a miss is a round trip plus jitter; half are hits).
MEAN_OP_HOPS = 2.5
MIGRATE_AT = 0.25


@dataclass(frozen=True)
class Verdict:
    """A checked run: consistent or not, what broke, and the minimal failing history."""

    seed: int
    units: int
    fault: str | None
    operations: int
    messages: int
    nacks: int
    violations: list[Violation]
    minimal: list[Record]
    minimal_violations: list[Violation]
    protocol: str = "msi"
    policy: str = "invalidate"

    @property
    def consistent(self) -> bool:
        """True when no invariant broke."""
        return not self.violations

    def as_dict(self) -> dict[str, object]:
        """JSON form (times in seconds)."""
        return {"seed": self.seed, "units": self.units, "protocol": self.protocol,
                "policy": self.policy, "inject": self.fault,
                "consistent": self.consistent, "operations": self.operations,
                "messages": self.messages, "nacks": self.nacks,
                "violations": [v.as_dict() for v in self.violations],
                "minimal_history": [r.__dict__ for r in self.minimal],
                "minimal_violations": [v.as_dict() for v in self.minimal_violations]}


def timing_for(cluster: Cluster | None, line_bytes: int = 128) -> Timing:
    """The simulated fabric of ``cluster``'s scale-up domain (None: the defaults)."""
    if cluster is None:
        return Timing()
    up = cluster.scale_up
    hop = up.link_latency_s if up.link_latency_s > 0 else Timing().hop_s
    bw = up.link_bandwidth_bytes_per_s or cluster.accelerator.memory_bandwidth_bytes_per_s
    return Timing(hop_s=hop, jitter_s=hop / 3, data_s=line_bytes / bw, local_s=hop / 25)


def ops_per_unit(units: int) -> int:
    """Operations each unit runs (module docstring)."""
    return max(MIN_OPS_PER_UNIT, math.ceil(OPS_PER_RUN / units),
               math.ceil(PEER_OPS / max(1, units - 1)))


def check_units(units: int) -> None:
    """InputError unless 2 <= units <= MAX_UNITS."""
    if not 2 <= units <= MAX_UNITS:
        raise InputError("--units", f"must be between 2 and {MAX_UNITS} (units sharing "
                                    f"the lines), got {units}")


def check_fault(fault: str | None) -> None:
    """InputError for an unknown fault name."""
    if fault is not None and fault not in FAULTS:
        raise InputError("--inject", f"{fault!r} is no fault; one of: {', '.join(FAULTS)}")


def run_once(program: list[Op], units: int, seed: int, fault: str | None,
             timing: Timing, protocol: str = "msi", policy: str = "invalidate") -> Run:
    """One simulation of ``program`` under ``protocol`` and write ``policy`` with the
    membership change of the module docstring."""
    migrate = MIGRATE_AT * ops_per_unit(units) * MEAN_OP_HOPS * timing.hop_s
    return simulate(program, units, LINES, seed, fault, timing, migrate, protocol, policy)


def shrink(program: list[Op], units: int, seed: int, fault: str | None,
           timing: Timing, protocol: str = "msi", policy: str = "invalidate"
           ) -> tuple[list[Op], Run]:
    """A 1-minimal sub-program whose run still breaks an invariant (module docstring)."""
    current = list(program)
    run = run_once(current, units, seed, fault, timing, protocol, policy)
    changed = True
    while changed:
        changed = False
        for op in list(current):
            trial = [o for o in current if o.index != op.index]
            trial_run = run_once(trial, units, seed, fault, timing, protocol, policy)
            if check(trial_run):
                current, run, changed = trial, trial_run, True
    return current, run


def check_coherence(seed: int, units: int = 4, fault: str | None = None,
                    cluster: Cluster | None = None, line_bytes: int = 128,
                    minimise: bool = True, protocol: str = "msi",
                    policy: str = "invalidate") -> Verdict:
    """Simulate, check and (when it fails and ``minimise``) shrink one seeded run of the
    directory under ``protocol`` (msi, mesi, moesi) and write ``policy`` (invalidate,
    update)."""
    check_units(units)
    check_fault(fault)
    if seed < 0:
        raise InputError("--seed", f"must be >= 0, got {seed}")
    timing = timing_for(cluster, line_bytes)
    program = make_program(seed, units, ops_per_unit(units), LINES, timing.hop_s)
    run = run_once(program, units, seed, fault, timing, protocol, policy)
    violations = check(run)
    minimal: list[Record] = []
    minimal_violations: list[Violation] = []
    if violations and minimise:
        _, small = shrink(program, units, seed, fault, timing, protocol, policy)
        minimal = sorted(small.history, key=lambda r: r.start)
        minimal_violations = check(small)
    return Verdict(seed, units, fault, len(program), run.messages, run.nacks, violations,
                   minimal, minimal_violations, protocol, policy)

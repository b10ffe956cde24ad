"""The coherence checker's acceptance sweep (issue 28): every injected fault class caught
on >= 99 % of 1,000 seeded runs at every unit count 2..8 under every protocol and write
policy the simulator runs, and no alarm on 10,000 fault-free runs per protocol and policy.

Run: ``.venv/bin/python benchmarks/memory_check_sweep.py [--seeds N] [--clean N]
[--jobs J]`` (defaults 1,000, 10,000, 1). Prints one row per protocol, policy and unit
count (runs caught of ``--seeds`` for each fault), the fault-free alarms, and exits 1 when
a cell is under 99 % or any fault-free run raised an alarm. The whole sweep is about
230,000 runs (~5 min of one core); CI (``tests/test_memory_check.py``) runs a
derandomised subset of it. Figures in docs/memory.md.
"""

from __future__ import annotations

import argparse
import sys
import time
from concurrent.futures import ProcessPoolExecutor

from supernode.memory.consistency import MAX_UNITS, check_coherence
from supernode.memory.sim import FAULTS, POLICIES, PROTOCOLS

#: The acceptance line: caught on this share of the seeded runs or more.
TARGET = 0.99


def _caught(args: tuple[str, str, int, str, int]) -> int:
    protocol, policy, units, fault, seeds = args
    return sum(not check_coherence(s, units, fault, minimise=False, protocol=protocol,
                                   policy=policy).consistent for s in range(seeds))


def _alarms(args: tuple[str, str, int]) -> list[int]:
    protocol, policy, runs = args
    return [s for s in range(runs) if not check_coherence(
        s, 2 + s % (MAX_UNITS - 1), None, minimise=False, protocol=protocol,
        policy=policy).consistent]


def main(argv: list[str]) -> int:
    """Run the sweep; 0 when every cell meets the target, else 1."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=1000)
    parser.add_argument("--clean", type=int, default=10_000)
    parser.add_argument("--jobs", type=int, default=1)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    cells = [(p, q, u, f, args.seeds) for p in PROTOCOLS for q in POLICIES
             for u in range(2, MAX_UNITS + 1) for f in FAULTS]
    kinds = [(p, q) for p in PROTOCOLS for q in POLICIES]
    clean = [(p, q, args.clean) for p, q in kinds]
    if args.jobs > 1:
        with ProcessPoolExecutor(args.jobs) as pool:
            caught = list(pool.map(_caught, cells))
            alarms = list(pool.map(_alarms, clean))
    else:
        caught, alarms = [_caught(c) for c in cells], [_alarms(c) for c in clean]
    ok = True
    print(f"caught of {args.seeds} seeded runs: " + ", ".join(FAULTS))
    for i in range(0, len(cells), len(FAULTS)):
        protocol, policy, units = cells[i][:3]
        row = caught[i:i + len(FAULTS)]
        low = [c for c in row if c < TARGET * args.seeds]
        ok = ok and not low
        print(f"{protocol:6s} {policy:10s} {units} units  "
              + "  ".join(f"{c:5d}" for c in row) + ("  BELOW 99 %" if low else ""))
    for (protocol, policy), found in zip(kinds, alarms, strict=True):
        ok = ok and not found
        print(f"{protocol:6s} {policy:10s} fault-free: {len(found)} alarm(s) in "
              f"{args.clean} runs (2-{MAX_UNITS} units) {found[:10]}")
    print(f"{time.perf_counter() - start:.0f} s wall, {args.jobs} job(s)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

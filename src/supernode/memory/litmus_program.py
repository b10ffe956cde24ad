"""Litmus tests of a machine's shared memory: message passing, store buffering, IRIW.

Written by ``supernode memory litmus --out DIR``; run it on the machine under test with
``python3 litmus.py [--iterations N] [--out FILE]`` (Python >= 3.8, standard library
only) and read the results back with ``supernode import litmus FILE``. Each test runs its
threads as processes over one block of shared memory (``multiprocessing.shared_memory``),
releases them together at a barrier every iteration and counts the outcomes
(Alglave et al., 'Herding cats', TOPLAS 2014, for the tests and the outcomes each memory
model allows):

* MP (message passing): P0 writes x=1 then y=1; P1 reads y then x. Outcome r0=1, r1=0
  (the flag seen before the data) is forbidden under sequential consistency and x86-TSO,
  allowed on Arm and POWER without barriers.
* SB (store buffering): P0 writes x=1 reads y; P1 writes y=1 reads x. Outcome r0=0, r1=0
  is forbidden under sequential consistency, allowed under TSO (store buffers).
* IRIW (independent reads of independent writes): P0 writes x, P1 writes y, P2 reads x
  then y, P3 reads y then x. Outcome (1, 0, 1, 0) - the readers disagree on the order of
  the writes - is forbidden on multi-copy-atomic machines (x86, Armv8), allowed on POWER.

Python's interpreter puts microseconds between two accesses, so relaxed outcomes are rare
here; a run that sees none shows no violation at this speed, not that the machine is
sequentially consistent. The JSON it writes says so.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import platform
import struct
import sys
import time
from multiprocessing import shared_memory

SCHEMA = "supernode-litmus/1"
SLOT = 8  # bytes per shared variable (one aligned 64-bit word)

# name: (variables, results, programs, outcome forbidden under SC)
# A program is a list of ("w", var, value) and ("r", var, result slot).
TESTS = {
    "MP": (2, 2, [[("w", 0, 1), ("w", 1, 1)], [("r", 1, 0), ("r", 0, 1)]], (1, 0)),
    "SB": (2, 2, [[("w", 0, 1), ("r", 1, 0)], [("w", 1, 1), ("r", 0, 1)]], (0, 0)),
    "IRIW": (2, 4, [[("w", 0, 1)], [("w", 1, 1)], [("r", 0, 0), ("r", 1, 1)],
                    [("r", 1, 2), ("r", 0, 3)]], (1, 0, 1, 0)),
}


def _worker(name: str, shm_name: str, program: list, iterations: int, start, done) -> None:
    """One thread of a test: every iteration wait at ``start``, run, wait at ``done``."""
    shm = shared_memory.SharedMemory(name=shm_name)
    buf = shm.buf
    assert buf is not None
    variables = TESTS[name][0]
    try:
        for _ in range(iterations):
            start.wait()
            for op, var, arg in program:
                if op == "w":
                    struct.pack_into("q", buf, var * SLOT, arg)
                else:
                    value = struct.unpack_from("q", buf, var * SLOT)[0]
                    struct.pack_into("q", buf, (variables + arg) * SLOT, value)
            done.wait()
    finally:
        del buf
        shm.close()


def run_test(name: str, iterations: int) -> dict:
    """Run one litmus test ``iterations`` times; the outcome counts."""
    variables, results, programs, forbidden = TESTS[name]
    size = (variables + results) * SLOT
    shm = shared_memory.SharedMemory(create=True, size=size)
    start = mp.Barrier(len(programs) + 1)
    done = mp.Barrier(len(programs) + 1)
    procs = [mp.Process(target=_worker, args=(name, shm.name, p, iterations, start, done))
             for p in programs]
    counts: dict[str, int] = {}
    buf = shm.buf
    assert buf is not None
    began = time.perf_counter()
    try:
        for proc in procs:
            proc.start()
        for _ in range(iterations):
            buf[:size] = bytes(size)
            start.wait()
            done.wait()
            outcome = tuple(struct.unpack_from("q", buf, (variables + i) * SLOT)[0]
                            for i in range(results))
            key = ",".join(f"r{i}={v}" for i, v in enumerate(outcome))
            counts[key] = counts.get(key, 0) + 1
        for proc in procs:
            proc.join(timeout=30)
    finally:
        for proc in procs:
            if proc.is_alive():
                proc.terminate()
        del buf
        shm.close()
        shm.unlink()
    key = ",".join(f"r{i}={v}" for i, v in enumerate(forbidden))
    return {"iterations": iterations, "outcomes": dict(sorted(counts.items())),
            "sc_forbidden": key, "sc_forbidden_seen": counts.get(key, 0),
            "seconds": time.perf_counter() - began}


def main(argv: list[str] | None = None) -> int:
    """Run every test; write the JSON results (``--out``, default litmus-results.json)."""
    parser = argparse.ArgumentParser(description="Shared-memory litmus tests (MP, SB, IRIW).")
    parser.add_argument("--iterations", type=int, default=2000)
    parser.add_argument("--out", default="litmus-results.json")
    args = parser.parse_args(argv)
    if args.iterations < 1:
        parser.error("--iterations must be >= 1")
    tests = {name: run_test(name, args.iterations) for name in TESTS}
    result = {"schema": SCHEMA, "machine": platform.machine(), "system": platform.system(),
              "python": platform.python_version(), "variant": "cpu-python-processes",
              "iterations": args.iterations, "tests": tests,
              "note": "interpreter-speed accesses: relaxed outcomes are rare; none seen is "
                      "no proof of sequential consistency"}
    with open(args.out, "w", encoding="utf-8") as handle:
        json.dump(result, handle, indent=1, sort_keys=True)
        handle.write("\n")
    for name, test in tests.items():
        print(f"{name}: {test['outcomes']} (SC-forbidden {test['sc_forbidden']}: "
              f"{test['sc_forbidden_seen']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())

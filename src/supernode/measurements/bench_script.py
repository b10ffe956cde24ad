"""A bench plan as a bash script (mpirun or srun), and as plain data.

The script writes one log per run into ``$OUT`` (default ``results``), with
``NCCL_DEBUG=INFO`` limited to the ``INIT,ENV,NET`` subsystems so that ``compare`` also
learns the rings, the network, NVLS availability and any variable set in the
environment. Host files are given by environment variables named in the script
(``HOSTS_ONE_DOMAIN``, ``HOSTS_TWO_DOMAINS``, ``HOSTS_ACROSS_<TIER>``): which hosts sit in
one domain or under one leaf is the site's knowledge, not the toolkit's.
"""

from __future__ import annotations

import shlex
from typing import Any

from supernode.errors import InputError
from supernode.measurements.bench_plan import BenchRun
from supernode.textsafe import comment_safe

LAUNCHERS = ("mpirun", "srun")
DEBUG_ENV = {"NCCL_DEBUG": "INFO", "NCCL_DEBUG_SUBSYS": "INIT,ENV,NET"}


def size_argument(value: int) -> str:
    """nccl-tests size syntax: ``8``, ``64K``, ``2G`` (binary units)."""
    for suffix, scale in (("G", 2**30), ("M", 2**20), ("K", 2**10)):
        if value >= scale and value % scale == 0:
            return f"{value // scale}{suffix}"
    return str(value)


def run_arguments(run: BenchRun, iters: int) -> list[str]:
    """nccl-tests arguments of one run."""
    return ["-b", size_argument(run.min_bytes), "-e", size_argument(run.max_bytes),
            "-f", "4", "-g", "1", "-n", str(iters), "-w", "5"]


def _launch(run: BenchRun, launcher: str, iters: int, index: int) -> str:
    log = f'"$OUT/{index:02d}-{run.name}.log"'
    program = f'"$NCCL_TESTS/{run.program}"'
    args = " ".join(run_arguments(run, iters))
    hosts = f'"${{HOSTS_{run.hostfile.upper()}:?host file: {run.hosts_hint}}}"'
    if launcher == "mpirun":
        env = " ".join(f"-x {k}={shlex.quote(v)}" for k, v in DEBUG_ENV.items())
        split = f" -x NCCL_TESTS_SPLIT={shlex.quote(run.split)}" if run.split else ""
        return (f"mpirun -np {run.processes} -N {run.ranks_per_host} --hostfile {hosts} "
                f"{env}{split} {program} {args} > {log} 2>&1")
    split = f"NCCL_TESTS_SPLIT={shlex.quote(run.split)} " if run.split else ""
    return (f"{split}srun --nodes={run.hosts} --ntasks-per-node={run.ranks_per_host} "
            f"--nodefile={hosts} --mpi=pmix {program} {args} > {log} 2>&1")


def render_script(runs: list[BenchRun], cluster: str, *, launcher: str = "mpirun",
                  iters: int = 20) -> str:
    """The plan as a bash script (see the module docstring)."""
    if launcher not in LAUNCHERS:
        raise InputError("--launcher", f"one of {', '.join(LAUNCHERS)}")
    if not 1 <= iters <= 10_000:
        raise InputError("--iters", "between 1 and 10,000")
    cluster = comment_safe(cluster)  # comments only: a newline would start a command
    lines = ["#!/usr/bin/env bash",
             f"# supernode bench-plan for {cluster}: {len(runs)} nccl-tests runs that pin the "
             "model's parameters.",
             "# Set the HOSTS_* host files, run this script, then compare with the model:",
             f"#   supernode compare --cluster {cluster} \"$OUT\"/*.log --fail-below 0.9",
             "set -euo pipefail",
             'NCCL_TESTS="${NCCL_TESTS:-./build}"',
             'OUT="${OUT:-results}"',
             'mkdir -p "$OUT"']
    if launcher == "srun":
        lines += [f"export {k}={shlex.quote(v)}" for k, v in DEBUG_ENV.items()]
    for index, run in enumerate(runs, start=1):
        lines += ["", f"# {index:02d} {comment_safe(run.name)}: {comment_safe(run.why)}",
                  f"#    {run.processes} ranks on {run.hosts} host(s), {run.ranks_per_host} per "
                  f"host ({run.hosts_hint})" + (f"; {run.group_ranks}-rank groups "
                                                f"({run.split})" if run.split else ""),
                  f"#    pins: {', '.join(run.pins) if run.pins else 'nothing new (a check)'}",
                  _launch(run, launcher, iters, index)]
    return "\n".join(lines) + "\n"


def plan_dict(runs: list[BenchRun], cluster: str, launcher: str, iters: int) -> dict[str, Any]:
    """The plan as plain data (``bench-plan --json``)."""
    return {"cluster": cluster, "launcher": launcher, "iters": iters, "runs": [{
        "name": r.name, "op": r.op, "program": r.program, "processes": r.processes,
        "hosts": r.hosts, "ranks_per_host": r.ranks_per_host, "group_ranks": r.group_ranks,
        "nccl_tests_split": r.split, "min_bytes": r.min_bytes, "max_bytes": r.max_bytes,
        "tier": r.tier, "pins": list(r.pins), "hosts_hint": r.hosts_hint,
        "hostfile_variable": f"HOSTS_{r.hostfile.upper()}", "why": r.why,
        "arguments": run_arguments(r, iters),
        "command": _launch(r, launcher, iters, i)} for i, r in enumerate(runs, start=1)]}

"""The CLI commands that reproduce the review's figures, one per stage that has figures.

Every figure the report shows comes from a stage that a command of its own also runs on
the same inputs: the topology (``topology``), the reviewed plan's estimate (``estimate``),
its simulation (``simulate``), the facility (``facility``: power, cooling, floor, cabling
and the power-cap trade, by the function the stage calls), the memory section's judged
figures (``memory map``: one-way latencies, the farthest tier, the streaming link load),
reliability (``reliability``), the scheduling replay (``schedule --trace
design-replay``), the exported topology files (``export``), the monitoring pack
(``monitor rules``) and the rules' findings and verdict (``check``, which runs the same
review as a CI gate: it exits 1 when an error-severity rule fails). The review writes the
plan it reviewed, every knob resolved, as ``reviewed-plan.yaml`` in the report folder, so
the commands (run from that folder) review the same plan; each entry names the
``results.json`` key paths its command reproduces and the command's ``--json`` key that
holds each (``""``: the whole document; ``None`` where the figure is checked by the files
the command writes). ``results.json`` -> ``reproduce``; the report prints each command
beside its section, and tests/test_design_report.py runs them.

What has no command of its own would be said so (``stages_without_command``): since issue
26 every stage with figures has one, so the list is empty (validation has no figures). A
review run with ``--calibration`` prints the commands whose figures the file changes with
the same file (:func:`with_calibration`).
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from supernode.spec.plan import ParallelPlan

#: The plan file the review writes beside the report (see the module doc).
REVIEWED_PLAN_FILE = "reviewed-plan.yaml"
#: Folder (inside the report folder) the file-writing commands write into, so that their
#: files can be compared with the review's (``exports/``, ``monitoring/``) by hash.
REPRODUCED_FOLDER = "reproduced"
#: Stages whose figures no command but ``design``/``check`` computes (none: see the
#: module doc).
STAGES_WITHOUT_COMMAND: tuple[str, ...] = ()
#: ``results.json`` -> ``facility`` keys: the facility report's and the power-cap trade,
#: each the same key of ``supernode facility --json``.
FACILITY_FIGURES = ("racks", "power", "feeds", "distribution", "energy", "cooling", "floor",
                    "cabling", "facility_stated", "notes", "power_cap")
#: ``results.json`` -> ``memory`` keys besides its source: ``supernode memory map --json``
#: -> ``review`` holds each (:func:`supernode.memory.judged.judged_figures`).
MEMORY_FIGURES = ("mapping", "interleave_bytes", "line_bytes", "protocol", "policy",
                  "global_bytes", "kinds", "paths", "remote", "assumed")


def reviewed_plan_document(plan: ParallelPlan, order: tuple[str, ...]) -> dict[str, Any]:
    """The reviewed plan as a plan document: every field that is set, and the rank order
    (innermost first) the review placed it with (a given plan's own order kept)."""
    data = {k: v for k, v in plan.model_dump().items() if v is not None}
    data.setdefault("rank_order", "-".join(order))
    return data


def _command(*parts: Any) -> str:
    return " ".join(shlex.quote(str(p)) for p in parts)


def _entry(stage: str, section: str, command: str,
           figures: list[tuple[str, str | None]]) -> dict[str, Any]:
    """One ``reproduce.commands`` entry: the figures as (results key path, command
    ``--json`` key path or None for a file compared by hash)."""
    return {"stage": stage, "section": section, "command": command,
            "figures": [{"results": r, "command_json": c} for r, c in figures]}


def reproduce_commands(inputs: dict[str, Any], plan_document: dict[str, Any] | None,
                       simulated: bool,
                       reliability_runs: int, reliability_days: float,
                       recovery: str, scheduled: bool, policies: list[str],
                       files: list[dict[str, Any]], shapes: str = "uniform-tp",
                       memory: bool = False) -> dict[str, Any]:
    """``results.json`` -> ``reproduce``: per stage, the command (run from the report
    folder) and the figures it reproduces as (results key path, command ``--json`` key
    path) pairs (see the module doc). ``inputs``: the review's inputs (``plan``, ``rules``,
    ``simulate`` and ``global_batch`` as given, None or absent when not); ``memory``: the
    review has a memory section."""
    cluster, workload, seed = inputs["cluster"], inputs["workload"], inputs["seed"]
    job = ("--cluster", cluster, "--workload", workload)
    export_rows: dict[str, list[int]] = {}
    for i, row in enumerate(files):
        if row["group"] == "exports":
            export_rows.setdefault(row["format"], []).append(i)
    export_formats = list(export_rows)
    monitoring_rows = [i for i, row in enumerate(files) if row["group"] == "monitoring"]
    entries: list[dict[str, Any]] = []

    def add(stage: str, section: str, command: str, figures: list[tuple[str, str | None]]):
        entries.append(_entry(stage, section, command, figures))

    add("topology", "cluster", _command("supernode", "topology", cluster, "--json"),
        [("topology", "")])
    if plan_document is not None:
        add("plan", "plans", _command("supernode", "estimate", *job, "--plan",
                                      REVIEWED_PLAN_FILE, "--json"),
            [("reviewed_plan/step_time_s", "step_time_s"),
             ("reviewed_plan/tokens_per_s", "tokens_per_s"),
             ("reviewed_plan/mfu", "mfu"),
             ("reviewed_plan/memory_per_gpu_bytes", "memory_per_gpu_bytes/total")])
        if simulated:
            add("simulate", "simulation", _command(
                "supernode", "simulate", *job, "--plan", REVIEWED_PLAN_FILE, "--seed", seed,
                "--json"), [("simulation/step_time_s", "step_time_s")])
    facility_job = (*job, "--plan", REVIEWED_PLAN_FILE,
                    *(("--simulate", "--seed", seed) if simulated else ())
                    ) if plan_document is not None else ("--cluster", cluster)
    add("facility", "facility", _command("supernode", "facility", *facility_job, "--json"),
        [(f"facility/{k}", k) for k in FACILITY_FIGURES])
    if memory:
        add("memory", "memory", _command("supernode", "memory", "map", "--cluster", cluster,
                                         "--json"),
            [(f"memory/{k}", f"review/{k}") for k in MEMORY_FIGURES])
    if plan_document is not None:
        add("reliability", "reliability", _command(
            "supernode", "reliability", *job, "--plan", REVIEWED_PLAN_FILE, "--seed", seed,
            "--runs", reliability_runs, "--days", f"{reliability_days:g}",
            "--recovery", recovery, "--json"),
            [(f"reliability/{k}", k) for k in (
                "interruptions/interruptions_per_day", "checkpoint/daly_interval_s",
                "goodput/analytic", "goodput/monte_carlo/goodput/mean")])
    if scheduled:
        add("scheduling", "scheduling", _command(
            "supernode", "schedule", "--cluster", cluster, "--trace", "design-replay",
            *[x for p in policies for x in ("--policy", p)], "--shapes", shapes,
            "--seed", seed, "--json"),
            [(f"scheduling/schedule/policies/{i}/{k}", f"policies/{i}/{k}")
             for i in range(len(policies))
             for k in ("utilisation", "tp_crossing_share", "mean_queue_s")])
    for fmt in export_formats:  # one folder per format, as the review writes them
        add("artefacts", "artefacts", _command(
            "supernode", "export", "--cluster", cluster, "--format", fmt,
            "--out", f"{REPRODUCED_FOLDER}/exports/{fmt}"),
            [(f"artefacts/files/{i}/sha256", None) for i in export_rows.get(fmt, [])])
    if monitoring_rows:
        add("artefacts", "monitoring", _command(
            "supernode", "monitor", "rules", "--cluster", cluster, "--prometheus-major",
            inputs["prometheus_major"], "--out", f"{REPRODUCED_FOLDER}/monitoring"),
            [(f"artefacts/files/{i}/sha256", None) for i in monitoring_rows])
    add("rules", "findings", _check_command(inputs), [("verdict", "verdict"),
                                                       ("findings", "findings")])
    return {"plan_file": REVIEWED_PLAN_FILE if plan_document is not None else None,
            "plan_document": plan_document,
            "run_from": "the report folder", "commands": entries,
            "stages_without_command": list(STAGES_WITHOUT_COMMAND)}


#: Stages whose commands cost collectives or step times, so that a ``--calibration`` file
#: changes their figures: each carries the review's file (:func:`with_calibration`).
CALIBRATED_STAGES = ("plan", "serving", "simulate", "facility", "reliability", "rules")


def with_calibration(reproduce: dict[str, Any], path: str | Path) -> dict[str, Any]:
    """``reproduce`` of a review run with ``--calibration path``: every command of
    :data:`CALIBRATED_STAGES` gets ``--calibration`` with the file's absolute path (before
    its final ``--json``), so it runs with the efficiencies the review ran with; the
    others (topology, memory, scheduling, exported files) do not cost collectives."""
    file = str(Path(path).resolve())
    commands = []
    for entry in reproduce["commands"]:
        if entry["stage"] in CALIBRATED_STAGES:
            argv = shlex.split(entry["command"])
            at = len(argv) - 1 if argv[-1] == "--json" else len(argv)
            entry = {**entry, "command": _command(*argv[:at], "--calibration", file,
                                                  *argv[at:])}
        commands.append(entry)
    return {**reproduce, "commands": commands}


def _check_command(inputs: dict[str, Any]) -> str:
    """``check`` on the review's own inputs: its plan file and rule pack as given, the
    simulation on or off, the seed and the global batch (exit 1 when an error-severity
    rule fails, as the review's verdict says)."""
    parts: list[Any] = ["supernode", "check", "--cluster", inputs["cluster"], "--workload",
                        inputs["workload"]]
    if inputs.get("plan"):
        parts += ["--plan", inputs["plan"]]
    if inputs.get("rules") not in (None, "default"):
        parts += ["--rules", inputs["rules"]]
    if not inputs.get("simulate", True):
        parts.append("--no-simulate")
    if not inputs.get("schedule", True):
        parts.append("--no-schedule")
    if inputs.get("global_batch") is not None:
        parts += ["--global-batch", inputs["global_batch"]]
    return _command(*parts, "--seed", inputs["seed"], "--json")


def _absolute(source: str) -> str:
    """A file argument as an absolute path (the commands run from the report folder); a
    preset name unchanged."""
    path = Path(source)
    return str(path.resolve()) if path.is_file() else source


def design_reproduce(data: dict[str, Any], plan: ParallelPlan | None,
                     order: tuple[str, ...], policies: list[str], shapes: str,
                     global_batch: int | None = None) -> dict[str, Any]:
    """``results.json`` -> ``reproduce`` of a review whose results are ``data`` (inputs,
    simulation, memory, scheduling and artefacts set), reviewing ``plan`` placed in
    ``order``; the replay ran ``policies`` with job shapes ``shapes``; ``global_batch``:
    the review's ``--global-batch`` (None: the default)."""
    inputs = dict(data["inputs"])
    for key in ("cluster", "workload", "plan", "rules"):
        if inputs.get(key) not in (None, "default"):
            inputs[key] = _absolute(inputs[key])
    inputs["global_batch"] = global_batch
    document = (reviewed_plan_document(plan, order)
                if plan is not None and data.get("reviewed_plan") else None)
    files = (data.get("artefacts") or {}).get("files", [])
    extra = [_serving_command(data["serving"], inputs)] if data.get("serving") else []
    recovery = (data.get("reliability") or {}).get("recovery", {}).get("policy", "restart")
    out = reproduce_commands(inputs, document, data.get("simulation") is not None,
                             inputs["reliability_runs"], inputs["reliability_days"],
                             recovery, data.get("scheduling") is not None, policies, files,
                             shapes, data.get("memory") is not None)
    at = next((i + 1 for i, c in enumerate(out["commands"]) if c["stage"] == "plan"), 1)
    out["commands"][at:at] = extra  # beside the plans, as the report orders its sections
    return out


def _serving_command(serving: dict[str, Any], inputs: dict[str, Any]) -> dict[str, Any]:
    """``fit --serve`` with the review's GPUs, sizes and prices: the serving section."""
    rows = serving["sizes"]
    sizes = ",".join(str(r["scale_up_size"]) for r in rows)
    command = _command("supernode", "fit", "--workload", inputs["workload"], "--cluster",
                       inputs["cluster"], "--gpus", serving["gpus"], "--sizes", sizes,
                       "--serve", _absolute(serving["serve_file"]),
                       "--price-per-gpu-hour", repr(rows[0]["price_per_gpu_hour_usd"]),
                       "--supernode-premium", repr(serving["supernode_premium"]), "--json")
    keys = ("output_tokens_per_s_per_gpu", "tpot_ms", "decode_comm_share")
    figures: list[tuple[str, str | None]] = [
        (f"serving/sizes/{i}/{k}", f"sizes/{i}/{k}")
        for i, r in enumerate(rows) if r["feasible"] for k in keys]
    figures.append(("serving/questions/verdict", "questions/verdict"))
    return _entry("serving", "serving", command, figures)

"""The CLI commands that reproduce the review's figures, one per stage that has a command.

Every figure the report shows comes from a stage that a command of its own also runs on
the same inputs: the reviewed plan's estimate (``estimate``), its simulation (``simulate``),
reliability (``reliability``), the scheduling replay (``schedule --trace design-replay``),
the exported topology files (``export``) and the monitoring pack (``monitor rules``). The
review writes the plan it reviewed, every knob resolved, as ``reviewed-plan.yaml`` in the
report folder, so the commands (run from that folder) review the same plan; each entry
names the ``results.json`` key paths its command reproduces and the command's ``--json``
key that holds each (``None`` where the figure is checked by the files the command
writes). ``results.json`` -> ``reproduce``; the report prints each command beside its
section, and tests/test_design_reproduce.py runs them.

What has no command of its own is said so (``stages_without_command``): the memory
section's judged figures (one-way latencies, the streaming link load: ``supernode memory``
prints the model they come from, not them), the facility stage (power, cooling, floor) and
the rules run only inside ``design``/``check``.
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
#: Stages whose figures no command but ``design``/``check`` computes.
STAGES_WITHOUT_COMMAND = ("memory", "facility", "rules")


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
                       files: list[dict[str, Any]], shapes: str = "uniform-tp"
                       ) -> dict[str, Any]:
    """``results.json`` -> ``reproduce``: per stage, the command (run from the report
    folder) and the figures it reproduces as (results key path, command ``--json`` key
    path) pairs (see the module doc)."""
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
    return {"plan_file": REVIEWED_PLAN_FILE if plan_document is not None else None,
            "plan_document": plan_document,
            "run_from": "the report folder", "commands": entries,
            "stages_without_command": list(STAGES_WITHOUT_COMMAND)}


def _absolute(source: str) -> str:
    """A file argument as an absolute path (the commands run from the report folder); a
    preset name unchanged."""
    path = Path(source)
    return str(path.resolve()) if path.is_file() else source


def design_reproduce(data: dict[str, Any], plan: ParallelPlan | None,
                     order: tuple[str, ...], policies: list[str], shapes: str
                     ) -> dict[str, Any]:
    """``results.json`` -> ``reproduce`` of a review whose results are ``data`` (inputs,
    simulation, scheduling and artefacts set), reviewing ``plan`` placed in ``order``;
    the replay ran ``policies`` with job shapes ``shapes``."""
    inputs = dict(data["inputs"])
    inputs["cluster"], inputs["workload"] = (_absolute(inputs["cluster"]),
                                             _absolute(inputs["workload"]))
    document = (reviewed_plan_document(plan, order)
                if plan is not None and data.get("reviewed_plan") else None)
    files = (data.get("artefacts") or {}).get("files", [])
    extra = [_serving_command(data["serving"], inputs)] if data.get("serving") else []
    recovery = (data.get("reliability") or {}).get("recovery", {}).get("policy", "restart")
    out = reproduce_commands(inputs, document, data.get("simulation") is not None,
                             inputs["reliability_runs"], inputs["reliability_days"],
                             recovery, data.get("scheduling") is not None, policies, files,
                             shapes)
    out["commands"][1:1] = extra  # beside the plans, as the report orders its sections
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

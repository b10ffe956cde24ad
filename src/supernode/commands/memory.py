"""``supernode memory [map|check|litmus]``: the supernode's global address space.

``map`` (the default) prints the global map of one supernode (each unit kind's range and
layout), the translation tables against a working set, the latency and bandwidth of every
access tier and the cost of one accelerator leaving, failing or joining
(:func:`supernode.memory.model.memory_model`). ``check`` runs one seeded simulation of the
directory protocol on the cluster's fabric with ``--units`` units sharing two lines
(optionally with an ``--inject``-ed fault) and checks its history: exit 0 when consistent,
exit 1 with the verdict and the minimal failing history
(:func:`supernode.memory.consistency.check_coherence`). ``place`` optimises the homes of a
seeded KV-cache access matrix on the domain and shows the traffic saved against
interleaving (:mod:`supernode.memory.placement`). ``litmus`` writes the litmus-test
program (message passing, store buffering, IRIW) to ``--out`` for a real machine
(:mod:`supernode.memory.litmus`). ``published`` compares the model with published
figures of real coherent fabrics (:mod:`supernode.memory.published`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.table import Table

from supernode.commands import app
from supernode.commands._output import handles_input_errors, print_json, stdout
from supernode.errors import InputError
from supernode.textsafe import rich_safe

if TYPE_CHECKING:
    from supernode.memory.model import MemoryModel

ACTIONS = ("map", "check", "place", "litmus", "published")


def _size(n: float) -> str:
    """Bytes in the binary unit that reads best."""
    for unit, scale in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n:.0f} B"


def _map(cluster_name: str, working_set_gbyte: float | None, json_output: bool) -> None:
    from supernode.cluster.load import load_cluster
    from supernode.memory.judged import judged_figures
    from supernode.memory.model import memory_model

    model = memory_model(load_cluster(cluster_name),
                         None if working_set_gbyte is None else working_set_gbyte * 1e9)
    review = judged_figures(model)
    if json_output:
        print_json({**model.as_dict(), "coherence": _coherence_table(model, True),
                    "review": review})
        return
    spec = model.spec
    stdout.print(f"{rich_safe(model.cluster)}: one global space of {_size(model.global_bytes)}"
                 f" per supernode, {spec.mapping} ({_size(spec.interleave_bytes)} granules),"
                 f" {spec.line_bytes} B lines, {spec.protocol.upper()} {spec.policy}",
                 highlight=False)
    table = Table(title="global address map", title_justify="left")
    for col in ("kind", "part", "units", "per unit", "start", "end", "layout"):
        table.add_column(col, justify="left" if col in ("kind", "part", "layout") else "right")
    for r in model.regions:
        table.add_row(r.role, rich_safe(r.name), str(r.units), _size(r.unit_bytes),
                      f"{r.start:#x}", f"{r.end:#x}", r.layout)
    stdout.print(table)
    table = Table(title="remote access (round trip, one-way message latency, sustained per "
                        "direction)",
                  title_justify="left")
    for col in ("from", "to", "tier", "hops", "latency ns", "one-way ns", "GB/s"):
        table.add_column(col, justify="left" if col in ("from", "to", "tier") else "right")
    for p, judged in zip(model.paths, review["paths"], strict=True):
        table.add_row(rich_safe(p.requester), rich_safe(p.target), p.tier, str(p.hops),
                      f"{p.latency_s * 1e9:.0f}", f"{judged['one_way_s'] * 1e9:.0f}",
                      f"{p.bandwidth_bytes_per_s / 1e9:.0f}")
    stdout.print(table)
    _remote_line(review["remote"])
    for role, t in model.translations.items():
        stdout.print(f"translation ({role}): {t.entries:,} entries x {_size(t.page_bytes)} "
                     f"reach {_size(t.reach_bytes)}; full map {t.full_map_entries:,} entries "
                     f"({_size(t.full_map_bytes)}); miss rate {t.miss_rate:.1%} for a "
                     f"{_size(t.working_set_bytes)} working set", highlight=False)
    for c in model.churn:
        stdout.print(f"{c.change} one accelerator: {_size(c.moved_bytes)} to move, "
                     f"{c.seconds * 1e3:.3g} ms on the fabric ({c.how}; "
                     f"{model.as_dict()['used_fraction']:.0%} of memory in use)",
                     highlight=False)
    _coherence_table(model, json_output=False)
    assumed = [a for k in model.kinds for a in k.assumed]
    if assumed:
        stdout.print(f"assumed (no public source): {', '.join(assumed)}", highlight=False)


def _remote_line(far: dict[str, object] | None) -> None:
    """The farthest remote tier and the streaming link load, as the review judges them
    (:func:`supernode.memory.judged.farthest_remote`; nothing without a remote tier)."""
    if far is None:
        return
    f = {k: float(v) for k, v in far.items() if isinstance(v, int | float)}
    stdout.print(f"farthest remote tier {far['tier']}: {f['one_way_s'] * 1e9:.0f} ns one-way "
                 f"({f['round_trip_s'] * 1e9:.0f} ns round trip), "
                 f"{f['bandwidth_bytes_per_s'] / 1e9:.0f} GB/s against "
                 f"{f['local_bandwidth_bytes_per_s'] / 1e9:.0f} GB/s local (ratio "
                 f"{f['bandwidth_ratio']:.3g}); a unit streaming through the map reaches "
                 f"{f['remote_share']:.0%} of it remotely, link load "
                 f"{f['stream_link_load']:.0%}", highlight=False)


def _coherence_table(model: MemoryModel, json_output: bool) -> list[dict[str, object]]:
    """Messages and traffic per access for 2/4/8 sharers on the nearest remote tier."""
    from supernode.memory.coherence import sharing_cost
    from supernode.memory.defaults import fabric_defaults

    acc = model.kinds[0].name
    remote = [p for p in model.paths if p.requester == acc and p.target == acc
              and p.tier != "local"]
    if not remote:
        return []
    tier = remote[0]
    one_way = tier.latency_s / 2
    rows = []
    for sharers in (2, 4, 8):
        for policy in ("invalidate", "update"):
            cost = sharing_cost(sharers, 0.3, model.spec.line_bytes, 1 << 16, 0.0,
                                model.spec.protocol, policy, one_way,
                                int(fabric_defaults()["header_bytes"]), 1e6, 5000, 0)
            rows.append({"tier": tier.tier, "policy": policy, **cost.as_dict()})
    if json_output:
        return rows
    table = Table(title=f"coherence per access ({model.spec.protocol.upper()}, 30% writes,"
                        f" 64 KiB shared, {tier.tier} tier, 1 M accesses/s)",
                  title_justify="left")
    for col in ("sharers", "policy", "msgs/access", "msgs/write", "B/access", "wait ns",
                "MB/s"):
        table.add_column(col, justify="left" if col == "policy" else "right")
    for r in rows:
        table.add_row(str(r["sharers"]), str(r["policy"]), f"{r['messages_per_access']:.2f}",
                      f"{r['messages_per_write']:.2f}", f"{r['bytes_per_access']:.0f}",
                      f"{float(r['latency_s_per_access']) * 1e9:.0f}",  # type: ignore[arg-type]
                      f"{float(r['bandwidth_bytes_per_s']) / 1e6:.0f}")  # type: ignore[arg-type]
    stdout.print(table)
    return rows


def _place(cluster_name: str, seed: int, json_output: bool) -> None:
    from supernode.cluster.load import load_cluster
    from supernode.memory.placement import cost_matrix, kv_cache_example, optimise

    cluster = load_cluster(cluster_name)
    units = max(2, min(16, cluster.scale_up.size))
    group = max(1, min(units, cluster.scale_up.group_size
                       if cluster.scale_up.switch_tiers == 2 else units))
    pages = 4 * units
    reads, writes, distance = kv_cache_example(units, pages, seed, group)
    placed = optimise(cost_matrix(reads, writes, distance), capacity=pages // units + 1)
    if json_output:
        print_json({"units": units, "pages": pages, "group": group, "seed": seed,
                    **placed.as_dict()})
        return
    stdout.print(f"{units} units ({group} per switch group), {pages} KV-cache pages (seeded "
                 f"access matrix, seed {seed}): interleaved {placed.baseline_cost / 1e9:.3g}"
                 f" GB-hops/s, optimised {placed.cost / 1e9:.3g} GB-hops/s of remote and "
                 f"coherence traffic: {placed.saving:.1%} saved", highlight=False)


def _published(json_output: bool) -> None:
    from supernode.memory.published import comparisons

    rows = comparisons()
    if json_output:
        print_json({"figures": [r.as_dict() for r in rows]})
        return
    table = Table(title="memory model vs published figures", title_justify="left")
    for col in ("fabric", "metric", "published", "model", "error", "ok"):
        table.add_column(col, justify="right" if col in ("model", "error") else "left")
    for r in rows:
        table.add_row(r.fabric, r.metric, r.published, f"{r.model:.3g}",
                      "-" if r.error is None else f"{r.error:+.1%}",
                      "yes" if r.within else f"no: {r.note}")
    stdout.print(table)


def _check(cluster_name: str, seed: int, inject: str | None, units: int,
           json_output: bool) -> None:
    from supernode.cluster.load import load_cluster
    from supernode.memory.consistency import check_coherence, check_fault, check_units
    from supernode.memory.units import memory_spec

    check_units(units)
    check_fault(inject)
    cluster = load_cluster(cluster_name)
    spec = memory_spec(cluster)
    verdict = check_coherence(seed, units, inject, cluster, spec.line_bytes,
                              protocol=spec.protocol, policy=spec.policy)
    if json_output:
        print_json(verdict.as_dict())
    else:
        what = f"inject {inject}" if inject else "no fault injected"
        stdout.print(f"seed {seed}, {units} units, 2 shared lines, "
                     f"{spec.protocol.upper()}"
                     f"{' update' if spec.policy == 'update' else ''}, {what}: "
                     f"{verdict.operations} operations, {verdict.messages} messages, "
                     f"{verdict.nacks} NACKs (fenced epoch)", highlight=False)
        if verdict.consistent:
            held = "SWMR, data-value" if spec.policy == "invalidate" else "data-value"
            stdout.print(f"consistent: {held} and per-line linearizability hold",
                         highlight=False)
        else:
            kinds = sorted({v.kind for v in verdict.violations})
            stdout.print(f"INCONSISTENT: {len(verdict.violations)} violation(s) "
                         f"({', '.join(kinds)}); first: {verdict.violations[0].detail}",
                         highlight=False)
            stdout.print(f"minimal failing history ({len(verdict.minimal)} operations):",
                         highlight=False)
            for r in verdict.minimal:
                end = "never" if r.end is None else f"{r.end * 1e9:.0f}"
                op = f"write {r.value}" if r.kind == "w" else f"read -> {r.value}"
                stdout.print(f"  unit {r.unit}  #{r.index:<3} line {r.line}  {op:<14} "
                             f"[{r.start * 1e9:.0f}, {end}] ns", highlight=False)
            for v in verdict.minimal_violations[:3]:
                stdout.print(f"  {v.kind}: {v.detail}", highlight=False)
    if not verdict.consistent:
        raise typer.Exit(code=1)


@app.command("memory")
@handles_input_errors
def memory_command(
    action: str = typer.Argument("map", help="What to do: map|check|place|litmus|published."),
    cluster: str = typer.Option(None, "--cluster", help="Cluster file or preset name "
                                "(map, check)."),
    seed: int = typer.Option(0, "--seed", help="Seed of the simulated run (check) or of "
                             "the access matrix (place)."),
    inject: str = typer.Option(None, "--inject", help="Fault to inject (check): "
                               "lost-invalidation|delayed-invalidation|stale-map|"
                               "flow-control."),
    units: int = typer.Option(4, "--units", help="Units sharing the lines (check), 2-8."),
    working_set_gbyte: float = typer.Option(None, "--working-set-gbyte", help="Working "
                                            "set per unit in GB for the translation miss "
                                            "rate (map; default: the unit's memory)."),
    out: Path = typer.Option(None, "--out", help="Folder to write the litmus program "
                             "into (litmus)."),
    json_output: bool = typer.Option(False, "--json", help="Print JSON only."),
) -> None:
    """Global address map, remote access per tier, coherence check and litmus tests."""
    if action not in ACTIONS:
        raise InputError("ACTION", f"{action!r}: one of {', '.join(ACTIONS)}")
    if action == "published":
        _published(json_output)
        return
    if action == "litmus":
        if out is None:
            raise InputError("--out", "required: the folder to write the litmus program "
                                      "into, e.g. --out litmus")
        from supernode.memory.litmus import write_litmus

        files = write_litmus(out)
        if json_output:
            print_json({"folder": str(out), "files": files})
        else:
            where = rich_safe(str(out))
            stdout.print(f"wrote {', '.join(files)} to {where}; on the machine run "
                         f"`python3 {where}/litmus.py --out {where}/litmus-results.json`, "
                         f"then `supernode import litmus {where}/litmus-results.json`",
                         highlight=False)
        return
    if cluster is None:
        raise InputError("--cluster", f"required for {action}: a cluster file or preset "
                                      "name, e.g. --cluster gb200-nvl72")
    if action == "map":
        _map(cluster, working_set_gbyte, json_output)
    elif action == "place":
        _place(cluster, seed, json_output)
    else:
        _check(cluster, seed, inject, units, json_output)

"""Documents for the fuzz suite: seeds from the package's presets and the repository's
examples, and their mutations.

A mutation deletes, renames or replaces a field (with a hostile value: a number at a float
or integer limit, a huge format pattern), pushes a number to an extreme (a count of 1e9,
a rate of 1e-320), scales one by 1e9 (a unit slip), adds an unknown key or duplicates a
list item; the text is then written as YAML or JSON and sometimes damaged (truncated, a
key doubled, garbage, a BOM, binary, empty) or attacked in its structure (nested past
the limit, a list past the node limit, YAML tags: :mod:`fuzz_formats`). Seeds include
monitoring configs (one-host and other degenerate ones), a cluster with a
``reliability`` block and failure files that take down whole tiers. Sweep seeds
are the example sweeps rebased onto the 8-GPU ``hgx-h100`` and cut to two values per axis,
so that one case plans a few variants, not dozens.
"""

from __future__ import annotations

import copy
import json
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml
from fuzz_formats import structural
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "src" / "supernode" / "data"
EXAMPLES = ROOT / "examples"

HOSTILE_VALUES: list[Any] = [None, True, False, 0, -1, 1, 2, 7, 2**31, 2**62, 10**30, 2**63,
                             2**31 - 1, 2**53 + 1, 2**63 - 1, 2**64, -(2**63) - 1,
                             1e308, -1e-300, 1e-320, 5e-324, 0.5, "x", "", "[/]", "$x^$",
                             "a\nb", "²", "0-10000000000", "1e30", "a" * 300, [], {}, [1, 2],
                             {"a": 1}, 400_000_000_000, "inf", "-inf", "1e999", "NaN",
                             "{host:.999999999f}", "{host:>999999}", "{x}", "{", "9" * 400,
                             "x\ntouch PWNED\n#", "a\ninjected: 1\n#", "<script>*x*</script>",
                             "[l](j) `c` |t|"]

#: Extremes a number of a document is pushed to (valid types, absurd sizes).
EXTREMES: list[Any] = [0, 1, 3, 10**9, 2**40, 2**62, 2**63 - 1, 1e-300, 1e-320, 1e-9, 0.5,
                       1e9, 1e300, 1e308]

#: Monitoring configs (``monitor rules --config``): each part of the defaults changed,
#: and degenerate ones (one host, one rack, no CDU grouping).
MONITOR_SEEDS: list[Any] = [
    {}, {"hostnames": ["a"]}, {"hostnames": [f"h{i}" for i in range(18)]},
    {"names": {"host": "{cluster}-{host:04d}", "rack": "r{rack1}"}},
    {"layout": {"hosts_per_rack": 1, "hosts_per_power_shelf": 1, "racks_per_cdu": 1}},
    {"thresholds": {"gpu_sm_active_low_ratio": 0.5, "baseline_window_s": 86_400,
                    "correlation_min_units": 2}},
    {"link_ber": {"window_s": 600, "trend_factor": 2}},
    {"disabled_rules": ["GpuCommunicationBottleneck"], "labels": {"host": "Hostname"}}]
#: A cluster's ``reliability`` block (added to a small preset).
RELIABILITY_BLOCK = {"failures_per_unit_year": {"gpu": 0.05}, "repair_h": {"gpu": 24},
                     "spare_hosts": 1, "hot_standby_share": 0.1,
                     "checkpoint_write_gbyte_per_s": 10, "checkpoint_mode": "async",
                     "recovery": "restart"}
#: Failure specs that take down whole tiers (every switch, every leaf, every spine).
TIER_FAILURES = ["switch:*/*/*", "switch:*/*", "switch:leaf/*", "switch:spine/*",
                 "switch:scale_up_l1/*/*"]

def _load(path: Path) -> Any:
    text = path.read_text(encoding="utf-8")
    return json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)


def _small_sweep(doc: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(doc)
    out["base"] = {**out["base"], "cluster": "hgx-h100", "workload": "llama3-8b",
                   "gpus": None, "global_batch": None}
    if "axes" in out:
        out["axes"] = {k: v[:2] for k, v in out["axes"].items()
                       if not k.startswith("scale_up") and k != "workload"} or \
            {"plan.global_batch": [64, 128]}
    if "variants" in out:
        out["variants"] = [{k: v for k, v in var.items() if not k.startswith("workload")}
                           for var in out["variants"][:2]]
        out["variants"] = [v for v in out["variants"] if v] or [{"plan.global_batch": 64}]
    return out


@lru_cache(maxsize=1)
def seeds() -> dict[str, list[Any]]:
    """Seed documents per kind (parsed data, or text for ``topo``)."""
    clusters = [_load(p) for p in sorted((DATA / "clusters").glob("*.yaml"))]
    clusters += [_load(p) for p in sorted(EXAMPLES.glob("*.yaml"))]
    clusters.append({**_load(DATA / "clusters" / "hgx-h100.yaml"),
                     "reliability": RELIABILITY_BLOCK})
    validation = _load(DATA / "validation" / "public.json")
    cases = validation["cases"]
    return {
        "cluster": clusters,
        "workload": [_load(p) for p in sorted((DATA / "workloads").glob("*.yaml"))],
        "plan": [{"tp": 8, "pp": 1, "global_batch_sequences": 64},
                 {"tp": 4, "pp": 2, "dp": 1, "global_batch_sequences": 32,
                  "recompute": "selective", "zero_stage": 1},
                 {"tp": 2, "cp": 2, "global_batch_sequences": 16, "micro_batch": 2}],
        "placement": [_load(EXAMPLES / "netsim" / "two-jobs.yaml"),
                      {"jobs": [{"name": "a", "accelerators": "0-3",
                                 "plan": {"tp": 4, "global_batch_sequences": 8}},
                                {"name": "b", "accelerators": [4, 5, 6, 7],
                                 "workload": "llama3-8b",
                                 "plan": {"tp": 2, "global_batch_sequences": 8}}]}],
        "traffic": [_load(EXAMPLES / "netsim" / "rings-burst.yaml")] + 2 * [
                    {"collectives": [
                        {"name": "ar", "op": "all_reduce", "message_bytes": 2**24,
                         "accelerators": "0-7"},
                        {"name": "a2a", "op": "all_to_all", "message_bytes": 2**20,
                         "accelerators": [0, 1, 2, 3], "after": ["ar"], "repeat": 2}]}],
        "failures": [_load(EXAMPLES / "netsim" / "failures.yaml"),
                     {"failures": ["switch:scale_up_l1/0/1",
                                   "slow:link:acc/0-scale_up_l1/0/0:0.5"]},
                     {"failures": TIER_FAILURES[:2]}, {"failures": TIER_FAILURES[2:]}],
        "monitor": MONITOR_SEEDS,
        "sweep": [_small_sweep(_load(p)) for p in sorted((EXAMPLES / "sweeps").glob("*.yaml"))],
        "validation": [{**validation, "cases": cases[i:i + 2]} for i in (0, 10, 30, 50)],
        "topo": [(DATA / "samples" / "nvidia-smi-topo-m_8xB300.txt").read_text()],
    }


def _paths(node: Any, prefix: tuple = ()) -> list[tuple]:
    """Every path (tuple of keys/indices) into a parsed document, the root first."""
    out = [prefix]
    if isinstance(node, dict):
        for key, value in node.items():
            out += _paths(value, (*prefix, key))
    elif isinstance(node, list):
        for i, value in enumerate(node[:20]):
            out += _paths(value, (*prefix, i))
    return out


def _get(node: Any, path: tuple) -> Any:
    for part in path:
        node = node[part]
    return node


@st.composite
def mutated(draw: st.DrawFn, kind: str, hostile: bool) -> Any:
    """A seed document of ``kind``; with 1-3 mutations when ``hostile``."""
    doc = copy.deepcopy(draw(st.sampled_from(seeds()[kind])))
    if isinstance(doc, str):
        return _mutated_text(draw, doc) if hostile else doc
    for _ in range(draw(st.integers(1, 3)) if hostile else 0):
        paths = _paths(doc)
        path = draw(st.sampled_from(paths))
        if not path:
            continue
        parent, key = _get(doc, path[:-1]), path[-1]
        numbers = [p for p in paths if p and isinstance(_get(doc, p), int | float)
                   and not isinstance(_get(doc, p), bool)]
        if numbers and draw(st.booleans()):  # a number pushed to an extreme (a count of
            path = draw(st.sampled_from(numbers))  # 1e9 switch chips, a 1e-300 Gb/s NIC)
            _get(doc, path[:-1])[path[-1]] = draw(st.sampled_from(EXTREMES))
            continue
        how = draw(st.sampled_from(["delete", "replace", "replace", "scale", "rename",
                                    "extra", "duplicate"]))
        if how == "delete":
            del parent[key]
        elif how == "replace":
            parent[key] = draw(st.sampled_from(HOSTILE_VALUES))
        elif how == "scale" and isinstance(parent[key], int | float) \
                and not isinstance(parent[key], bool):
            parent[key] = parent[key] * draw(st.sampled_from([1e9, 1e-9, -1, 0]))
        elif how == "rename" and isinstance(parent, dict):
            parent[f"{key}x"] = parent.pop(key)
        elif how == "extra" and isinstance(parent, dict):
            parent[draw(st.sampled_from(["extra", "[/]", "$x$", "a" * 300]))] = 1
        elif how == "duplicate" and isinstance(parent, list):
            parent.append(copy.deepcopy(parent[key]))
    return doc


def _mutated_text(draw: st.DrawFn, text: str) -> str:
    """A text seed (nvidia-smi output) with one line dropped, doubled or garbled."""
    lines = text.splitlines()
    i = draw(st.integers(0, len(lines) - 1))
    how = draw(st.sampled_from(["drop", "double", "garble", "tabs"]))
    if how == "drop":
        del lines[i]
    elif how == "double":
        lines.insert(i, lines[i])
    elif how == "garble":
        lines[i] = lines[i].replace("NV", draw(st.sampled_from(["NV99999999999", "X", "NV²",
                                                                "[/]", "$x$"])))
    else:
        lines[i] = lines[i].replace("\t", " ")
    return "\n".join(lines) + "\n"


@st.composite
def document_text(draw: st.DrawFn, kind: str, hostile: bool) -> tuple[str, bytes]:
    """(file suffix, bytes) of a document, as YAML or JSON; mutated and sometimes damaged
    when ``hostile``."""
    doc = draw(mutated(kind, hostile))
    if isinstance(doc, str):
        suffix, text = ".txt", doc
    elif draw(st.booleans()):
        suffix, text = ".json", json.dumps(doc, indent=1)
    else:
        suffix, text = ".yaml", yaml.safe_dump(doc, sort_keys=False, allow_unicode=True)
    damage = draw(st.sampled_from(["none"] * 4 + ["truncate", "garbage", "dupkey",
                                                   "bom", "binary", "empty", "structure"])) \
        if hostile else "none"
    if damage == "truncate":
        text = text[: draw(st.integers(0, max(len(text) - 1, 0)))]
    elif damage == "garbage":
        text += draw(st.sampled_from(["\x00", "\x07", "{[", ": :", "&a [*a]", "\t- x"]))
    elif damage == "dupkey" and suffix == ".json" and text.startswith("{"):
        text = '{"name": "a", ' + text[1:] if '"name"' in text else text
    elif damage == "dupkey" and suffix == ".yaml":
        first = text.split("\n", 1)[0]
        text = f"{first}\n{text}"
    elif damage == "bom":
        text = "\ufeff" + text
    elif damage == "empty":
        text = ""
    elif damage == "structure":
        text = draw(structural(suffix, text))
    data = text.encode("utf-8", "surrogatepass")
    if damage == "binary":
        data = bytes(range(256)) + data[:100]
    return suffix, data

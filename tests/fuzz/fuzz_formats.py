"""Hostile inputs beyond mutated YAML/JSON fields: NCCL topology XML, job trace CSVs, and
attacks on the structure of every format.

* **XML** (``import nccl-xml``): a real topology nested deeper than the reader's limit
  (up to a 1 MB chain), made wide (tens of thousands of elements), with integer
  attributes beyond 64 bits or float range, hex, negative or not numbers, a DOCTYPE or
  entity, truncated or garbled.
* **Traces** (``schedule --trace``): Alibaba-style pod traces with fractional
  ``gpu_milli`` (the cluster counts a fractional GPU as one), Philly and supernode
  traces; hostile ones with cells at float and integer limits, blank and duplicated
  rows, short rows, a bad header.
* **Structure** (every YAML/JSON document): nesting deeper than the limit, a list wider
  than the node limit, YAML tags (``!!bool maybe``, ``!!binary``, ``!!python/object``).
"""

from __future__ import annotations

import datetime as dt
import json
import random
import re
from pathlib import Path

from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[2]
XML_SEED = (ROOT / "tests" / "data" / "exports" / "nccl-topo-dgx-h100.xml").read_text()

#: Numbers at and past the limits of floats and integers, as text.
EDGE_NUMBERS = ["1e-320", "4.9e-324", "2.2250738585072014e-308", "1e308",
                "1.7976931348623157e308", "-1e308", "1e999", "inf", "-inf", "+inf",
                "Infinity", "NaN", str(2**31 - 1), str(2**31), str(2**53), str(2**53 + 1),
                str(2**63 - 1), str(2**63), str(2**64), str(-(2**63) - 1), "9" * 400]
#: YAML tags a value may carry (only ``!!str`` and ``!`` are kept by the loader).
YAML_TAGS = ["!!bool", "!!int", "!!float", "!!binary", "!!set", "!!timestamp", "!!null",
             "!!python/object:os.system", "!custom", "!!map", "!!seq", "!!str", "!"]


@st.composite
def xml_text(draw: st.DrawFn, hostile: bool) -> tuple[str, bytes]:
    """(suffix, bytes) of an NCCL topology XML; attacked when ``hostile``."""
    text = XML_SEED
    if not hostile:
        return ".xml", text.encode()
    how = draw(st.sampled_from(["deep", "deep", "wide", "number", "number", "number",
                                "entity", "truncate", "garbage", "empty"]))
    if how == "deep":
        depth = draw(st.sampled_from([60, 65, 1000, 90_000]))
        chain = "<pci>" * depth + "</pci>" * depth
        text = text.replace("</cpu>", chain + "</cpu>", 1)
    elif how == "wide":
        count = draw(st.sampled_from([5_000, 60_000]))
        text = text.replace("</cpu>", "<pci/>" * count + "</cpu>", 1)
    elif how == "number":
        attr = draw(st.sampled_from(["dev", "sm", "numaid", "speed", "count", "link_width"]))
        value = draw(st.sampled_from(EDGE_NUMBERS + ["-1", "0x" + "f" * 30, "", "x"]))
        text = re.sub(rf'{attr}="[^"]*"', f'{attr}="{value}"', text,
                      count=draw(st.sampled_from([1, 0])))
    elif how == "entity":
        text = ('<!DOCTYPE system [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;">]>\n'
                + text.replace('arch="x86_64"', 'arch="&b;"', 1))
    elif how == "truncate":
        text = text[: draw(st.integers(0, len(text) - 1))]
    elif how == "garbage":
        text += draw(st.sampled_from(["<", "</system>", "\x00", "<system/>"]))
    else:
        text = '<system version="1"/>'
    return ".xml", text.encode()


ALIBABA_HEADER = ("name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,"
                  "creation_time,deletion_time,scheduled_time")
PHILLY_HEADER = "timestamp,duration,num_gpus,gpu_time,cluster"
PHILLY_START = dt.datetime(2017, 10, 1)
SUPERNODE_HEADER = "submit_s,duration_s,gpus,priority"


def _rows(kind: str, count: int, rng: random.Random) -> list[list[str]]:
    rows, t = [], 0
    for i in range(count):
        t += rng.choice([0, 0, 60, 3600, 427_061])
        duration = rng.choice([60, 3600, 86_400, 12_000_000])
        if kind == "alibaba":
            gpus = rng.choice([0, 1, 1, 1, 2, 8])
            milli = rng.choice([1000, 460, 250, 100, 999]) if gpus == 1 else 1000
            rows.append([f"pod-{i:05d}", "6000", "12288", str(gpus), str(milli), "",
                         rng.choice(["LS", "BE", "Burstable", "Guaranteed", ""]), "Running",
                         str(t), str(t + duration), str(t)])
        elif kind == "philly":
            gpus = rng.choice([1, 2, 4, 8, 16])
            when = PHILLY_START + dt.timedelta(seconds=t)
            rows.append([when.strftime("%Y-%m-%d %H:%M:%S"), str(duration), str(gpus),
                         str(gpus * duration), "0"])
        else:
            rows.append([str(t), str(duration), str(rng.choice([1, 4, 8, 64])),
                         str(rng.choice([0, 1]))])
    return rows


@st.composite
def trace_text(draw: st.DrawFn, hostile: bool) -> tuple[str, bytes]:
    """(suffix, bytes) of a job trace CSV (fractional-GPU pods mostly); attacked when
    ``hostile``: a cell at a number limit, blank, duplicated or short rows, a bad header."""
    kind = draw(st.sampled_from(["alibaba", "alibaba", "philly", "supernode"]))
    header = {"alibaba": ALIBABA_HEADER, "philly": PHILLY_HEADER,
              "supernode": SUPERNODE_HEADER}[kind]
    rows = _rows(kind, draw(st.integers(1, 150)), random.Random(draw(st.integers(0, 999))))
    lines = [header] + [",".join(r) for r in rows]
    for _ in range(draw(st.integers(1, 3)) if hostile else 0):
        how = draw(st.sampled_from(["cell", "cell", "cell", "blank", "duplicate", "short",
                                    "header"]))
        i = draw(st.integers(1, len(lines) - 1))
        if how == "cell":
            cells = lines[i].split(",")
            j = draw(st.integers(0, len(cells) - 1))
            cells[j] = draw(st.sampled_from(EDGE_NUMBERS + ["-1", "", "x", "0"]))
            lines[i] = ",".join(cells)
        elif how == "blank":
            lines.insert(i, "")
        elif how == "duplicate":
            lines += [lines[i]] * draw(st.sampled_from([1, 500]))
        elif how == "short":
            lines[i] = lines[i].rsplit(",", 2)[0]
        else:
            lines[0] = lines[0].replace("num_gpu", "num_gpux").replace("duration", "dur")
    return ".csv", ("\n".join(lines) + "\n").encode()


def deep_json(depth: int, mapping: bool) -> str:
    """A JSON value nested ``depth`` levels (lists or mappings)."""
    return ('{"a": ' * depth + "1" + "}" * depth) if mapping else \
        ("[" * depth + "1" + "]" * depth)


@st.composite
def structural(draw: st.DrawFn, suffix: str, text: str) -> str:
    """``text`` (a YAML or JSON document) attacked in its structure: nested past the
    limit, a list past the node limit, or (YAML) a tagged value or a tagged document."""
    how = draw(st.sampled_from(["deep", "wide", "tag", "tag", "tagdoc"]))
    if how == "deep":
        nested = deep_json(draw(st.sampled_from([99, 101, 5000])), draw(st.booleans()))
        return text.rstrip()[:-1] + f', "zz": {nested}}}' \
            if suffix == ".json" and text.rstrip().endswith("}") else f"zz: {nested}\n" + text
    if how == "wide":
        wide = json.dumps([0] * draw(st.sampled_from([1000, 250_000])))
        return text.rstrip()[:-1] + f', "zz": {wide}}}' \
            if suffix == ".json" and text.rstrip().endswith("}") else f"zz: {wide}\n" + text
    if suffix == ".json":
        return text
    tag = draw(st.sampled_from(YAML_TAGS))
    if how == "tagdoc":
        return f"{tag} maybe\n"
    lines = text.splitlines()
    values = [i for i, line in enumerate(lines) if ": " in line]
    if not values:
        return f"{tag} {text}"
    i = draw(st.sampled_from(values))
    key, _, value = lines[i].partition(": ")
    lines[i] = f"{key}: {tag} {value}"
    return "\n".join(lines) + "\n"

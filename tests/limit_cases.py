"""Inputs just past each documented size limit (docs/limits.md), and what the refusal says.

Shared by ``tests/test_limits.py`` (each is refused: exit 2, one line naming the limit)
and ``benchmarks/limits_bench.py`` (each is refused in a fresh process within 2 s).
A case is ``(name, argv, files, fragment)``: ``files`` maps a file name to its content
(text or bytes; ``"fifo"`` and ``"sparse:N"`` make a FIFO or an N-byte sparse file), and
``fragment`` is text the one error line must hold (the limit, as the docs print it).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import yaml

DATA = Path(__file__).resolve().parents[1] / "src" / "supernode" / "data"
SU = (DATA / "clusters" / "dgx-h100-superpod-su.yaml").read_text(encoding="utf-8")
HGX = (DATA / "clusters" / "hgx-h100.yaml").read_text(encoding="utf-8")
TOPO = (DATA / "samples" / "nvidia-smi-topo-m_8xB300.txt").read_text(encoding="utf-8")


def _dump(data: Any) -> str:
    return yaml.safe_dump(data, sort_keys=False)


BIG_1M = (SU.replace("supernodes: 32", "supernodes: 131072").replace("tiers: 2", "tiers: 3")
          .replace("switch: quantum2-qm9700", "switch: quantum-x800-q3400\n  "
                   "oversubscription: [3, 1]"))
C100K = (SU.replace("supernodes: 32", "supernodes: 12500").replace("tiers: 2", "tiers: 3")
         .replace("switch: quantum2-qm9700", "switch: tomahawk5-400g"))
SIM = ["simulate", "--cluster", "hgx-h100", "--workload", "llama3-8b", "--quiet"]


Limit = tuple[str, list[str], dict[str, Any], str]


def cases() -> list[Limit]:
    """Every limit case (see the module docstring)."""
    return _document_cases() + _command_cases()


def _document_cases() -> list[Limit]:
    """Limits of input files and documents, every command."""
    many_keys = SU + "extras:\n" + "".join(f"  k{i}: {i}\n" for i in range(120_000))
    json_doc = yaml.safe_load(SU)
    json_doc["extras"] = {f"k{i}": i for i in range(120_000)}
    laughs = SU.replace("description: >-", "description: [" + ", ".join(
        [f"&a{i} [" + ", ".join([f"*a{i - 1}" if i else "x"] * 9) + "]"
         for i in range(9)]) + "]\nnotes: >-")
    workload = {"name": "w", "layers": 2, "hidden": 1024, "heads": 8, "vocab": 1000,
                "seq_len": 1024}
    return [
        ("file bytes", ["topology", "big.yaml"], {"big.yaml": "sparse:16777217"},
         "the limit is 16,777,216"),
        ("YAML nodes", ["topology", "many.yaml"], {"many.yaml": many_keys},
         "the limit is 200,000"),
        ("JSON nodes", ["topology", "many.json"], {"many.json": json.dumps(json_doc)},
         "the limit is 200,000"),
        ("YAML aliases", ["topology", "bomb.yaml"], {"bomb.yaml": laughs},
         "aliases expanded"),
        ("nesting", ["topology", "deep.yaml"], {"deep.yaml": "a: " + "[" * 5000 + "]" * 5000},
         "more than 100 levels"),
        ("integer size", ["plan", "--cluster", "hgx-h100", "--workload", "w.yaml"],
         {"w.yaml": _dump({**workload, "ffn_hidden": 10**30})},
         "at most 9,223,372,036,854,775,807"),
        ("name bytes", ["topology", "a" * 256 + ".yaml"], {}, "255 bytes per name"),
        ("device input", ["topology", "/dev/zero"], {}, "not a regular file"),
        ("FIFO input", ["topology", "fifo.yaml"], {"fifo.yaml": "fifo"},
         "not a regular file"),
        ("unit slip", ["topology", "bits.yaml"],
         {"bits.yaml": SU.replace("speed_gbit_per_s: 400", "speed_gbit_per_s: 400000000000")},
         "0.001..100,000 Gb/s"),
        ("cluster accelerators", ["topology", "c.yaml"],
         {"c.yaml": SU.replace("supernodes: 32", "supernodes: 200000")}, "1,048,576"),
    ]


def _command_cases() -> list[Limit]:
    """Limits of one command each."""
    workload = {"name": "w", "layers": 2, "hidden": 1024, "heads": 8, "vocab": 1000,
                "seq_len": 1024}
    return [
        ("workload width", ["plan", "--cluster", "hgx-h100", "--workload", "w.yaml"],
         {"w.yaml": _dump({**workload, "ffn_hidden": 2**23})}, "4194304"),
        ("plan dimension", ["estimate", "--cluster", "hgx-h100", "--workload", "llama3-8b",
                            "--tp", str(2**20 + 1), "--global-batch", "8"], {}, "1048576"),
        ("global batch", ["estimate", "--cluster", "hgx-h100", "--workload", "llama3-8b",
                          "--global-batch", str(2**31 + 1)], {}, "2147483648"),
        ("price", ["plan", "--cluster", "hgx-h100", "--workload", "llama3-8b",
                   "--price-per-gpu-hour", "1e5"], {}, "10,000"),
        ("simulated accelerators", ["simulate", "--cluster", "big.yaml", "--workload",
                                    "llama3-8b", "--tp", "8", "--global-batch", "8192"],
         {"big.yaml": BIG_1M}, "at most 131,072"),
        ("all-to-all flows", ["simulate", "--cluster", "c.yaml", "--traffic", "t.yaml"],
         {"c.yaml": C100K, "t.yaml": _dump({"collectives": [
             {"name": "a2a", "op": "all_to_all", "message_bytes": 1e6,
              "accelerators": "0-99999"}]})}, "limit is 2,097,152"),
        ("iteration passes", [*SIM, "--tp", "8", "--global-batch", str(2**31)], {},
         "limit is 200,000"),
        ("step phases", ["simulate", "--cluster", "dgx-h100-superpod-su", "--traffic",
                         "t.yaml", "--mode", "step"],
         {"t.yaml": _dump({"collectives": [{"name": "ar", "op": "all_reduce",
                                            "message_bytes": 1e6, "accelerators": "0-255",
                                            "repeat": 10_000}]})}, "limit is 1,000,000"),
        ("ranges", [*SIM, "--placement", "p.yaml"],
         {"p.yaml": _dump({"jobs": [{"accelerators": "0-10000000000"}]})},
         "off the cluster (indices 0..7)"),
        ("traffic message", ["simulate", "--cluster", "hgx-h100", "--traffic", "t.yaml"],
         {"t.yaml": _dump({"collectives": [{"name": "a", "op": "all_reduce",
                                            "message_bytes": 2**41, "accelerators": "0-7"}]})},
         "1099511627776"),
        ("traffic repeat", ["simulate", "--cluster", "hgx-h100", "--traffic", "t.yaml"],
         {"t.yaml": _dump({"collectives": [{"name": "a", "op": "all_reduce",
                                            "message_bytes": 1e6, "accelerators": "0-7",
                                            "repeat": 10_001}]})}, "10000"),
        ("sweep variants", ["sweep", "s.yaml"],
         {"s.yaml": _dump({"name": "s", "base": {"cluster": "hgx-h100",
                                                 "workload": "llama3-8b"},
                           "axes": {"plan.global_batch": list(range(1, 102)),
                                    "plan.gpus": list(range(1, 101))}})},
         "at most 10,000"),
        ("sweep workers", ["sweep", "s.yaml", "--workers", "257"], {}, "256"),
        ("fit sizes", ["fit", "--cluster", "hgx-h100", "--workload", "llama3-8b", "--sizes",
                       ",".join(str(i) for i in range(1, 66))], {}, "at most 64"),
        ("collective sizes", ["collective", "--cluster", "hgx-h100", "--sizes",
                              ",".join(["1M"] * 1001)], {}, "at most 1,000"),
        ("collective message", ["collective", "--cluster", "hgx-h100", "--sizes", "2048G"], {},
         "1 TiB"),
        ("sized cards", ["size", "--workload", "llama3-8b", "--tokens", "1e20", "--days",
                         "1"], {}, "1,048,576"),
        ("nvidia-smi text", ["import", "nvidia-smi-topo", "topo.txt", "--accelerator",
                             "gb300"], {"topo.txt": TOPO + "x" * 2**20}, "1,048,576"),
        *_later_command_cases(),
    ]


def _later_command_cases() -> list[Limit]:
    """Limits of the commands added after the fuzz suite (docs/limits.md, per command)."""
    rel = ["reliability", "--cluster", "hgx-h100", "--workload", "llama3-8b"]
    many_results = {f"r{i:03d}.txt": "" for i in range(257)}
    many_snapshots = {f"s{i:05d}.prom": "" for i in range(10_001)}
    return [
        ("reliability days", [*rel, "--days", "3651"], {}, "3,650"),
        ("reliability runs", [*rel, "--runs", "100001"], {}, "100,000"),
        ("trace bytes", ["schedule", "--cluster", "hgx-h100", "--trace", "t.csv"],
         {"t.csv": "sparse:67108865"}, "the limit is 67,108,864"),
        ("results files", ["compare", "--cluster", "hgx-h100", *many_results],
         many_results, "256"),
        ("calibration results files", ["calibrate", "--cluster", "hgx-h100",
                                       *many_results], many_results, "256"),
        ("results bytes together", ["import", "results", "a.txt", "b.txt", "c.txt"],
         {name: "#" * (6 * 2**20) for name in ("a.txt", "b.txt", "c.txt")},
         "16,777,216 bytes together"),
        ("snapshots", ["health", *many_snapshots], many_snapshots, "10,000"),
        ("NCCL XML bytes", ["import", "nccl-xml", "t.xml"], {"t.xml": "sparse:1048577"},
         "1,048,576"),
        ("rule pack bytes", ["check", "--cluster", "hgx-h100", "--workload", "llama3-8b",
                             "--rules", "p.yaml"], {"p.yaml": "sparse:1048577"},
         "1,048,576"),
        ("monitored accelerators", ["monitor", "rules", "--cluster", "big.yaml", "--out",
                                    "pack"], {"big.yaml": BIG_1M}, "262,144"),
        ("bit error rate", ["link", "infiniband-ndr", "--ber", "0.6"], {}, "[0, 0.5]"),
        ("option number", ["link", "infiniband-ndr", "--ber", "1e-320"], {},
         "0 or 1e-30..1e+30"),
        ("option integer", ["reliability", "--cluster", "hgx-h100", "--workload", "llama3-8b",
                            "--seed", str(2**64)], {}, "9,223,372,036,854,775,807"),
        ("option duration", ["reliability", "--cluster", "hgx-h100", "--workload",
                             "llama3-8b", "--interval-s", "1e12"], {}, "315,360,000"),
        ("workers", ["reliability", "--cluster", "hgx-h100", "--workload", "llama3-8b",
                     "--workers", str(2**63 - 1)], {}, "1..256"),
        ("trace jobs", ["schedule", "--cluster", "hgx-h100", "--trace", "synthetic",
                        "--jobs", "1000001"], {}, "1..1,000,000"),
        ("link message", ["link", "infiniband-ndr", "--message-bytes", str(2**40 + 1)], {},
         "1,099,511,627,776"),
        ("XML nesting", ["import", "nccl-xml", "d.xml", "--accelerator", "h100-sxm-80gb"],
         {"d.xml": "<system>" + "<pci>" * 65 + "</pci>" * 65 + "</system>"}, "64 levels"),
        ("XML elements", ["import", "nccl-xml", "w.xml", "--accelerator", "h100-sxm-80gb"],
         {"w.xml": "<system>" + "<a/>" * 100_001 + "</system>"}, "100,000 elements"),
        ("name pattern", ["monitor", "rules", "--cluster", "hgx-h100", "--config", "m.yaml",
                          "--out", "pack"], {"m.yaml": "names:\n  host: '{host:033d}'\n"},
         "limit of 32"),
        ("failure rate", ["reliability", "--cluster", "hgx-h100", "--workload", "llama3-8b",
                          "--rate", "gpu=1e7"], {}, "0..1,000,000"),
    ]


def make_files(folder: Path, files: dict[str, Any]) -> None:
    """Create a case's files in ``folder``."""
    for name, content in files.items():
        path = folder / name
        if content == "fifo":
            os.mkfifo(path)
        elif isinstance(content, str) and content.startswith("sparse:"):
            with path.open("wb") as stream:
                stream.truncate(int(content.split(":")[1]))
        elif isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")

"""Benchmark: one ``supernode estimate`` beside one Calculon ``llm`` run, as whole processes.

Run: ``.venv/bin/python benchmarks/vs_calculon.py [--calculon DIR] [--repeats N]``. Not in
CI and not in ``run_all.py``. Calculon is github.com/calculon-ai/calculon (not the
unrelated PyPI package ``calculon``): ``DIR`` is its checkout (default ``$CALCULON_DIR``,
else ``/tmp/calculon``), and its ``calculon`` script is found next to this interpreter's,
on ``PATH``, or given with ``--exe`` (install it with ``pip install DIR numpy pandas psutil``
in a scratch virtualenv). Without either, the script prints why and exits 0.

Each repeat runs, one after the other (paired, so each pair sees the same load): the
floor ``python -c "import numpy"``, Calculon's README example (Megatron-1T on 3,072 A100),
Calculon on GPT-3 175B over 1,024 A100 (t8 p8 d16, batch 1,536, micro-batch 1, full
recompute, fp16; its ``systems/a100_80g.json``), and ``supernode estimate`` on the same
job (``dgx-a100-selene-like``, ``gpt3-175b``, the same layout, batch, recompute and
precision). Medians; ratios to the floor measured in the same run.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from harness import Case, Measured, machine, measure, num, table

EXE = str(Path(sys.executable).with_name("supernode"))
FLOOR = Case("python -c 'import numpy' (floor)", command=(sys.executable, "-c", "import numpy"))
#: Calculon's execution fields for GPT-3 175B on 1,024 GPUs (its examples/ file's keys).
GPT3_EXECUTION = {
    "num_procs": 1024, "tensor_par": 8, "pipeline_par": 8, "data_par": 16,
    "tensor_par_net": 0, "pipeline_par_net": 1, "data_par_net": 1, "batch_size": 1536,
    "microbatch_size": 1, "datatype": "float16", "fused_activation": True,
    "attention_type": "multihead", "activation_recompute": "full",
    "pipeline_interleaving": 1, "optimizer_sharding": True, "tensor_par_comm_type": "rs_ag",
    "tensor_par_overlap": "none", "seq_par_ag_redo": False, "data_par_overlap": False,
    "weight_offload": False, "activations_offload": False, "optimizer_offload": False,
    "training": True,
}
OURS = (EXE, "estimate", "--cluster", "dgx-a100-selene-like", "--workload", "gpt3-175b",
        "--gpus", "1024", "--tp", "8", "--pp", "8", "--global-batch", "1536",
        "--micro-batch", "1", "--recompute", "full", "--precision", "fp16")


def calculon_exe(given: str | None) -> str | None:
    """Calculon's ``calculon`` script: ``given``, next to this interpreter, or on PATH."""
    if given:
        return given if Path(given).is_file() else None
    beside = Path(sys.executable).with_name("calculon")
    return str(beside) if beside.is_file() else shutil.which("calculon")


def commit(checkout: Path) -> str:
    """The checkout's commit (``COMMIT`` file of an archive, else git), or "unknown"."""
    stamp = checkout / "COMMIT"
    if stamp.is_file():
        return stamp.read_text().strip()
    out = subprocess.run(["git", "-C", str(checkout), "rev-parse", "HEAD"],
                         capture_output=True, text=True, check=False)
    return out.stdout.strip() or "unknown"


def paired(cases: dict[str, Case], repeats: int) -> dict[str, Measured]:
    """Every case once per round, ``repeats`` rounds: each pair runs at the same load."""
    out = {key: Measured(case, []) for key, case in cases.items()}
    for _ in range(max(1, repeats)):
        for key, case in cases.items():
            out[key].runs += measure(case, 1).runs
    return out


def main(argv: list[str] | None = None) -> int:
    """Print the paired table; 0 also when Calculon is missing (with the reason)."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--calculon", default=os.environ.get("CALCULON_DIR", "/tmp/calculon"))
    parser.add_argument("--exe", default=None)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    checkout, exe = Path(args.calculon), calculon_exe(args.exe)
    if exe is None or not (checkout / "models" / "gpt3-175B.json").is_file():
        print(f"skipped: Calculon is not installed (script: {exe or 'not found'}; checkout "
              f"{checkout}: {'found' if checkout.is_dir() else 'missing'}); see the "
              "docstring")
        return 0
    with tempfile.TemporaryDirectory() as folder:
        execution = Path(folder) / "gpt3_1024.json"
        execution.write_text(json.dumps(GPT3_EXECUTION))
        cases = {
            "floor": FLOOR,
            "readme": Case("calculon llm megatron-1T, 3,072 A100 (its README example)",
                           command=(exe, "llm", "models/megatron-1T.json",
                                    "examples/3072_t4_p64_d12_mbs4_full.json",
                                    "systems/a100_80g.json", f"{folder}/readme.json"),
                           cwd=str(checkout)),
            "gpt3": Case("calculon llm gpt3-175B, 1,024 A100 (t8 p8 d16)",
                         command=(exe, "llm", "models/gpt3-175B.json", str(execution),
                                  "systems/a100_80g.json", f"{folder}/gpt3.json"),
                         cwd=str(checkout)),
            "ours": Case("supernode estimate gpt3-175b, 1,024 A100 (t8 p8 d16)",
                         command=OURS),
        }
        m = paired(cases, args.repeats)
    floor = m["floor"].median("wall_s") or float("nan")
    rows = [[x.case.name, num(x.median("wall_s")), num(x.median("cpu_s")),
             f"{(x.median('wall_s') or float('nan')) / floor:.1f}x",
             f"failed ({x.error})" if x.error else "ok"] for x in m.values()]
    print(table(["whole process", "wall s", "CPU s", "x floor", "status"], rows))
    print(f"\nCalculon {commit(checkout)}; floor {num(floor, 3)} s; "
          f"{machine(list(m.values()))}\n")
    return 1 if any(x.error for x in m.values()) else 0


if __name__ == "__main__":
    sys.exit(main())

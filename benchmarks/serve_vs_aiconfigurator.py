"""Benchmark: ``supernode`` against NVIDIA AIConfigurator on the public serving cases.

Run: ``.venv/bin/python benchmarks/serve_vs_aiconfigurator.py [--venv DIR] [--json OUT]``.
Not part of CI. It installs the pip package ``aiconfigurator`` into a scratch virtualenv
(``--venv``, default ``.aic-venv``; created once), then for every ``inference`` case of
``src/supernode/data/validation/public_inference.json`` that both tools can run:

* supernode predicts the case (``supernode.serve.case.predict_serving_case``: it chooses
  the unpublished layout and batch) and is timed around that call;
* AIConfigurator estimates the same deployment (``aiconfigurator.cli.api.cli_estimate``,
  aggregated IFB mode, the layout and batch supernode chose, its silicon database) in a
  fresh process of the scratch venv, timed whole;

and prints measured, both predictions, both errors and both wall times, with the versions.
A case is skipped (with the reason) when its accelerator has no AIConfigurator system, its
architecture no model config in AIConfigurator, or a tool refuses it. The model of a case is
named by the HF config the case's notes cite (``aiconfigurator_core/model_configs/
ORG--NAME_config.json``); no case id is special-cased.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CASES = ROOT / "src" / "supernode" / "data" / "validation" / "public_inference.json"
#: The catalog's accelerators and AIConfigurator's system names (its ``systems/`` YAMLs).
SYSTEMS = {"h100-sxm-80gb": "h100_sxm", "h200-sxm-141gb": "h200_sxm",
           "b200-sxm-180gb": "b200_sxm", "gb200": "gb200"}
#: supernode's precisions as AIConfigurator's quantisation modes (GEMMs, MoE experts, KV).
GEMM_QUANT = {"bf16": "bfloat16", "fp8": "fp8", "fp4": "nvfp4"}
MOE_QUANT = {"bf16": "bfloat16", "fp8": "fp8", "fp4": "nvfp4"}
KV_QUANT = {"bf16": "bfloat16", "fp8": "fp8"}
CONFIG = re.compile(r"model_configs/([A-Za-z0-9_.\-]+?)--([A-Za-z0-9_.\-]+?)_config\.json")

AIC_PROBE = r"""
import json, sys, time
start = time.perf_counter()
from aiconfigurator.cli.api import cli_estimate
a = json.loads(sys.argv[1])
r = cli_estimate(a["model"], a["system"], mode="agg", isl=a["isl"], osl=a["osl"],
                 batch_size=a["batch"], tp_size=a["tp"], pp_size=a["pp"],
                 attention_dp_size=a["dp"], moe_ep_size=a["ep"], moe_tp_size=a["etp"],
                 gemm_quant_mode=a["gemm"], moe_quant_mode=a["moe"],
                 kvcache_quant_mode=a["kv"], fmha_quant_mode=a["fmha"])
raw = {k: v for k, v in (r.raw or {}).items() if isinstance(v, (int, float, str))}
print(json.dumps({"ttft_ms": r.ttft, "tpot_ms": r.tpot, "raw": raw,
                  "seconds": time.perf_counter() - start}))
"""


def scratch_venv(folder: Path) -> Path:
    """The scratch venv's python, with ``aiconfigurator`` installed (created once)."""
    python = folder / "bin" / "python"
    if not python.exists():
        venv.create(folder, with_pip=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", "aiconfigurator"],
                       check=True)
    return python


def aic_version(python: Path) -> str:
    """The installed AIConfigurator's version."""
    out = subprocess.run([str(python), "-c", "from importlib.metadata import version; "
                          "print(version('aiconfigurator'))"], capture_output=True, text=True)
    return out.stdout.strip() or "unknown"


def supernode_version() -> str:
    """The package version and the checkout's commit."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        number = version("supernode")
    except PackageNotFoundError:
        number = "(not installed)"
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    return f"{number} at {commit or 'unknown commit'}"


def model_path(case: dict) -> str | None:
    """The HF model id the case's notes cite for its architecture, or None."""
    found = CONFIG.search(case.get("notes") or "")
    return f"{found.group(1)}/{found.group(2)}" if found else None


def aic_per_gpu(out: dict, batch: int, gpus: int, dp: int) -> float:
    """AIConfigurator's output tokens/s per GPU: its own figure when it gives one, else
    the batch per DP rank over its TPOT."""
    for key, value in out["raw"].items():
        if isinstance(value, (int, float)) and re.search(r"tokens/s/gpu", key, re.I) and \
                "user" not in key.lower():
            return float(value)
    return batch * dp / (out["tpot_ms"] / 1e3) / gpus


def main(argv: list[str] | None = None) -> int:
    """Run both tools on every case both support; print the table."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--venv", default=str(ROOT / ".aic-venv"))
    parser.add_argument("--json", default=None, help="also write the rows here")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT / "src"))
    from supernode.serve.case import UnsupportedServingCase, predict_serving_case, primary_metric

    python = scratch_venv(Path(args.venv))
    rows, skipped = [], []
    for case in json.loads(CASES.read_text())["cases"]:
        metric = primary_metric(case)
        system = SYSTEMS.get(case["system"]["accelerator"])
        model = model_path(case)
        if metric != "output_tokens_per_s_per_gpu" or system is None or model is None:
            skipped.append((case["id"], "no AIConfigurator system or model, or not an "
                                        "output-throughput case"))
            continue
        start = time.perf_counter()
        try:
            figures, detail = predict_serving_case(case)
        except UnsupportedServingCase as exc:
            skipped.append((case["id"], f"supernode: {exc}"))
            continue
        ours_s = time.perf_counter() - start
        chosen = dict(re.findall(r"(tp|pp|dp|ep|batch)=(\d+)", detail))
        kv = re.search(r"kv (bf16|fp8)", detail)
        kv_mode = KV_QUANT[kv.group(1) if kv else "bf16"]
        main = str(case["serving"].get("precision") or "bf16")
        other = "fp8" if case["model"].get("moe") and main == "fp4" else main
        tp, pp, dp, ep = (int(chosen[k]) for k in ("tp", "pp", "dp", "ep"))
        batch = int(chosen["batch"])
        probe = {"model": model, "system": system, "isl": int(case["serving"]["input_tokens"]),
                 "osl": int(case["serving"]["output_tokens"] or 1), "batch": batch, "tp": tp,
                 "pp": pp, "dp": dp, "ep": ep, "etp": max(tp * dp // ep, 1),
                 "gemm": GEMM_QUANT[other], "moe": MOE_QUANT[main], "kv": kv_mode,
                 "fmha": "fp8" if kv_mode == "fp8" else "bfloat16"}
        start = time.perf_counter()
        run = subprocess.run([str(python), "-c", AIC_PROBE, json.dumps(probe)],
                             capture_output=True, text=True, timeout=600)
        aic_s = time.perf_counter() - start
        if run.returncode != 0:
            tail = (run.stderr.strip().splitlines() or ["?"])[-1]
            skipped.append((case["id"], f"aiconfigurator: {tail[:160]}"))
            continue
        out = json.loads(run.stdout.strip().splitlines()[-1])
        gpus_per_instance = tp * pp * dp
        aic = aic_per_gpu(out, batch, gpus_per_instance, dp)
        measured = float(case["measured"][metric])
        rows.append({"id": case["id"], "measured": measured,
                     "supernode": figures[metric], "aiconfigurator": aic,
                     "supernode_error": figures[metric] / measured - 1,
                     "aiconfigurator_error": aic / measured - 1,
                     "supernode_s": ours_s, "aiconfigurator_s": aic_s,
                     "layout": f"tp{tp} pp{pp} dp{dp} ep{ep} batch {batch}"})
    print(f"supernode {supernode_version()}; aiconfigurator {aic_version(python)}\n")
    print("| case | layout | measured tok/s/GPU | supernode | error | s | AIConfigurator "
          "| error | s |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['id']} | {r['layout']} | {r['measured']:,.1f} | {r['supernode']:,.1f} | "
              f"{100 * r['supernode_error']:+.1f}% | {r['supernode_s']:.2f} | "
              f"{r['aiconfigurator']:,.1f} | {100 * r['aiconfigurator_error']:+.1f}% | "
              f"{r['aiconfigurator_s']:.1f} |")
    if rows:
        for tool in ("supernode", "aiconfigurator"):
            mape = sum(abs(r[f"{tool}_error"]) for r in rows) / len(rows)
            print(f"\n{tool}: MAPE {100 * mape:.1f}% on {len(rows)} cases")
    for case_id, why in skipped:
        print(f"skipped {case_id}: {why}")
    if args.json:
        Path(args.json).write_text(json.dumps({"rows": rows, "skipped": skipped}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

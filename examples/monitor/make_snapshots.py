"""Write the example snapshots in dgx-h100-su/: six scrapes, a minute apart, of one DGX H100
SuperPOD scalable unit (the ``dgx-h100-superpod-su`` preset, 32 hosts, 256 GPUs).

What happens in them (the faults ``supernode health`` should find):

* minute 2: GPU 2 of host 0001 retrains an NVLink (recovery counter 0 -> 1);
* minute 3: GPU 5 of host 0003 logs Xid 79 (its DCGM_EXP_XID_ERRORS_TOTAL series
  appears at 1; the last-Xid gauge changes 0 -> 79);
* minute 4: the rail-3 NIC (mlx5_3) of hosts 0000, 0001 and 0002 goes down once, all
  three under leaf switch leaf03; port 17 of leaf03 starts discarding packets.

Every GPU reports temperature and utilisation (a GPU that stopped would be "not
reporting"); the error counters are those of the first rack's hosts; a few metrics the
rules do not read are included and get skipped.

Run from the repository root: ``python examples/monitor/make_snapshots.py``. The test suite
checks the committed files equal what this script writes.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent / "dgx-h100-su"
CLUSTER, HOSTS, GPUS, STEPS = "dgx-h100-superpod-su", 32, 8, 6
LEAF03_GUID = "0xa088c20300e4a203"


def host(h: int) -> str:
    """The host name the monitoring defaults give host ``h``."""
    return f"{CLUSTER}-{h:04d}"


def gpu_lines(step: int) -> list[str]:
    """dcgm-exporter series of every GPU at minute ``step``."""
    lines = ["# HELP DCGM_FI_DEV_GPU_TEMP GPU temperature (in C).",
             "# TYPE DCGM_FI_DEV_GPU_TEMP gauge"]
    ids = [(h, g) for h in range(HOSTS) for g in range(GPUS)]

    def labels(h: int, g: int) -> str:
        return f'gpu="{g}",UUID="GPU-{h:04x}{g:04x}",hostname="{host(h)}"'

    watched = [(h, g) for h, g in ids if h < 4]  # error fields of the first rack only

    lines += [f"DCGM_FI_DEV_GPU_TEMP{{{labels(h, g)}}} {52 + (h + g) % 7}" for h, g in ids]
    lines += ["# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %).",
              "# TYPE DCGM_FI_DEV_GPU_UTIL gauge"]
    lines += [f"DCGM_FI_DEV_GPU_UTIL{{{labels(h, g)}}} {96 + (h * g) % 4}" for h, g in ids]
    lines += ["# HELP DCGM_FI_DEV_SM_CLOCK SM clock frequency (in MHz).",
              "# TYPE DCGM_FI_DEV_SM_CLOCK gauge"]
    lines += [f"DCGM_FI_DEV_SM_CLOCK{{{labels(h, g)}}} 1980" for h, g in ids[:16]]
    lines += ["# HELP DCGM_FI_DEV_XID_ERRORS Value of the last XID error encountered.",
              "# TYPE DCGM_FI_DEV_XID_ERRORS gauge"]
    lines += [f"DCGM_FI_DEV_XID_ERRORS{{{labels(h, g)}}} "
              f"{79 if (h, g) == (3, 5) and step >= 3 else 0}" for h, g in watched]
    # dcgm-exporter's per-code counter: a series appears at a code's first error
    lines += ["# HELP DCGM_EXP_XID_ERRORS_TOTAL Total XID errors observed since exporter "
              "start.", "# TYPE DCGM_EXP_XID_ERRORS_TOTAL counter"]
    lines += [f'DCGM_EXP_XID_ERRORS_TOTAL{{{labels(3, 5)},xid="79"}} 1'] if step >= 3 else []
    lines += ["# HELP DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL Total number of NVLink "
              "recovery errors.", "# TYPE DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL counter"]
    lines += [f"DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL{{{labels(h, g)}}} "
              f"{1 if (h, g) == (1, 2) and step >= 2 else 0}" for h, g in watched]
    return lines


def network_lines(step: int) -> list[str]:
    """node-exporter infiniband and infiniband_exporter series at minute ``step``."""
    lines = ["# HELP node_infiniband_link_downed_total Number of times the link failed to "
             "recover from an error state and went down", "# TYPE node_infiniband_link_downed_"
             "total counter"]
    for h in range(4):
        for rail in range(8):
            down = 1 if h < 3 and rail == 3 and step >= 4 else 0
            lines.append(f'node_infiniband_link_downed_total{{device="mlx5_{rail}",port="1",'
                         f'hostname="{host(h)}"}} {down}')
    lines += ["# HELP infiniband_switch_info Infiniband switch information",
              "# TYPE infiniband_switch_info gauge",
              f'infiniband_switch_info{{guid="{LEAF03_GUID}",lid="41",switch="leaf03"}} 1',
              "# HELP infiniband_switch_port_transmit_discards_total Infiniband switch port "
              "PortXmitDiscards", "# TYPE infiniband_switch_port_transmit_discards_total counter"]
    for port in (16, 17, 18):
        discards = 25 * (step - 3) if port == 17 and step >= 4 else 0
        lines.append(f'infiniband_switch_port_transmit_discards_total{{guid="{LEAF03_GUID}",'
                     f'port="{port}"}} {discards}')
    return lines


def snapshot(step: int) -> str:
    """The exposition text of minute ``step``."""
    return "\n".join(gpu_lines(step) + network_lines(step)) + "\n"


def main(folder: Path = HERE) -> list[Path]:
    """Write the six snapshots into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for step in range(STEPS):
        path = folder / f"snapshot-{step}.prom"
        path.write_text(snapshot(step), encoding="utf-8")
        paths.append(path)
    return paths


if __name__ == "__main__":
    print("\n".join(str(p) for p in main(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE)))

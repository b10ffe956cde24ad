"""A Grafana dashboard: cluster alert counts, then one row per supernode.

The supernode row repeats over the ``supernode`` variable (values from the topology info
metric), so a 2,000-supernode cluster is one row definition, not 10,000 panels. Each row
shows GPU utilisation, NVLink traffic, errors (NVLink CRC and replays, Xid events,
NIC drops), GPU power and the coolant (or rack air) temperature difference of the CDUs and
racks serving the supernode. Panels read the pack's recorded signals, so they need its
rules loaded. Dashboard JSON model: grafana.com/docs/grafana/latest/dashboards/
build-dashboards/view-dashboard-json-model (schemaVersion 39).
"""

from __future__ import annotations

import hashlib
from typing import Any

from supernode.monitor.context import PackContext, dedup_record
from supernode.monitor.promql_syntax import quote
from supernode.monitor.rules_fabric import NIC_DISCARDS
from supernode.monitor.rules_facility import COOLANT_DT, RACK_AIR_DT, liquid
from supernode.monitor.rules_gpu import UTIL, XID_1H
from supernode.monitor.rules_scaleup import NVL_CRC, NVL_REPLAY

DATASOURCE = {"type": "prometheus", "uid": "${datasource}"}
SELECTED = '{supernode=~"$supernode"}'


def _target(expr: str, legend: str, ref: str) -> dict[str, Any]:
    return {"datasource": DATASOURCE, "expr": expr, "legendFormat": legend, "refId": ref}


def _panel(pid: int, title: str, unit: str, grid: tuple[int, int, int, int],
           targets: list[dict[str, Any]], kind: str = "timeseries") -> dict[str, Any]:
    x, y, w, h = grid
    return {"id": pid, "type": kind, "title": title, "datasource": DATASOURCE,
            "gridPos": {"x": x, "y": y, "w": w, "h": h},
            "fieldConfig": {"defaults": {"unit": unit}, "overrides": []},
            "options": {}, "targets": targets}


def _cooling_panel(ctx: PackContext, pid: int, grid: tuple[int, int, int, int]
                   ) -> dict[str, Any]:
    """Coolant dT of the supernode's CDUs (liquid) or air dT of its racks."""
    gpus = f"{dedup_record('gpu')}{SELECTED}"
    labels = ctx.config.labels
    if liquid(ctx):
        parents = (f'label_replace(group by (cdu) ({gpus}), {quote(labels.cdu)}, "$1", '
                   f'"cdu", "(.*)")')
        expr = f"{COOLANT_DT} and on({labels.cdu}) {parents}"
        return _panel(pid, "Coolant inlet-outlet dT (normal 5-8 C)", "celsius", grid,
                      [_target(expr, f"{{{{{labels.cdu}}}}}", "A")])
    parents = (f'label_replace(group by (rack) ({gpus}), {quote(labels.rack)}, "$1", '
               f'"rack", "(.*)")')
    expr = f"{RACK_AIR_DT} and on({labels.rack}) {parents}"
    return _panel(pid, "Rack air outlet-inlet dT", "celsius", grid,
                  [_target(expr, f"{{{{{labels.rack}}}}}", "A")])


def _joined(ctx: PackContext, key: str) -> str:
    """Per-host sum of a dcgm-exporter series over the GPUs of the selected supernodes."""
    host, gpu = ctx.host, ctx.gpu
    return (f"sum by ({host}) ({ctx.config.metric(key)} * on({host}, {gpu}) "
            f"group_left(supernode) {dedup_record('gpu')}{SELECTED})")


def _supernode_panels(ctx: PackContext, y: int) -> list[dict[str, Any]]:
    host = ctx.host
    legend = f"{{{{{host}}}}}"
    power = _joined(ctx, "gpu_power")
    errors = [_target(f"sum by ({host}) ({XID_1H}{SELECTED})", f"{legend} Xid events/h",
                      "A")]
    if ctx.has_scale_up:
        errors += [_target(f"sum by ({host}) ({NVL_CRC}{SELECTED})", f"{legend} NVLink CRC/s",
                           "B"),
                   _target(f"sum by ({host}) ({NVL_REPLAY}{SELECTED})",
                           f"{legend} NVLink replays/10m", "C")]
    if ctx.has_scale_out:
        errors.append(_target(f"sum by ({host}) ({NIC_DISCARDS}{SELECTED})",
                              f"{legend} NIC drops/5m", "D"))
    panels = [
        _panel(11, "GPU utilisation", "percent", (0, y, 8, 8),
               [_target(f"avg by ({host}) ({UTIL}{SELECTED})", legend, "A")]),
        _panel(12, "NVLink traffic", "Bps", (8, y, 8, 8),
               [_target(_joined(ctx, "nvlink_tx_bytes"), f"{legend} tx", "A"),
                _target(_joined(ctx, "nvlink_rx_bytes"), f"{legend} rx", "B")]),
        _panel(13, "Errors", "short", (16, y, 8, 8), errors),
        _panel(14, "GPU power", "watt", (0, y + 8, 12, 8), [_target(power, legend, "A")]),
        _cooling_panel(ctx, 15, (12, y + 8, 12, 8)),
    ]
    return panels if ctx.has_scale_up else [p for p in panels if p["id"] != 12]


def dashboard(ctx: PackContext) -> dict[str, Any]:
    """The dashboard JSON model for the cluster of ``ctx``."""
    name = ctx.topology.cluster
    uid = "supernode-" + hashlib.sha1(name.encode()).hexdigest()[:12]
    firing = 'ALERTS{alertstate="firing", scope!=""}'
    cluster_row = {"id": 1, "type": "row", "title": "cluster", "collapsed": False,
                   "gridPos": {"x": 0, "y": 0, "w": 24, "h": 1}, "panels": []}
    alerts = _panel(2, "Firing alerts by severity", "short", (0, 1, 12, 4),
                    [_target(f"count by (severity) ({firing})", "{{severity}}", "A")], "stat")
    parents = _panel(3, "Grouped alerts (a shared parent)", "short", (12, 1, 12, 4),
                     [_target(f'count by (alertname) ({firing[:-1]}, scope="parent"}})',
                              "{{alertname}}", "A")], "stat")
    row = {"id": 10, "type": "row", "title": "supernode $supernode", "repeat": "supernode",
           "collapsed": False, "gridPos": {"x": 0, "y": 5, "w": 24, "h": 1}, "panels": []}
    variable = {
        "name": "supernode", "label": "supernode", "type": "query", "datasource": DATASOURCE,
        "query": {"query": f"label_values({dedup_record('gpu')}{{cluster={quote(name)}}}, "
                           "supernode)", "refId": "supernode"},
        "refresh": 1, "includeAll": True, "multi": True, "sort": 3,
        "current": {"text": "All", "value": "$__all"},
    }
    return {
        "uid": uid, "title": f"supernode: {name}", "tags": ["supernode", "generated"],
        "schemaVersion": 39, "version": 1, "editable": True, "refresh": "1m",
        "time": {"from": "now-6h", "to": "now"}, "timezone": "",
        "templating": {"list": [
            {"name": "datasource", "label": "Data source", "type": "datasource",
             "query": "prometheus"}, variable]},
        "panels": [cluster_row, alerts, parents, row, *_supernode_panels(ctx, 6)],
    }


def panel_expressions(model: dict[str, Any]) -> list[str]:
    """Every target expression of a dashboard model (for validation)."""
    return [t["expr"] for p in model["panels"] for t in p.get("targets", [])]

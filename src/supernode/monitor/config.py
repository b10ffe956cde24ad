"""The monitoring configuration: metric and label names, naming patterns, thresholds.

Defaults live in ``data/monitor/defaults.yaml`` (with the source of every threshold); a
user file (``--config``) is merged onto them key by key and the result validated here, so
a misspelt key or a negative threshold is one ``error: field: what is allowed`` line.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import Field, PositiveFloat, PositiveInt, field_validator

from supernode.errors import InputError
from supernode.monitor.name_patterns import check_pattern
from supernode.monitor.promql_syntax import LABEL_NAME, METRIC_NAME
from supernode.spec.base import StrictModel
from supernode.spec.loader import parse_text, read_document, validate_document

#: Fields each naming pattern may use (Python format fields).
PATTERN_FIELDS = {
    "host": {"cluster", "host", "host1", "supernode", "rack", "slot"},
    "supernode": {"cluster", "supernode", "supernode1"},
    "rack": {"cluster", "rack", "rack1"},
    "power_shelf": {"cluster", "rack", "rack1", "shelf", "shelf1"},
    "cdu": {"cluster", "cdu", "cdu1"},
    "switch": {"cluster", "tier", "index", "index1"},
    "nic_device": {"rail", "rail1"},
    "switch_tray": {"cluster", "supernode", "supernode1", "tray", "tray1", "rack"},
}


class LabelNames(StrictModel):
    """Label names of the exporters' series."""

    host: str = Field(description="Host label on every per-host series (dcgm-exporter: "
                                  "hostname, Hostname before mid-2026).")
    gpu: str = Field(description="GPU index label (dcgm-exporter: gpu).")
    nvswitch: str = Field(description="NVSwitch index label (dcgm-exporter: nvswitch).")
    nic_device: str = Field(description="NIC device label (node-exporter: device).")
    switch_guid: str = Field(description="Switch GUID label (infiniband_exporter: guid).")
    switch: str = Field(description="Switch name label (infiniband_exporter: switch).")
    switch_port: str = Field(description="Switch port label (infiniband_exporter: port).")
    cdu: str = Field(description="CDU label of coolant sensor series.")
    rack: str = Field(description="Rack label of rack air sensor series.")
    xid: str = Field("xid", description="Xid code label of DCGM_EXP_XID_ERRORS_TOTAL "
                                        "(dcgm-exporter: xid).")

    @field_validator("*")
    @classmethod
    def _label(cls, value: str) -> str:
        if not LABEL_NAME.fullmatch(value) or value.startswith("__"):
            raise ValueError(f"{value!r} is not a label name ([a-zA-Z_][a-zA-Z0-9_]*)")
        return value


class NamePatterns(StrictModel):
    """Python format patterns naming the units of the generated topology."""

    host: str = Field(description="Host names (fields: cluster, host, host1, supernode, "
                                  "rack, slot).")
    supernode: str = Field(description="Supernode (scale-up domain) names.")
    rack: str = Field(description="Rack names.")
    power_shelf: str = Field(description="Power shelf / PDU group names.")
    cdu: str = Field(description="Coolant distribution unit names.")
    switch: str = Field(description="Scale-out switch names (fields: tier, index).")
    nic_device: str = Field(description="NIC device names (field: rail).")
    switch_tray: str = Field(description="NVSwitch tray host names (multi-host domains).")


class Layout(StrictModel):
    """Failure domains the cluster description leaves open."""

    hosts_per_rack: PositiveInt | None = Field(None, description="Hosts per rack (default: "
                                               "the cluster's racks, else one supernode).")
    hosts_per_power_shelf: PositiveInt | None = Field(
        None, description="Hosts sharing one power shelf or PDU group (default: a rack).")
    racks_per_cdu: PositiveInt = Field(description="Racks served by one CDU.")


class Thresholds(StrictModel):
    """Alert thresholds (units in the names; sources in defaults.yaml and docs)."""

    gpu_sm_active_low_ratio: float = Field(gt=0, le=1)
    collective_latency_rise_ratio: float = Field(gt=1)
    link_saturation_ratio: float = Field(gt=0, le=1)
    link_saturation_for_s: PositiveInt
    xid_min_events_24h: PositiveInt
    xid_application_codes: list[PositiveInt] = Field(
        min_length=1, description="Xid codes left out of the Xid trend (application faults).")
    thermal_violation_ratio: float = Field(gt=0, le=1)
    thermal_violation_unit_s: PositiveFloat
    busy_utilisation_percent: float = Field(ge=0, le=100)
    baseline_window_s: PositiveInt
    temperature_deviation_sigma: PositiveFloat
    temperature_deviation_min_c: PositiveFloat
    power_deviation_sigma: PositiveFloat
    power_deviation_min_ratio: float = Field(gt=0, lt=1)
    nvlink_crc_errors_per_s: PositiveFloat
    nvlink_replay_errors_10m: PositiveFloat
    nvswitch_slowdown_margin_c: float = Field(ge=0)
    nvswitch_temperature_rise_c: PositiveFloat
    nvswitch_power_deviation_ratio: float = Field(gt=0, lt=1)
    link_snr_drop_db: PositiveFloat
    coolant_delta_t_min_c: PositiveFloat
    coolant_delta_t_max_c: PositiveFloat
    coolant_delta_t_fault_c: PositiveFloat
    coolant_supply_margin_c: float = Field(ge=0)
    coolant_flow_min_ratio: float = Field(gt=0, lt=1)
    rack_air_delta_t_max_c: PositiveFloat
    correlation_window_s: PositiveInt
    correlation_min_units: int = Field(ge=2)


class LinkBer(StrictModel):
    """Link bit-error-rate settings of the rule pack. The levels default to the link model's
    (:func:`supernode.links.ber_thresholds` of the cluster's scale-out link generation: its
    effective, post-FEC drain and watch BER); a number given here overrides them."""

    drain_ber: float | None = Field(None, gt=0, lt=1, description="Symbol (post-FEC) BER at "
                                    "which a link is drained; null: the link model's.")
    window_s: PositiveInt = Field(description="Window of the BER estimate.")
    trend_factor: float = Field(gt=1, description="Last day's BER over last week's.")
    trend_floor_ber: float | None = Field(None, gt=0, lt=1, description="BER below which a "
                                          "rising trend is ignored; null: the link model's "
                                          "watch level.")
    trend_window_s: PositiveInt = Field(description="Recent window of the trend.")
    history_window_s: PositiveInt = Field(description="Reference window of the trend.")
    symbol_counter_max: PositiveInt = Field(65535, description="Value at which the "
                                            "symbol_error counter saturates (16 bits).")


class MonitorConfig(StrictModel):
    """Everything the generated rules, tests, dashboard and topology file depend on."""

    labels: LabelNames
    names: NamePatterns
    hostnames: list[str] = Field(default_factory=list, max_length=1_048_576)
    layout: Layout
    metrics: dict[str, str]
    thresholds: Thresholds
    link_ber: LinkBer
    disabled_rules: list[str] = Field(default_factory=list)

    @field_validator("metrics")
    @classmethod
    def _metric_names(cls, value: dict[str, str]) -> dict[str, str]:
        for key, name in value.items():
            if not METRIC_NAME.fullmatch(name):
                raise ValueError(f"metrics.{key}: {name!r} is not a metric name")
        return value

    def metric(self, key: str) -> str:
        """The metric name of logical series ``key``."""
        return self.metrics[key]


def _check_patterns(config: MonitorConfig) -> None:
    for key, allowed in PATTERN_FIELDS.items():
        check_pattern(f"names.{key}", getattr(config.names, key), allowed)


def merge(base: Any, override: Any) -> Any:
    """``override`` merged onto ``base``: mappings key by key, everything else replaced."""
    if isinstance(base, dict) and isinstance(override, dict):
        out = dict(base)
        for key, value in override.items():
            out[key] = merge(base[key], value) if key in base else value
        return out
    return override


@cache
def default_document() -> dict[str, Any]:
    """The bundled defaults as parsed YAML."""
    text = (resources.files("supernode") / "data" / "monitor" / "defaults.yaml").read_text(
        encoding="utf-8")
    return parse_text(text, source="defaults.yaml")


def load_config(path: str | Path | None = None) -> MonitorConfig:
    """The defaults, with the file at ``path`` (YAML/JSON) merged on when given."""
    document = default_document()
    source = "defaults.yaml"
    if path is not None:
        user = read_document(path)
        if not isinstance(user, dict):
            raise InputError("", "expected a mapping of fields at the top level",
                             source=str(path))
        unknown_metrics = set(user.get("metrics") or {}) - set(document["metrics"])
        if unknown_metrics:
            raise InputError(f"metrics.{sorted(unknown_metrics)[0]}", "unknown series key; "
                             f"known: {', '.join(sorted(document['metrics']))}",
                             source=str(path))
        document = merge(document, user)
        source = str(path)
    config = validate_document(document, MonitorConfig, source=source)
    try:
        _check_patterns(config)
    except InputError as exc:
        raise InputError(exc.path, exc.message, source=source) from None
    return config

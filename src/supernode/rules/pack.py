"""Rule packs: the severity, threshold and on/off switch of every rule, by id.

The default pack (``data/rules/default.yaml``) sets every rule's severity and the
thresholds that belong to the rules; thresholds that a model owns (scale-up vs HBM,
oversubscription, hops, scale-out per supernode, the 20 % communication line, the 80 %
hot-link line, the 10 % hot standby, the 10-minute recovery) are read from that model's
constant (:data:`MODEL_THRESHOLDS`). A user pack (``supernode-rules/1``) overrides any
field of any rule; unknown ids, thresholds of the wrong shape and thresholds on rules that
compare with a figure the design states are refused with the field path.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Literal

from pydantic import Field

from supernode.errors import InputError
from supernode.estimate.model import COMM_SHARE_THRESHOLD
from supernode.inputs import read_text_file
from supernode.netsim.fluid import HOT_UTILIZATION
from supernode.reliability.recovery import RTO_OBJECTIVE_S
from supernode.reliability.standby import HOT_STANDBY_OBJECTIVE
from supernode.rules.registry import RULES, SEVERITIES, Threshold
from supernode.spec.base import StrictModel
from supernode.spec.loader import parse_text, validate_document
from supernode.topology.thresholds import (
    OVERSUBSCRIPTION_MAX,
    SCALE_OUT_PER_SUPERNODE_MIN_BYTES_PER_S,
    SCALE_UP_TO_HBM_MIN,
    SERVER_HOPS_MAX,
)
from supernode.units import GBYTE_PER_S

#: Largest rule-pack file read (bytes).
MAX_PACK_BYTES = 1 << 20
#: Thresholds owned by a model, in each rule's unit (one truth: the model's constant).
MODEL_THRESHOLDS: dict[str, float] = {
    "scale_up_hbm_ratio": SCALE_UP_TO_HBM_MIN,
    "no_oversubscription": OVERSUBSCRIPTION_MAX,
    "fabric_hops": float(SERVER_HOPS_MAX),
    "scale_out_links_per_supernode": SCALE_OUT_PER_SUPERNODE_MIN_BYTES_PER_S / GBYTE_PER_S,
    "exposed_comm_share": COMM_SHARE_THRESHOLD,
    "link_utilisation": HOT_UTILIZATION,
    "workload_fit": COMM_SHARE_THRESHOLD,
    "hot_standby_bandwidth": HOT_STANDBY_OBJECTIVE,
    "recovery_time_objective": RTO_OBJECTIVE_S,
    "remote_stream_link_load": HOT_UTILIZATION,
}
#: Rules judged against a window [low, high] rather than one number.
WINDOW_RULES = ("coolant_delta_t_window",)


class RuleSetting(StrictModel):
    """Overrides of one rule."""

    severity: Literal["error", "warning", "info"] | None = Field(
        None, description="error (fails check), warning or info.")
    threshold: float | list[float] | None = Field(
        None, description="The rule's threshold in its unit ([low, high] for windows).")
    enabled: bool = Field(True, description="false: skip the rule.")


class RulePack(StrictModel):
    """A rule pack: rule id -> overrides."""

    schema_: Literal["supernode-rules/1"] = Field("supernode-rules/1", alias="schema",
                                                   description="Format tag.")
    name: str = Field("custom", min_length=1, description="Name of the pack.")
    rules: dict[str, RuleSetting] = Field(default_factory=dict,
                                          description="Rule id -> overrides.")


@dataclass(frozen=True)
class Setting:
    """The effective severity, threshold and switch of one rule."""

    severity: str
    threshold: Threshold
    enabled: bool


def _pack_from_text(text: str, source: str) -> RulePack:
    return validate_document(parse_text(text, source=source), RulePack, source=source)


@functools.cache
def default_pack() -> RulePack:
    """The bundled default pack."""
    path = resources.files("supernode") / "data/rules/default.yaml"
    return _pack_from_text(path.read_text(encoding="utf-8"), "data/rules/default.yaml")


def load_pack(path: str | Path) -> RulePack:
    """Read and check a user rule pack (``--rules``); InputError with the field path."""
    pack = _pack_from_text(read_text_file(path, "--rules", MAX_PACK_BYTES), str(path))
    for rule_id, setting in pack.rules.items():
        _check_setting(rule_id, setting, source=str(path))
    return pack


def _check_setting(rule_id: str, setting: RuleSetting, source: str) -> None:
    where = f"rules.{rule_id}"
    if rule_id not in RULES:
        raise InputError(where, f"unknown rule; known: {', '.join(RULES)}", source=source)
    value = setting.threshold
    if value is None:
        return
    takes = rule_id in MODEL_THRESHOLDS or default_pack().rules.get(rule_id, RuleSetting()
                                                                   ).threshold is not None
    if not takes:
        raise InputError(f"{where}.threshold", "this rule takes no threshold: it compares "
                         "with a figure the design states", source=source)
    if rule_id in WINDOW_RULES:
        if not (isinstance(value, list) and len(value) == 2 and value[0] <= value[1]):
            raise InputError(f"{where}.threshold", "a window [low, high] with low <= high",
                             source=source)
    elif isinstance(value, list):
        raise InputError(f"{where}.threshold", "one number", source=source)


def settings(pack: RulePack | None = None) -> dict[str, Setting]:
    """Effective setting of every registered rule: defaults, then ``pack``'s overrides."""
    base = default_pack().rules
    user = pack.rules if pack is not None else {}
    out = {}
    for rule_id in RULES:
        d = base.get(rule_id, RuleSetting())
        u = user.get(rule_id, RuleSetting())
        threshold = MODEL_THRESHOLDS.get(rule_id, d.threshold)
        if u.threshold is not None:
            threshold = u.threshold
        severity = u.severity or d.severity or "warning"
        enabled = d.enabled and u.enabled if rule_id in user else d.enabled
        out[rule_id] = Setting(severity, threshold, enabled)
    assert all(s.severity in SEVERITIES for s in out.values())
    return out

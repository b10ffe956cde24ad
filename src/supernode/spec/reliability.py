"""Schema of a cluster's optional ``reliability`` block: rate overrides and recovery design.

Every field is optional; absent fields take the defaults of ``supernode.reliability``
(docs/reliability.md). Component names are checked against the cluster's inventory when the
reliability model runs (a rate for a part the topology lacks is an error there).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, NonNegativeFloat, PositiveFloat

from supernode.spec.base import StrictModel


class ReliabilitySpec(StrictModel):
    """Failure-rate overrides and the recovery design of one cluster."""

    failures_per_unit_year: dict[str, NonNegativeFloat] = Field(
        default_factory=dict,
        description="Failures per unit-year by component (gpu, hbm, nvswitch, leaf_switch...).")
    repair_h: dict[str, NonNegativeFloat] = Field(
        default_factory=dict, description="Hours a failed unit is out of service, by component.")
    spare_hosts: int | None = Field(
        None, ge=0, description="Hot-spare hosts (trays) beyond the job's (default: 2%).")
    hot_standby_share: float | None = Field(
        None, ge=0.0, lt=1.0,
        description="Share of scale-up bandwidth held as hot standby (seed 001: >= 0.10); "
                    "null: measured from the topology (spare switch ports over ports in use).")
    checkpoint_write_gbyte_per_s: PositiveFloat | None = Field(
        None, description="Aggregate checkpoint write bandwidth to storage in GB/s.")
    checkpoint_read_gbyte_per_s: PositiveFloat | None = Field(
        None, description="Aggregate checkpoint read bandwidth from storage in GB/s.")
    checkpoint_mode: Literal["sync", "async"] = Field(
        "async", description="Synchronous writes block training; async blocks for the copy.")
    racks_per_cdu: int | None = Field(None, ge=1, description="Racks one CDU serves.")
    dual_homed_nics: bool = Field(
        False, description="Each NIC port on two leaves (seed 003 §3.3): a leaf or its link "
                           "degrades the host instead of stopping the job.")
    recovery: Literal["restart", "shrink"] = Field(
        "restart", description="restart from checkpoint, or isolate and shrink data parallelism.")

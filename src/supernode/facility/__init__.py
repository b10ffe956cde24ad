"""Facility: the power chain, the cooling loop, the floor and the cabling of a cluster.

:func:`facility_report` sizes power per host, rack, supernode and cluster (at TDP and at the
planned workload's utilisation), the feeds with N+X redundancy and headroom, the coolant
flow and CDUs, the residual air load, rack weight against the floor, the rows and aisles,
and fibre and transceiver counts (seed 001 §3, seed 000 §3.3 and §4.2, seed 003 §2.4).
Every default and property lives in ``data/facility/facility.yaml`` with its source.
"""

from supernode.facility.model import FacilityReport, WorkloadUse, cluster_cooling, facility_report

__all__ = ["FacilityReport", "WorkloadUse", "cluster_cooling", "facility_report"]

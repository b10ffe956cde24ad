"""Measurements of a running cluster and their comparison with the model.

Public API::

    read_results(path, op=None, ranks=None, ranks_per_domain=None) -> [MeasurementSet]
    place_job(cluster, job) -> JobPlacement            # ranks per domain, the job's fabric
    compare_set(set, cluster, tables=None) -> SetComparison
    compare_results(cluster, paths, ..., gate=None) -> CompareReport  # gate: Gate(0.9, ...)
    comparison_findings(comparison, cluster) -> [Finding]
    measured_groups(sets, cluster) -> [MeasuredGroup]   # what a calibration fits
    bench_plan(cluster) -> [BenchRun]                   # the runs that pin the model

See ``docs/measurements.md``.
"""

from supernode.measurements.bench_plan import BenchRun, bench_plan
from supernode.measurements.compare import SetComparison, compare_set
from supernode.measurements.findings import Finding, comparison_findings
from supernode.measurements.gate import Gate
from supernode.measurements.groups import MeasuredGroup, measured_groups
from supernode.measurements.model import MeasurementSet
from supernode.measurements.placement import JobPlacement, place_job
from supernode.measurements.reader import read_results
from supernode.measurements.run import compare_results

__all__ = [
    "BenchRun",
    "Finding",
    "Gate",
    "JobPlacement",
    "MeasuredGroup",
    "MeasurementSet",
    "SetComparison",
    "bench_plan",
    "compare_results",
    "compare_set",
    "comparison_findings",
    "measured_groups",
    "place_job",
    "read_results",
]

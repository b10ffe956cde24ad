"""``compare`` as a library call: read results files, compare each set, collect findings."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from supernode.collectives.efficiency import EfficiencyTable
from supernode.measurements.compare import compare_set
from supernode.measurements.findings import Finding, comparison_findings
from supernode.measurements.gate import Gate
from supernode.measurements.links_compare import point_comparisons
from supernode.measurements.log_findings import nccl_log_findings
from supernode.measurements.reader import check_results_files, read_results
from supernode.measurements.report import CompareReport
from supernode.spec.resolved import Cluster


def compare_results(cluster: Cluster, paths: Sequence[str | Path], *, op: str | None = None,
                    ranks: int | None = None, ranks_per_domain: int | None = None,
                    placement: str = "out_of_place",
                    tables: Mapping[str, EfficiencyTable] | None = None,
                    gate: Gate | None = None,
                    progress: Callable[[str], None] | None = None) -> CompareReport:
    """Compare every results file in ``paths`` with the model of ``cluster``.

    ``tables``: efficiency tables to predict with (default: the packaged ones; a
    calibration of this cluster when there is one). ``gate``: the regression gate
    (:class:`~supernode.measurements.gate.Gate`: the share of the prediction under which
    a judged row fails, and which rows it judges). ``progress`` is called with each
    file's name once it is done.
    """
    check_results_files(paths)
    report = CompareReport(cluster=cluster.name, gate=gate)
    for path in paths:
        for s in read_results(path, op=op, ranks=ranks, ranks_per_domain=ranks_per_domain):
            if s.collectives and s.op is None:
                report.other.append((s, [Finding("info", "not_modelled", (
                    f"{s.attributes.get('program')}: the cost model has no counterpart; "
                    f"{len(s.collectives)} rows read, not compared"))]))
            elif s.collectives:
                comparison = compare_set(s, cluster, tables=tables, placement=placement)
                report.collectives.append((comparison, comparison_findings(comparison,
                                                                           cluster)))
            elif s.tool in ("perftest", "nvbandwidth"):
                report.points.extend(point_comparisons(s, cluster))
            else:
                report.other.append((s, nccl_log_findings(s, cluster)))
        if progress is not None:
            progress(str(path))
    return report

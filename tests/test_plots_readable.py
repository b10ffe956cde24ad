"""The reliability, scheduling and comparison plots: legends beside the data (never over
it), distributions drawn from a bounded number of points, identical bytes for identical
results."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from supernode.plotting import pyplot

DATA = Path(__file__).parent / "data"


def _beside_or_above(fig, ax) -> bool:
    legend = ax.get_legend()
    assert legend is not None
    fig.canvas.draw()
    box = legend.get_window_extent().transformed(fig.transFigure.inverted())
    pos = ax.get_position()
    return box.x0 >= pos.x1 - 1e-3 or box.y0 >= pos.y1 - 1e-3


def _capture(monkeypatch, module) -> list:
    figures = []

    def keep(fig, path):
        figures.append(fig)
        Path(path).write_bytes(b"")
        return Path(path)

    monkeypatch.setattr(module, "save_png", keep)
    return figures


@pytest.fixture(scope="module")
def reliability():
    from supernode.cluster.load import load_cluster
    from supernode.reliability.assess import ReliabilityOptions, assess_reliability
    from supernode.spec.plan import plan_from_data
    from supernode.workload.presets import load_workload

    plan = plan_from_data({"tp": 8, "pp": 4, "dp": 8, "global_batch_sequences": 256})
    return assess_reliability(load_cluster("dgx-h100-superpod-su"), load_workload("llama3-70b"),
                              plan, ReliabilityOptions(days=10, runs=30, what_if=False,
                                                       workers=1))


def test_reliability_legends_sit_beside_the_data(reliability, monkeypatch, tmp_path) -> None:
    from supernode.reliability import plots

    figures = _capture(monkeypatch, plots)
    plots.write_plots(reliability, tmp_path / "p")
    assert len(figures) == 3
    for fig in figures:
        assert _beside_or_above(fig, fig.axes[0])
        pyplot().close(fig)


def test_reliability_plots_are_byte_identical(reliability, tmp_path) -> None:
    from supernode.reliability.plots import write_plots

    a = write_plots(reliability, tmp_path / "a")
    b = write_plots(reliability, tmp_path / "b")
    assert [p.read_bytes() for p in a] == [p.read_bytes() for p in b]


@pytest.fixture(scope="module")
def scheduled():
    from supernode.cluster.load import load_cluster
    from supernode.scheduler import SyntheticSpec, schedule, synthetic_trace

    cluster = load_cluster("gb200-nvl72-superpod")
    trace = synthetic_trace(SyntheticSpec(jobs=300, load=1.2, max_gpus=64),
                            cluster.accelerators, seed=2)
    return schedule(cluster, trace, ["first-fit", "best-fit"], seed=2)


def test_schedule_legends_sit_beside_or_above_the_data(scheduled, monkeypatch,
                                                       tmp_path) -> None:
    from supernode.scheduler import plots

    figures = _capture(monkeypatch, plots)
    plots.plot_schedule(scheduled, tmp_path / "p")
    metrics, cdf, timeline = figures
    assert _beside_or_above(metrics, metrics.axes[0])  # the goodput key above its bars
    assert _beside_or_above(cdf, cdf.axes[0]) and _beside_or_above(timeline, timeline.axes[0])
    for fig in figures:
        pyplot().close(fig)


@pytest.mark.parametrize("n", [0, 1, 10, 999, 1000, 1001, 123_457])
def test_a_distribution_is_drawn_from_at_most_cdf_points(n: int) -> None:
    from supernode.scheduler.plots import CDF_POINTS, cdf_points

    values = np.random.default_rng(n).lognormal(size=n)
    x, share = cdf_points(values)
    assert x.size == share.size == min(n, CDF_POINTS)
    assert np.all(np.diff(x) >= 0) and np.all(np.diff(share) > 0)
    if n:
        assert x[0] == values.min() and x[-1] == values.max() and share[-1] == 1.0
        # every drawn point is on the empirical distribution
        assert np.allclose(share, np.searchsorted(np.sort(values), x, side="right") / n)


def test_comparison_plot_legend_beside_and_bytes_identical(monkeypatch, tmp_path) -> None:
    from supernode.cluster.load import load_cluster
    from supernode.measurements import plots
    from supernode.measurements.report import report_dict
    from supernode.measurements.run import compare_results

    report = compare_results(load_cluster("gb300-nvl72"),
                             [DATA / "nccl_tests" / "oci-gb300-allreduce-1rack.txt"])
    (entry,) = report_dict(report)["collectives"]
    first = plots.plot_collective(1, entry, tmp_path).read_bytes()
    (tmp_path / "again").mkdir()
    assert plots.plot_collective(1, entry, tmp_path / "again").read_bytes() == first
    figures = _capture(monkeypatch, plots)
    plots.plot_collective(1, entry, tmp_path / "again")
    assert _beside_or_above(figures[0], figures[0].axes[0])
    pyplot().close(figures[0])


@pytest.mark.parametrize("transparent", [False, True])
def test_png_is_rgb_when_opaque_and_keeps_its_alpha_otherwise(transparent: bool,
                                                                tmp_path) -> None:
    from PIL import Image

    from supernode.plotting import DPI, agg_figure, save_png

    fig = agg_figure(2.0, 1.0)
    fig.patch.set_alpha(0.0 if transparent else 1.0)
    fig.text(0.1, 0.5, "▲ spine/3 (64 links, 2 hot)")
    path = save_png(fig, tmp_path / "a.png")
    with Image.open(path) as image:
        assert image.mode == ("RGBA" if transparent else "RGB")
        assert image.size == (2 * DPI, DPI) and round(image.info["dpi"][0]) == DPI
        assert "Software" not in image.info
        pixels = np.asarray(image.convert("RGBA"))
    ink = pixels[..., 3] > 0 if transparent else pixels[..., :3].min(axis=-1) < 128
    assert 0 < ink.mean() < 0.5  # the text, and only the text, was drawn


def test_a_pyplot_figure_is_closed_once_saved(tmp_path) -> None:
    from supernode.plotting import save_png

    plt = pyplot()
    fig = plt.figure(figsize=(2, 1))
    save_png(fig, tmp_path / "a.png")
    assert not plt.fignum_exists(fig.number)

"""Plots of a simulated run aggregate and read at a glance: what the heatmap rows hold
(conservation against the run's own link bytes, a differential test against the per-link
loop), what the figures show (labels, hot marks, lanes by parallel dimension, sampled
lanes, legends beside the data), and identical bytes for identical runs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from supernode.cluster.load import load_cluster
from supernode.netsim import JobInput, SimOptions, results, simulate_jobs
from supernode.netsim.network import TIER_CODES
from supernode.netsim.plot_files import write_plots
from supernode.netsim.plots import (
    HEATMAP_ROWS,
    MAX_LANES,
    carried,
    dimension,
    heat_rows,
    plot_timeline,
    plot_utilization,
    sampled,
)
from supernode.plotting import HOT, HOT_MARK
from supernode.spec.plan import plan_from_data
from supernode.textsafe import plot_safe
from supernode.workload.presets import load_workload

BINS = 24


@pytest.fixture(scope="module")
def run():
    """One small iteration (256 GPUs, TP 8 x PP 2) with its heatmap, and what the heatmap
    was computed from (the engine, the network, the link statistics)."""
    captured = {}
    original = results.heatmap

    def spy(env, net, stats, duration_s, bins=120, **kw):
        captured.update(env=env, net=net, stats=stats, duration_s=duration_s)
        return original(env, net, stats, duration_s, bins, **kw)

    results.heatmap = spy
    try:
        cluster = load_cluster("dgx-h100-superpod-su")
        plan = plan_from_data({"tp": 8, "pp": 2, "dp": 16, "global_batch_sequences": 64})
        job = JobInput("job0", load_workload("llama3-8b"), plan, np.arange(256))
        result = simulate_jobs(cluster, [job], options=SimOptions(bins=BINS))
    finally:
        results.heatmap = original
    return result, captured


def test_every_row_conserves_the_bytes_the_run_carried(run) -> None:
    result, c = run
    net, stats = c["net"], c["stats"]
    heat = result.tables.extra["heatmap"]
    assert heat and set(heat) <= set(result.tables.link_utilization)
    cap = net.capacity_bytes_per_s
    for tier, table in heat.items():
        width = np.diff(table["edges_s"])
        carried = dict(zip(stats.links.tolist(), stats.bytes.tolist(), strict=True))
        by_name = {net.link_name(k): k for k in stats.links.tolist()}
        for name, row in zip(table["links"], table["utilization"], strict=True):
            link = by_name[name]
            assert np.dot(row, width) * cap[link] == pytest.approx(carried[link], rel=1e-9,
                                                                   abs=1.0)
        sel = stats.tier == TIER_CODES[tier]
        in_tier = stats.links[sel]
        assert table["link_count"] == in_tier.size
        assert np.dot(table["mean"], width) * cap[in_tier].sum() == pytest.approx(
            stats.bytes[sel].sum(), rel=1e-9, abs=1.0)
        switch = results.switch_of_links(net, in_tier, tier)
        sw = table["switches"]
        for name, count, row in zip(sw["names"], sw["links"], sw["utilization"], strict=True):
            mine = switch == net.index[tuple(_node_key(name))]
            assert count == int(mine.sum())
            assert np.dot(row, width) * cap[in_tier[mine]].sum() == pytest.approx(
                stats.bytes[sel][mine].sum(), rel=1e-9, abs=1.0)
        assert sum(sw["hot_links"]) <= result.tables.hot_counts.get(tier, 0)


def _node_key(name: str) -> tuple:
    kind, *rest = name.split("/")
    return (kind, *(int(p) for p in rest))


def test_grouped_rows_equal_the_per_link_loop(run) -> None:
    """Differential: the sparse product against the per-vector, per-link loop it replaced."""
    result, c = run
    env, net, stats = c["env"], c["net"], c["stats"]
    edges = np.linspace(0.0, c["duration_s"], BINS + 1)
    per_vid = results._vector_bytes_per_bin(env, edges)
    top = stats.links[np.argsort(-stats.bytes, kind="stable")[:40]]
    pos = {int(k): i for i, k in enumerate(top.tolist())}
    expected = np.zeros((top.size, BINS))
    for vid, row in per_vid.items():
        v = env.fluid.vectors.items[vid]
        for link, m in zip(v.links.tolist(), v.mult.tolist(), strict=True):
            if link in pos:
                expected[pos[link]] += m * row
    got = results._BinnedVectors(env, edges, net.links).per_group(top, np.arange(top.size),
                                                                  top.size)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-6)


def test_links_attach_to_the_switch_of_their_tier(run) -> None:
    _, c = run
    net, stats = c["net"], c["stats"]
    for tier, kind in (("leaf", "leaf"), ("scale_up_l1", "scale_up_l1")):
        links = np.array([k for k in stats.links.tolist() if net.tier_name(k) == tier])
        nodes = results.switch_of_links(net, links, tier)
        assert (nodes >= 0).all()
        assert {net.nodes[v][0] for v in nodes.tolist()} == {kind}
    host = np.array([k for k in stats.links.tolist() if net.tier_name(k) == "host"])
    assert (results.switch_of_links(net, host, "host") == -1).all()  # GPU -> NIC: none


def _capture(monkeypatch):
    from supernode.netsim import plots

    figures = []

    def keep(fig, path):
        figures.append(fig)
        return path

    monkeypatch.setattr(plots, "_save", keep)
    return figures


def test_heatmap_labels_its_rows_and_marks_the_hot_ones(run, monkeypatch, tmp_path) -> None:
    result, _ = run
    figures = _capture(monkeypatch)
    heat = result.tables.extra["heatmap"]
    table = heat["leaf"]
    assert any(table["hot"])  # this run has hot leaf links
    assert plot_utilization(heat, tmp_path / "x.png") is not None
    *panels, bar = figures[0].axes
    shown = [tier for tier, t in heat.items() if carried(t)]
    assert [ax.get_title(loc="left") for ax in panels] == [f"tier {t}" for t in shown]
    ax = panels[shown.index("leaf")]
    labels = [t.get_text() for t in ax.texts]
    expected, hot, header, util = heat_rows(table)
    assert labels == expected and len(labels) == util.shape[0]
    # each label beside its row (row i spans y from i to i + 1)
    assert [t.get_position()[1] for t in ax.texts] == [i + 0.5 for i in range(len(labels))]
    assert labels[0].startswith("whole tier: all ") and np.isnan(util[header]).all()
    n_links = min(HEATMAP_ROWS, len(table["links"]))
    assert labels[-n_links:] == [(HOT_MARK if h else "") + plot_safe(name) for name, h in
                                 zip(table["links"], table["hot"], strict=False)][:n_links]
    for text, is_hot in zip(ax.texts, hot, strict=True):
        assert (text.get_color() == HOT) == is_hot
        assert text.get_text().startswith(HOT_MARK) == is_hot
    switch_rows = [t for t in labels if "links," in t]
    assert switch_rows and all(t.split(" (")[0].lstrip(HOT_MARK).startswith("leaf/")
                               for t in switch_rows)
    # one time axis: the panels share it, only the bottom one is labelled
    assert all(p.get_xlim() == panels[-1].get_xlim() for p in panels)
    assert [p.get_xlabel() for p in panels][-1] and not any(p.get_xlabel() for p in panels[:-1])
    # the colour bar spans every panel and marks the hot line
    assert bar.get_position().y0 == pytest.approx(panels[-1].get_position().y0)
    assert bar.get_position().y1 == pytest.approx(panels[0].get_position().y1)
    assert any(np.allclose(line.get_ydata(), 0.8) for line in bar.lines)


def test_a_tier_that_carried_nothing_has_no_panel(run, monkeypatch, tmp_path) -> None:
    result, _ = run
    figures = _capture(monkeypatch)
    leaf = result.tables.extra["heatmap"]["leaf"]
    idle = {**leaf, "mean": [0.0] * len(leaf["mean"])}
    plot_utilization({"idle": idle, "leaf": leaf}, tmp_path / "x.png")
    assert [ax.get_title(loc="left") for ax in figures[0].axes[:-1]] == ["tier leaf"]
    assert plot_utilization({"idle": idle}, tmp_path / "y.png") is None
    assert not (tmp_path / "y.png").exists()


def _rows(stages: int) -> list[tuple[str, str, str, float, float]]:
    rows = []
    for s in range(stages):
        for k in range(30):
            t = s * 0.01 + k * 0.1
            rows += [("job $x^$", f"stage {s}", "compute", t, t + 0.05),
                     ("job $x^$", f"stage {s}", "tp all_gather", t + 0.05, t + 0.06),
                     ("job $x^$", f"stage {s}", "tp", t + 0.06, t + 0.07)]
        rows.append(("job $x^$", f"stage {s}", "dp", 3.2, 3.5))
    return rows


def test_timeline_groups_by_dimension_and_samples_the_lanes(monkeypatch, tmp_path) -> None:
    figures = _capture(monkeypatch)
    plot_timeline(_rows(20), tmp_path)
    top, bottom = figures[0].axes
    dims = [t.get_text() for t in top.texts]
    assert [d.split(": ")[1].split(" (")[0] for d in dims] == ["compute", "tp", "dp"]
    assert all(d.startswith(plot_safe("job $x^$") + ": ") for d in dims)  # literal text
    assert "busy" in dims[0]
    lanes = [t.get_text().split(": ")[1] for t in bottom.texts]
    assert len(lanes) == MAX_LANES and lanes[0] == "stage 0" and lanes[-1] == "stage 19"
    assert "8 of 20 shown" in bottom.get_title(loc="left")
    assert len(top.collections) == 3  # one collection per dimension, not per interval
    legend = top.get_legend()
    assert [t.get_text() for t in legend.get_texts()] == ["compute", "tp", "dp"]
    figures[0].canvas.draw()
    box = legend.get_window_extent().transformed(figures[0].transFigure.inverted())
    assert box.x0 >= top.get_position().x1  # beside the data, never over it


def test_categories_belong_to_their_dimension() -> None:
    assert [dimension(c) for c in ("tp all_gather", "dp", "compute", "pp p2p", "x y")] == \
        ["tp", "dp", "compute", "pp", "x y"]


@pytest.mark.parametrize("n, limit", [(1, 8), (8, 8), (9, 8), (100, 8), (3, 2), (50, 1)])
def test_sampled_lanes_are_spread_and_keep_the_ends(n: int, limit: int) -> None:
    items = list(range(n))
    out = sampled(items, limit)
    assert len(out) == min(n, limit) and out == sorted(set(out))
    assert out[0] == 0 and (out[-1] == n - 1 or limit == 1)


def test_the_same_run_gives_the_same_bytes(run, tmp_path: Path) -> None:
    result, _ = run
    first = write_plots(result.tables, tmp_path / "a")
    second = write_plots(result.tables, tmp_path / "b")
    assert [p.name for p in first] == [p.name for p in second]
    assert {p.name for p in first} >= {"timeline.png", "utilization.png"}
    for a, b in zip(first, second, strict=True):
        assert a.read_bytes() == b.read_bytes()
        assert b"Software" not in a.read_bytes()[:200]


def test_plots_drawn_side_by_side_are_those_drawn_one_by_one(run, tmp_path: Path) -> None:
    """write_plots draws the timeline in a forked child beside the heatmap: the files
    have the bytes each figure has drawn alone in this process."""
    from supernode.netsim.plots import plot_timeline, plot_utilization

    result, _ = run
    written = {p.name: p.read_bytes() for p in write_plots(result.tables, tmp_path / "a")}
    alone = tmp_path / "b"
    alone.mkdir()
    one = [plot_utilization(result.tables.extra["heatmap"], alone / "utilization.png"),
           plot_timeline(result.tables.timeline, alone)]
    assert written == {p.name: p.read_bytes() for p in one if p is not None}
    assert set(written) == {"timeline.png", "utilization.png"}

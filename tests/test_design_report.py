"""supernode design on the flawed example: the report set; every figure in report.html
equal to the one in results.json (the HTML is parsed, each value found by its key); and a
real browser (Debian's chromium, headless, offline) renders every section with a silent
console and a screenshot that is not blank. Without chromium the browser tests skip only
when SUPERNODE_REQUIRE_TOOLS is unset (.ci/run sets it)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from typer.testing import CliRunner

from supernode.commands import app, register_all
from supernode.report import REPORT_FILES
from supernode.report.blocks import lookup

SERVE_FILE = Path(__file__).parent / "data" / "serve" / "llama70b-chat.yaml"
SECTION_IDS = ("summary", "verdict", "cluster", "plans", "serving", "simulation", "facility",
               "reliability", "scheduling", "monitoring", "artefacts", "reproduce", "bom",
               "findings", "decisions")
NUMBER = re.compile(r"-?\d[\d,]*\.?\d*(?:e[+-]?\d+)?")


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    """One design run of the flawed example (with simulation and the serving stage of a
    chat workload), shared by the tests here."""
    register_all()
    out = tmp_path_factory.mktemp("design") / "flawed"
    result = CliRunner().invoke(app, ["design", "--example", "flawed", "--out", str(out),
                                      "--serve", str(SERVE_FILE), "--quiet"])
    assert result.exit_code == 0, result.output
    return out


@pytest.fixture(scope="module")
def compare_report(tmp_path_factory) -> Path:
    """One side-by-side run of the two smallest presets (no simulation): the compare
    report's folder."""
    register_all()
    out = tmp_path_factory.mktemp("compare") / "two"
    result = CliRunner().invoke(app, ["design", "gb200-nvl72", "hgx-h100", "--workload",
                                      "llama3-8b", "--no-simulate", "--out", str(out),
                                      "--quiet"])
    assert result.exit_code == 0, result.output
    return out


class _Spans(HTMLParser):
    """Collects value spans (key, kind, data-value, text), section ids, and text outside
    spans, svg, style and headings."""

    SKIP = {"svg", "style", "title", "h1", "h2", "h3", "caption", "th", "summary", "nav",
            "figcaption", "script"}

    def __init__(self) -> None:
        super().__init__()
        self.values: list[dict] = []
        self.sections: list[str] = []
        self.loose: list[str] = []
        self._stack: list[str] = []
        self._span: dict | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "section":
            self.sections.append(a.get("id", ""))
        if tag == "span" and "data-key" in a:
            self._span = {**a, "text": ""}
        self._stack.append(tag)

    def handle_endtag(self, tag):
        if tag == "span" and self._span is not None:
            self.values.append(self._span)
            self._span = None
        while self._stack and self._stack.pop() != tag:
            pass

    def handle_data(self, data):
        if self._span is not None:
            self._span["text"] += data
        elif not self.SKIP & set(self._stack):
            self.loose.append(data)


def _key(text: str) -> tuple:
    return tuple(int(p) if p.isdigit() else p.replace("%2F", "/") for p in text.split("/"))


def _parsed(report: Path) -> _Spans:
    parser = _Spans()
    parser.feed((report / "report.html").read_text(encoding="utf-8"))
    return parser


def test_report_set_written(report: Path):
    for name in REPORT_FILES:
        assert (report / name).stat().st_size > 0
    data = json.loads((report / "results.json").read_text())
    assert data["schema"] == "supernode-design/1"
    assert data["simulation"] is not None and data["reviewed_plan"]["source"] == "given"


def _check_keyed_values(data: dict, parser: _Spans) -> None:
    """Every keyed span of the page shows the value at its key in ``data``: text verbatim,
    numbers as formatted within their shown digits."""
    for v in parser.values:
        value = lookup(data, _key(v["data-key"]))
        if "txt" in v["class"].split():
            assert v["text"] == ("-" if value is None else str(value)), v
            continue
        assert json.loads(v["data-value"]) == value, v
        if value is None or isinstance(value, bool) or v["data-kind"] == "text":
            continue
        shown = NUMBER.search(v["text"].replace("$", ""))
        assert shown, v
        figure = float(shown.group().replace(",", ""))
        scale = {"share": 100, "w": 1e-3, "bytes": 1e-9, "bytes_per_s": 1e-9, "ms": 1e3,
                 "j": 1e-6, "params": 1e-9, "min": 1 / 60, "h": 1 / 3600,
                 "days": 1 / 86_400}.get(v["data-kind"], 1)
        digits = shown.group().split(".")[1] if "." in shown.group() else ""
        tolerance = 0.5 * 10 ** -len(digits) + 1e-9 + abs(figure) * 5e-3
        assert abs(figure - value * scale) <= tolerance, (v, figure, value * scale)


def test_every_figure_in_the_html_is_the_one_in_results_json(report: Path):
    data = json.loads((report / "results.json").read_text())
    parser = _parsed(report)
    numbers = [v for v in parser.values if "num" in v["class"].split()]
    assert len(numbers) > 150
    _check_keyed_values(data, parser)


def test_summary_first_and_each_fact_shown_with_one_value(report: Path):
    """The executive summary opens the page with its figures keyed; the recovery policy and
    goodput read the same wherever the page shows them (issue 24)."""
    data = json.loads((report / "results.json").read_text())
    parser = _parsed(report)
    assert parser.sections[0] == "summary"
    shown: dict[str, set[str]] = {}
    for v in parser.values:
        shown.setdefault(v["data-key"], set()).add(v["text"])
    for key in ("summary/step_time_s", "summary/estimate_step_time_s", "summary/mfu",
                "summary/mfu_interval/0", "summary/tokens_per_s", "summary/power_w",
                "summary/cost_per_million_tokens_usd", "summary/goodput",
                "economics/gpu_hour/value", "economics/gpu_hour/source",
                "economics/energy/source"):
        assert key in shown, key
    policy = {t for k in ("summary/recovery_policy", "reliability/recovery/policy")
              for t in shown[k]}
    assert policy == {data["reliability"]["recovery_decision"]["policy"]}
    goodput = {t for k in ("summary/goodput", "reliability/goodput/monte_carlo/goodput/mean")
               for t in shown[k]}
    assert len(goodput) == 1
    rec = data["summary"]["reconciliation"]
    assert ("summary/reconciliation/text" in shown) == (rec is not None)


def test_no_figure_outside_a_keyed_value(report: Path):
    loose = " ".join(_parsed(report).loose)
    assert not re.findall(r"\d", loose), loose


def test_sections_and_inline_figures(report: Path):
    parser = _parsed(report)
    assert tuple(parser.sections) == SECTION_IDS
    html = (report / "report.html").read_text()
    for fig in ("supernode", "fabric", "comm-compute", "heatmap", "timeline", "power",
                "floor", "goodput", "checkpoint-interval", "failures", "scheduling-policies",
                "scheduling-slowdowns"):
        assert f'id="fig-{fig}"' in html
    assert "http://" not in html.replace("http://www.w3.org", "")
    assert "https://" not in html and "<script" not in html and "<link" not in html


def test_decision_log_is_madr(report: Path):
    text = (report / "decisions.md").read_text()
    for heading in ("### Context and problem statement", "### Considered options",
                    "### Decision outcome", "### Consequences"):
        assert text.count(heading) >= 5
    assert "tp_inside_supernode" in text and "Status: proposed" in text
    assert "## D6 Checkpoint interval and recovery path" in text
    assert "## D7 Placement policy and the topology given to the scheduler" in text


def test_checkpoint_decision_is_filled_from_the_reliability_result(report: Path):
    data = json.loads((report / "results.json").read_text())
    rel = data["reliability"]
    d6 = next(d for d in data["decisions"] if d["id"] == "D6")
    chosen = [o for o in d6["options"] if o["chosen"]]
    assert len(chosen) == 2  # one interval, one recovery path
    interval = {f["label"]: f["value"] for f in chosen[0]["figures"]}
    mc = rel["goodput"]["monte_carlo"]
    grid = mc["interval_grid_s"]
    assert interval["interval"] == rel["checkpoint"]["chosen_interval_s"] in grid
    assert interval["Monte Carlo goodput"] == mc["goodput_by_interval"][
        grid.index(interval["interval"])]
    policies = [o for o in d6["options"] if "host" in o["name"] and "what if" not in o["name"]]
    goodput = {o["name"]: o["figures"][2]["value"] for o in policies}
    assert len(goodput) == 2 and max(goodput, key=goodput.get) == chosen[1]["name"]
    restart = next(o for o in policies if o["name"].startswith("restart"))
    assert restart["figures"][1]["value"] == rel["recovery"]["rto_s"]


def test_reliability_and_monitoring_sections_show_their_results(report: Path):
    from supernode.cluster.load import load_cluster
    from supernode.design import example
    from supernode.monitor.pack import monitoring_rules

    data = json.loads((report / "results.json").read_text())
    keys = {v["data-key"] for v in _parsed(report).values}
    for i in range(len(data["reliability"]["blast_radius"])):
        assert f"reliability/blast_radius/{i}/failures_per_day" in keys
    for key in ("reliability/recovery/rto_s", "reliability/checkpoint/chosen_interval_s",
                "reliability/goodput/monte_carlo/goodput/mean",
                "reliability/hot_standby/share"):
        assert key in keys
    # the alerts listed are the monitoring pack's for this cluster (supernode monitor rules)
    alerts = monitoring_rules(load_cluster(str(example("flawed").cluster)))
    assert [a["id"] for a in data["monitoring"]["alerts"]] == [a.id for a in alerts]
    for i, a in enumerate(alerts):
        assert f"monitoring/alerts/{i}/id" in keys and f"monitoring/alerts/{i}/for_s" in keys
        assert data["monitoring"]["alerts"][i]["for_s"] == a.for_s
        assert "{{" not in data["monitoring"]["alerts"][i]["text"]


def test_json_prints_results(report: Path, tmp_path):
    result = CliRunner().invoke(app, ["design", "--example", "flawed", "--no-simulate",
                                      "--json", "--out", str(tmp_path / "j")])
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert data["verdict"]["verdict"] == "fail"
    assert json.loads((tmp_path / "j" / "results.json").read_text())["verdict"] == \
        data["verdict"]


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--enable-logging=stderr", "--v=0")



def _need_chromium() -> str:
    """The chromium binary; skip without it unless SUPERNODE_REQUIRE_TOOLS is set."""
    if CHROMIUM is None:
        if os.environ.get("SUPERNODE_REQUIRE_TOOLS"):
            pytest.fail("chromium is required (SUPERNODE_REQUIRE_TOOLS is set): "
                        "apt-get install -y chromium")
        pytest.skip("chromium not installed (set SUPERNODE_REQUIRE_TOOLS=1 to require it)")
    return CHROMIUM


def _chromium(page: Path, profile: Path, *args: str) -> subprocess.CompletedProcess:
    profile.mkdir()
    return subprocess.run([_need_chromium(), *FLAGS, f"--user-data-dir={profile}", *args,
                           page.resolve().as_uri()], capture_output=True, text=True,
                          timeout=120, check=False)


def _console(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines()
            if ":CONSOLE" in line or "Failed to load resource" in line or "net::ERR" in line]


def test_console_check_catches_an_error(tmp_path):
    page = tmp_path / "bad.html"
    page.write_text('<html><body><p>x</p><script>console.error("boom")</script></body></html>')
    run = _chromium(page, tmp_path / "profile", "--dump-dom")
    assert any("boom" in line for line in _console(run.stderr))


def test_browser_renders_every_section_silently(report, tmp_path):
    run = _chromium(report / "report.html", tmp_path / "profile", "--dump-dom")
    assert run.returncode == 0, run.stderr[-2000:]
    for section in SECTION_IDS:
        assert f'<section id="{section}">' in run.stdout
    assert run.stdout.count("<svg") >= 12
    assert _console(run.stderr) == []


def test_screenshot_is_not_blank(report, tmp_path):
    shot = tmp_path / "shot.png"
    run = _chromium(report / "report.html", tmp_path / "profile", "--window-size=1280,2400",
                    "--hide-scrollbars", f"--screenshot={shot}")
    assert run.returncode == 0 and shot.exists(), run.stderr[-2000:]
    pixels = np.asarray(Image.open(shot).convert("L"), dtype=float)
    assert pixels.shape == (2400, 1280)
    dark = (pixels < 128).mean()
    assert pixels.std() > 20 and 0.02 < dark < 0.9, (pixels.std(), dark)


def test_scheduling_section_shows_the_replay(report: Path):
    data = json.loads((report / "results.json").read_text())
    sch = data["scheduling"]
    keys = {v["data-key"] for v in _parsed(report).values}
    for i in range(len(sch["schedule"]["policies"])):
        for metric in ("tp_crossing_share", "slowdown_spread", "goodput_utilisation",
                       "mean_slowdown", "mean_queue_s"):
            assert f"scheduling/schedule/policies/{i}/{metric}" in keys
    for key in ("scheduling/seed_reference/before", "scheduling/seed_reference/after",
                "scheduling/trace_source/jobs", "scheduling/trace_source/load",
                "scheduling/schedule/shapes/step_times_estimated",
                "scheduling/comparison/goodput_gain"):
        assert key in keys
    assert sch["trace_source"]["kind"] == "philly" and data["inputs"]["seed"] == \
        sch["schedule"]["seed"]
    d7 = next(d for d in data["decisions"] if d["id"] == "D7")
    assert sum(o["chosen"] for o in d7["options"]) == 1


def test_exported_files_are_the_bytes_export_and_monitor_rules_write(report: Path, tmp_path):
    from supernode.design import example

    data = json.loads((report / "results.json").read_text())
    cluster = str(example("flawed").cluster)
    art = data["artefacts"]
    assert art["export_formats"] == ["slurm-tree", "slurm-block", "slurm-yaml", "k8s-labels",
                                     "kueue", "volcano", "nccl-xml"]
    runner = CliRunner()
    for fmt in art["export_formats"]:
        out = tmp_path / fmt
        done = runner.invoke(app, ["export", "--cluster", cluster, "--format", fmt, "--out",
                                   str(out)])
        assert done.exit_code == 0, done.output
        written = sorted(p.name for p in out.iterdir())
        assert written == sorted(p.name for p in (report / "exports" / fmt).iterdir())
        for name in written:
            assert (report / "exports" / fmt / name).read_bytes() == (out / name).read_bytes()
    out = tmp_path / "monitoring"
    done = runner.invoke(app, ["monitor", "rules", "--cluster", cluster, "--out", str(out),
                               "--prometheus-major", str(art["prometheus_major"])])
    assert done.exit_code == 0, done.output
    names = sorted(p.name for p in out.iterdir())
    assert names == sorted(p.name for p in (report / "monitoring").iterdir())
    for name in names:
        assert (report / "monitoring" / name).read_bytes() == (out / name).read_bytes()


def test_artefacts_are_listed_with_their_bytes_and_loaders(report: Path):
    import hashlib

    data = json.loads((report / "results.json").read_text())
    files = data["artefacts"]["files"]
    on_disk = sorted(str(p.relative_to(report)) for p in report.rglob("*")
                     if p.is_file() and p.parts[len(report.parts)] in ("exports", "monitoring"))
    assert sorted(f["path"] for f in files) == on_disk and data["artefacts"]["count"] == 16
    keys = {v["data-key"] for v in _parsed(report).values}
    for i, f in enumerate(files):
        body = (report / f["path"]).read_bytes()
        assert f["bytes"] == len(body) and f["sha256"] == hashlib.sha256(body).hexdigest()
        assert not f["loaded_by"].startswith("see docs")
        assert f"artefacts/files/{i}/path" in keys and f"artefacts/files/{i}/loaded_by" in keys


COMPARE_SECTIONS = ("designs", "figures", "rules", "bom")


def test_compare_report_shows_compare_json(compare_report: Path):
    """Every value of the compare page is the one in compare.json at its key; every
    headline figure and every rule of both designs is on it; nothing outside a key."""
    data = json.loads((compare_report / "compare.json").read_text())
    parser = _parsed(compare_report)
    assert tuple(parser.sections) == COMPARE_SECTIONS
    _check_keyed_values(data, parser)
    keys = {v["data-key"] for v in parser.values}
    for i, f in enumerate(data["figures"]):
        assert {f"figures/{i}/values/0", f"figures/{i}/values/1"} <= keys, f["id"]
    for i in range(len(data["rules"])):
        assert {f"rules/{i}/statuses/0", f"rules/{i}/statuses/1"} <= keys
    assert not re.findall(r"\d", " ".join(parser.loose))
    for label in ("a", "b"):
        results = json.loads((compare_report / label / "results.json").read_text())
        assert results["schema"] == "supernode-design/1"
        assert [r["id"] for r in data["rules"]] == [f["id"] for f in results["findings"]]
    html = (compare_report / "report.html").read_text()
    assert "https://" not in html and "<script" not in html and "<link" not in html
    for label in ("a", "b"):  # each design's own report, linked from its row
        assert f'<a href="{label}/report.html">' in html
        assert (compare_report / label / "report.html").is_file()


def test_browser_renders_the_compare_report_silently(compare_report, tmp_path):
    run = _chromium(compare_report / "report.html", tmp_path / "profile", "--dump-dom")
    assert run.returncode == 0, run.stderr[-2000:]
    for section in COMPARE_SECTIONS:
        assert f'<section id="{section}">' in run.stdout
    assert _console(run.stderr) == []


def _json_at(data, path: str):
    """The value at key path ``path`` (parts joined by /; empty: the whole document)."""
    for part in path.split("/") if path else ():
        data = data[int(part)] if isinstance(data, list) else data[part]
    return data


def test_every_reproduce_command_printed_in_the_report_gives_its_figures(report: Path,
                                                                         monkeypatch):
    """Issue 26: each command the report prints beside a section, run from the report
    folder, gives that section's figures exactly (same inputs, same seed): the topology,
    the estimate, the simulation, the facility at the simulated step, reliability, the
    scheduling replay, the exported and monitoring files (by hash), and the rules'
    findings and verdict (``check``, which exits 1 as the verdict's errors say)."""
    import hashlib
    import shlex

    data = json.loads((report / "results.json").read_text())
    shown = {v["data-key"]: v["text"] for v in _parsed(report).values}
    commands = [shown[f"reproduce/commands/{i}/command"]
                for i in range(len(data["reproduce"]["commands"]))]
    assert {c["stage"] for c in data["reproduce"]["commands"]} >= {
        "topology", "plan", "simulate", "facility", "reliability", "scheduling", "artefacts",
        "rules"}
    assert data["verdict"]["errors"]  # the flawed example: check must exit 1
    facility = next(c for c in data["reproduce"]["commands"] if c["stage"] == "facility")
    assert "--simulate" in shlex.split(facility["command"])  # the review simulated
    assert (report / data["reproduce"]["plan_file"]).is_file()
    monkeypatch.chdir(report)
    checked = 0
    for entry, command in zip(data["reproduce"]["commands"], commands, strict=True):
        argv = shlex.split(command)
        assert argv[0] == "supernode"
        result = CliRunner().invoke(app, argv[1:])
        expected = 1 if entry["stage"] == "rules" and data["verdict"]["errors"] else 0
        assert result.exit_code == expected, (command, result.output[-2000:])
        out = json.loads(result.stdout) if "--json" in argv else None
        for figure in entry["figures"]:
            want = _json_at(data, figure["results"])
            if figure["command_json"] is not None:
                assert _json_at(out, figure["command_json"]) == want, (command, figure)
            else:  # a file the command wrote, compared by its hash with the review's
                row = _json_at(data, figure["results"].rsplit("/", 1)[0])
                written = report / "reproduced" / row["path"]
                assert hashlib.sha256(written.read_bytes()).hexdigest() == want, written
            checked += 1
    assert checked >= 30


def test_reproduce_leaves_no_stage_to_design_alone(report: Path):
    data = json.loads((report / "results.json").read_text())
    assert data["reproduce"]["stages_without_command"] == []
    assert "Computed only by design and check" not in (report / "report.html").read_text()
    plan = (report / "reviewed-plan.yaml").read_text()
    assert "rank_order:" in plan and f"tp: {data['reviewed_plan']['tp']}" in plan

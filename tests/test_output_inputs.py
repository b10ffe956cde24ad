"""Outputs never overwrite or remove a command's own inputs, and output folders given as a
symbolic link are refused: exit 2, one ``error:`` line naming the option."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from supernode.commands import app, register_all
from supernode.errors import InputError
from supernode.outputs import check_not_holding_inputs, check_output_folder

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "h100-4su.yaml"
SMALL = ("--workload", "llama3-8b")


def run(*args: object):
    register_all()
    return CliRunner().invoke(app, [str(a) for a in args])


def assert_refused(result, option: str) -> None:
    assert result.exit_code == 2, (result.exit_code, result.output)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {option}:"), result.stderr


def test_folder_holding_an_input_is_refused_via_symlinks_too(tmp_path: Path) -> None:
    folder = tmp_path / "out"
    (folder / "deep").mkdir(parents=True)
    source = folder / "deep" / "c.yaml"
    source.write_text("x", encoding="utf-8")
    (tmp_path / "alias").symlink_to(folder)
    (tmp_path / "link.yaml").symlink_to(source)
    for given in (source, tmp_path / "alias" / "deep" / "c.yaml", tmp_path / "link.yaml"):
        with pytest.raises(InputError, match="one of this command's inputs"):
            check_not_holding_inputs(folder, "--out", [given])
    check_not_holding_inputs(tmp_path / "elsewhere", "--out", [source, "flagship"])
    with pytest.raises(InputError, match="symbolic link"):
        check_output_folder(tmp_path / "alias", "--out")
    with pytest.raises(InputError, match="symbolic link"):
        check_output_folder(f"{tmp_path / 'alias'}/", "--out")


def _inside(tmp_path: Path, name: str = "topology.yaml") -> tuple[Path, Path]:
    folder = tmp_path / "set"
    folder.mkdir()
    shutil.copy(EXAMPLE, folder / name)
    return folder, folder / name


@pytest.mark.parametrize("args", [
    ("export", "--format", "all", "--cluster", "{input}", "--out", "{folder}"),
    ("monitor", "rules", "--cluster", "{input}", "--out", "{folder}"),
    ("design", "--cluster", "{input}", *SMALL, "--out", "{folder}"),
    ("reliability", "--cluster", "{input}", *SMALL, "--runs", "2", "--plot", "{folder}"),
    ("schedule", "--cluster", "{input}", "--trace", "synthetic", "--jobs", "10",
     "--policy", "first-fit", "--plot", "{folder}"),
    ("simulate", "--cluster", "{input}", *SMALL, "--plot", "{folder}"),
])
def test_output_folder_holding_the_input_is_refused(tmp_path: Path, args) -> None:
    folder, source = _inside(tmp_path)
    before = source.read_bytes()
    filled = [a.format(input=source, folder=folder) for a in args]
    option = args[args.index("{folder}") - 1]
    assert_refused(run(*filled), option)
    assert source.read_bytes() == before
    assert sorted(p.name for p in folder.iterdir()) == ["topology.yaml"]


def test_monitor_config_inside_the_output_folder_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "mo"
    folder.mkdir()
    config = folder / "rules.yaml"
    config.write_text("disabled_rules: []\n", encoding="utf-8")
    assert_refused(run("monitor", "rules", "--cluster", EXAMPLE, "--config", config,
                       "--out", folder), "--out")


@pytest.mark.parametrize("command", [("bench-plan",), ("calibrate",)])
def test_file_output_equal_to_the_cluster_is_refused(tmp_path: Path, command) -> None:
    cluster = tmp_path / "c.yaml"
    shutil.copy(EXAMPLE, cluster)
    results = () if command == ("bench-plan",) else (str(tmp_path / "none.log"),)
    assert_refused(run(*command, "--cluster", cluster, *results, "--out", cluster), "--out")
    assert cluster.read_bytes() == EXAMPLE.read_bytes()


def test_bench_plan_symlink_refusal_names_the_option(tmp_path: Path) -> None:
    (tmp_path / "real.sh").write_text("", encoding="utf-8")
    (tmp_path / "link.sh").symlink_to(tmp_path / "real.sh")
    assert_refused(run("bench-plan", "--cluster", EXAMPLE, "--out", tmp_path / "link.sh"),
                   "--out")


@pytest.mark.parametrize("args", [
    ("export", "--format", "all", "--cluster", EXAMPLE, "--out"),
    ("monitor", "rules", "--cluster", EXAMPLE, "--out"),
    ("simulate", "--cluster", EXAMPLE, *SMALL, "--plot"),
    ("reliability", "--cluster", EXAMPLE, *SMALL, "--runs", "2", "--plot"),
    ("sweep", "{spec}", "--out"),
])
def test_symlinked_output_folder_is_refused(tmp_path: Path, args) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    spec = tmp_path / "spec.yaml"
    spec.write_text("name: s\nbase: {cluster: dgx-h100-superpod-su, workload: llama3-8b}\n"
                    "axes: {plan.global_batch: [128]}\n", encoding="utf-8")
    filled = [str(a).format(spec=spec) for a in args]
    assert_refused(run(*filled, tmp_path / "link"), args[-1])
    assert list(real.iterdir()) == []

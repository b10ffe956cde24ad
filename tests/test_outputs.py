"""The one output path (``supernode.outputs``): never clobber, never half-write.

Refusals (symlink, FIFO, device, folder, read-only, another user's file in a sticky
folder, the command's own input, a trailing ``/``, ``..`` through missing folders), atomic
single files, and sets of files moved into place all or none: a property test fails the
commit at every possible point and checks that the folder is exactly as before.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from supernode import outputs
from supernode.errors import InputError
from supernode.outputs import (
    atomic_path,
    check_output_file,
    check_output_folder,
    output_folder,
    write_text,
)


def tree(folder: Path) -> dict[str, bytes | str]:
    """Everything under ``folder``: file contents, or ``"dir"``, ``"link"``, ``"other"``."""
    out: dict[str, bytes | str] = {}
    for path in sorted(folder.rglob("*")):
        key = str(path.relative_to(folder))
        mode = path.lstat().st_mode
        out[key] = "link" if stat.S_ISLNK(mode) else "dir" if stat.S_ISDIR(mode) \
            else path.read_bytes() if stat.S_ISREG(mode) else "other"
    return out


@pytest.mark.parametrize("make, fragment", [
    (lambda p: os.symlink("/etc/hostname", p), "symbolic link"),
    (lambda p: os.mkfifo(p), "not a regular file"),
    (lambda p: p.mkdir(), "is a folder"),
    (lambda p: (p.write_text("x"), p.chmod(0o444)), "read-only"),
])
def test_refuses_to_replace_what_is_not_a_plain_file(tmp_path: Path, make, fragment) -> None:
    target = tmp_path / "target"
    make(target)
    before = tree(tmp_path)
    with pytest.raises(InputError, match=fragment):
        write_text(target, "new\n", "--output")
    assert tree(tmp_path) == before


def test_refuses_a_device(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="not a regular file"):
        check_output_file("/dev/null", "--output")


def test_refuses_another_users_file_in_a_sticky_folder(tmp_path: Path, monkeypatch) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    theirs = shared / "theirs.yaml"
    theirs.write_text("theirs\n")
    monkeypatch.setattr(outputs.os, "geteuid", lambda: theirs.stat().st_uid + 1)
    with pytest.raises(InputError, match="another user"):
        write_text(theirs, "mine\n", "--output")
    assert theirs.read_text() == "theirs\n"


def test_refuses_the_commands_own_input(tmp_path: Path) -> None:
    source = tmp_path / "in.txt"
    source.write_text("input\n")
    os.link(source, tmp_path / "hard.txt")
    for target in (source, tmp_path / "hard.txt", tmp_path / "." / "in.txt"):
        with pytest.raises(InputError, match="one of this command's inputs"):
            write_text(target, "x", "--output", inputs=[source])
    assert source.read_text() == "input\n"


@pytest.mark.parametrize("path", ["sub/", "sub/.", "..", "x/"])
def test_refuses_folder_names_for_a_file(tmp_path: Path, path: str) -> None:
    with pytest.raises(InputError, match="names a folder"):
        check_output_file(f"{tmp_path}/{path}" if path != ".." else path, "--output")


def test_dotdot_only_through_existing_folders(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="not an existing folder"):
        check_output_folder(str(tmp_path / "x" / ".." / "y" / ".." / ".." / "d"), "--plot")
    assert list(tmp_path.iterdir()) == []
    (tmp_path / "x").mkdir()
    assert check_output_folder(str(tmp_path / "x" / ".." / "d"), "--plot")


def test_atomic_write_keeps_the_old_file_and_its_mode(tmp_path: Path, monkeypatch) -> None:
    target = tmp_path / "host.yaml"
    target.write_text("old\n")
    target.chmod(0o640)

    def broken(*args, **kwargs):
        raise OSError(28, "No space left on device")

    with monkeypatch.context() as patch:
        patch.setattr(outputs.os, "replace", broken)
        with pytest.raises(InputError, match="No space left"):
            write_text(target, "new\n", "--output")
    assert tree(tmp_path) == {"host.yaml": b"old\n"}
    write_text(target, "new\n", "--output")
    assert target.read_text() == "new\n" and stat.S_IMODE(target.stat().st_mode) == 0o640


def test_atomic_path_leaves_nothing_on_error(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError), atomic_path(tmp_path / "f.txt") as tmp:
        tmp.write_text("half")
        raise RuntimeError("stop")
    assert list(tmp_path.iterdir()) == []


def test_new_folder_appears_whole_with_its_parents(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "plots"
    with pytest.raises(RuntimeError), output_folder(target, "--plot") as staging:
        (staging / "one.png").write_bytes(b"1")
        raise RuntimeError("part-way")
    assert list(tmp_path.iterdir()) == []  # no parents, no staging
    with output_folder(target, "--plot") as staging:
        (staging / "one.png").write_bytes(b"1")
        (staging / "two.png").write_bytes(b"2")
        assert not target.exists()
    assert tree(tmp_path / "a") == {"b": "dir", "b/plots": "dir", "b/plots/one.png": b"1",
                                    "b/plots/two.png": b"2"}


def test_existing_folder_refuses_a_non_regular_target_before_moving(tmp_path: Path) -> None:
    target = tmp_path / "out"
    target.mkdir()
    (target / "a.png").write_bytes(b"old a")
    os.symlink("/etc/hostname", target / "b.png")
    before = tree(tmp_path)
    with pytest.raises(InputError, match="symbolic link"), \
            output_folder(target, "--plot") as staging:
        (staging / "a.png").write_bytes(b"new a")
        (staging / "b.png").write_bytes(b"new b")
    assert tree(tmp_path) == before


@settings(max_examples=40, deadline=None)
@given(old=st.dictionaries(st.sampled_from("abcde"), st.binary(max_size=3), max_size=4),
       new=st.dictionaries(st.sampled_from("abcde"), st.binary(max_size=3), min_size=1,
                           max_size=4),
       fail_at=st.integers(0, 12))
def test_a_set_is_moved_all_or_nothing(tmp_path_factory, old: dict, new: dict,
                                       fail_at: int) -> None:
    """Fail the commit's ``fail_at``-th rename (or none): the folder is then exactly as
    before, else it holds the old files updated by the new set; no staging is left."""
    home = tmp_path_factory.mktemp("set")
    target = home / "out"
    target.mkdir()
    for name, data in old.items():
        (target / name).write_bytes(data)
    before = tree(home)
    calls = {"n": 0}
    real = os.rename

    def flaky(src, dst):
        calls["n"] += 1
        if calls["n"] == fail_at:
            raise OSError(5, "I/O error")
        return real(src, dst)

    outputs.os.rename = flaky
    try:
        with output_folder(target, "--out") as staging:
            for name, data in new.items():
                (staging / name).write_bytes(data)
        failed = False
    except InputError:
        failed = True
    finally:
        outputs.os.rename = real
    expected = before if failed else {**before, **{f"out/{k}": v for k, v in new.items()}}
    assert tree(home) == expected


# Through the commands ---------------------------------------------------------------------
TOPO = Path(__file__).resolve().parents[1] / "src/supernode/data/samples/" \
    "nvidia-smi-topo-m_8xB300.txt"


@pytest.mark.parametrize("target, fragment", [
    ("link", "symbolic link"), ("fifo", "not a regular file"),
    ("/dev/null", "not a regular file"), ("ro.yaml", "read-only"),
    ("sub/", "names a folder"), ("topo.txt", "one of this command's inputs"),
    ("x/../y/../../d.yaml", "not an existing folder")])
def test_import_output_refusals(tmp_path: Path, target: str, fragment: str) -> None:
    from test_robust_defects import assert_bad_input, run

    (tmp_path / "topo.txt").write_bytes(TOPO.read_bytes())
    os.symlink("/etc/hostname", tmp_path / "link")
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "ro.yaml").write_text("keep\n")
    (tmp_path / "ro.yaml").chmod(0o444)
    before = tree(tmp_path)
    assert_bad_input(run("import", "nvidia-smi-topo", "topo.txt", "--accelerator", "gb300",
                         "--output", target, cwd=tmp_path), fragment)
    assert tree(tmp_path) == before


def test_plot_path_through_missing_folders_is_refused_before_the_run(tmp_path: Path) -> None:
    from test_robust_defects import assert_bad_input, run

    assert_bad_input(run("simulate", "--cluster", "hgx-h100", "--workload", "llama3-8b",
                         "--plot", "x/../y/../../d", cwd=tmp_path), "not an existing folder")
    assert list(tmp_path.iterdir()) == []


def test_duplicate_json_keys_through_a_command(tmp_path: Path) -> None:
    from test_robust_defects import assert_bad_input, run

    (tmp_path / "c.json").write_text('{"name": "a", "name": "b"}')
    assert_bad_input(run("topology", str(tmp_path / "c.json")), "'name' is given twice")

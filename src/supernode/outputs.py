"""Writing result files safely: checked before a run, never half-written, never clobbering.

One output path for every command:

* :func:`check_output_file` / :func:`check_output_folder` run *before* the work, so a bad
  path costs nothing (:mod:`supernode.output_checks`: text the OS takes, no ``..`` through
  missing folders, nothing replaced but a regular file of ours that is not an input, no
  output folder that is a symlink or holds an input). Commands pass every file they read
  as ``inputs``.
* :func:`write_text` / :func:`atomic_path` write one file through a fresh temporary file
  in the same folder (``O_EXCL``), renamed over the target only when complete.
* :func:`output_folder` stages a whole set of files and moves them into place all or
  nothing; a failure or a signal at any point leaves the folder as it was.

Every OS error becomes an :class:`InputError` naming the option (:func:`output_errors`),
so bad paths exit with code 2 and no traceback.
"""

from __future__ import annotations

import os
import secrets
import shutil
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from supernode.errors import InputError
from supernode.inputs import exists
from supernode.output_checks import (
    Inputs,
    check_not_holding_inputs,
    check_output_file,
    check_output_folder,
    check_replaceable,
    nearest_existing,
    output_errors,
    shown,
)
from supernode.shutdown import deferred_signals

__all__ = ["Inputs", "atomic_path", "check_not_holding_inputs", "check_output_file",
           "check_output_folder", "check_replaceable", "output_errors", "output_folder",
           "write_text"]


def _temp_name(name: str) -> str:
    return f".{name[:100]}.{secrets.token_hex(4)}"


def _keep_mode(new: str | Path, old: str | Path) -> None:
    """Give ``new`` the permission bits of ``old`` (when it exists), else 0o666 less umask."""
    try:
        mode = os.stat(old).st_mode & 0o777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    os.chmod(new, mode)


@contextmanager
def atomic_path(path: Path, option: str = "", inputs: Inputs = (), executable: bool = False
                ) -> Iterator[Path]:
    """A fresh temporary path beside ``path``, renamed onto it on success (never
    half-written). What is at ``path`` must be replaceable (:func:`check_replaceable`,
    checked before and again just before the rename). The file gets the permission bits
    of what it replaces (else 0o666 less the umask); ``executable`` adds an execute bit
    beside every read bit (a script)."""
    path = Path(path)
    check_replaceable(path, option, inputs)
    tmp: Path | None = None
    try:
        with deferred_signals():  # a signal cannot land between creating and recording it
            handle, name = tempfile.mkstemp(dir=path.parent, prefix=_temp_name(path.name),
                                            suffix=".tmp")
            os.close(handle)
            tmp = Path(name)
        yield tmp
        check_replaceable(path, option, inputs)
        _keep_mode(tmp, path)
        if executable:
            mode = os.stat(tmp).st_mode & 0o777
            os.chmod(tmp, mode | (mode & 0o444) >> 2)
        os.replace(tmp, path)
    finally:
        if tmp is not None:
            with suppress(OSError):
                tmp.unlink()


def write_text(path: str | Path, text: str, option: str, inputs: Inputs = (),
               executable: bool = False) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically: the whole new file or the old one
    untouched (``executable``: a script, :func:`atomic_path`). Checks as
    :func:`check_output_file`; OS errors are InputErrors at ``option``."""
    target = check_output_file(path, option, inputs)
    with output_errors(target, option), \
            atomic_path(target, option, inputs, executable) as tmp, \
            open(tmp, "w", encoding="utf-8") as stream:
        stream.write(text)
        stream.flush()
        os.fsync(stream.fileno())
    return target


@contextmanager
def output_folder(directory: str | Path, option: str, inputs: Inputs = ()) -> Iterator[Path]:
    """Stage a set of result files; ``directory`` gets all of them or none (exit 2 on OSError).

    Yields an empty staging folder: inside ``directory`` when it exists, else beside its
    nearest existing ancestor. Write every file of the set there (files, and sub-folders
    that belong to the set, e.g. ``figures/``). On success the set is moved into place with
    signals held back: a new ``directory`` is the staging folder renamed (missing parents
    are created); an existing folder receives each staged file, replacing files of the same
    names (each must be replaceable, :func:`check_replaceable`), and each staged sub-folder
    whole (a sub-folder of the same name is swapped out, so no stale files of an earlier set
    remain in it). All are checked before any move, and a failure part-way puts the old
    entries back. Other entries are kept. On any exception or signal the staging folder is
    removed and ``directory`` is left as it was.
    """
    inputs = tuple(inputs)
    target = check_output_folder(directory, option, inputs)
    existed = target.is_dir()
    home = target if existed else nearest_existing(target)
    staging: Path | None = None
    try:
        with output_errors(target, option), deferred_signals():  # created = recorded
            staging = Path(tempfile.mkdtemp(dir=home, prefix=_temp_name(target.name),
                                            suffix=".staging"))
        yield staging
        with output_errors(target, option), deferred_signals():
            if existed:
                _merge_into(staging, target, option, inputs)
            else:
                _rename_into(staging, target, option)
    finally:
        if staging is not None:
            shutil.rmtree(staging, ignore_errors=True)


def _rename_into(staging: Path, target: Path, option: str) -> None:
    """Create ``target``'s missing parents and rename ``staging`` to it (undo on failure)."""
    if exists(target):
        raise InputError(option, f"{shown(target)} appeared while the command ran; run it "
                                 "again")
    made: list[Path] = []
    parent = target.absolute().parent
    while not exists(parent):
        made.append(parent)
        parent = parent.parent
    try:
        for folder in reversed(made):
            folder.mkdir()
        os.chmod(staging, 0o777 & ~_umask())
        os.rename(staging, target)
    except BaseException:
        for folder in made:
            with suppress(OSError):
                folder.rmdir()
        raise


def _merge_into(staging: Path, target: Path, option: str, inputs: tuple[str | Path, ...]
                ) -> None:
    """Move each staged entry into ``target`` (all checked first; rolled back on failure)."""
    names = sorted(p.name for p in staging.iterdir())
    for name in names:
        if (staging / name).is_dir():
            _check_replaceable_folder(target / name, option)
        elif (staging / name).is_file():
            check_replaceable(target / name, option, inputs)
        else:
            raise InputError(option, f"internal: staged {name!r} is not a file or folder")
    backup = staging / f".old-{secrets.token_hex(4)}"
    backup.mkdir()
    moved: list[tuple[str, bool]] = []
    try:
        for name in names:
            had_old = exists(target / name)
            if had_old:
                if (staging / name).is_file():
                    _keep_mode(staging / name, target / name)
                os.rename(target / name, backup / name)
            moved.append((name, had_old))
            os.rename(staging / name, target / name)
    except BaseException:
        for name, had_old in reversed(moved):
            if exists(target / name) and not exists(staging / name):
                with suppress(OSError):  # the new entry got in: take it out again
                    _remove(target / name)
            if had_old:
                with suppress(OSError):
                    os.rename(backup / name, target / name)
        raise


def _check_replaceable_folder(path: Path, option: str) -> None:
    """Refuse to replace what is at ``path`` with a staged folder unless it is a real folder
    (or nothing)."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
        kind = "a symbolic link" if stat.S_ISLNK(info.st_mode) else "a file"
        raise InputError(option, f"{shown(path)} is {kind} where the output has a folder; "
                                 "move it away")


def _remove(path: Path) -> None:
    """Remove a file or a folder tree at ``path`` (what a rollback put there)."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        os.unlink(path)


def _umask() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return umask

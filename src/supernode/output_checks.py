"""Checking an output path before a run, so a bad path costs nothing.

:func:`check_output_file` / :func:`check_output_folder` (used by :mod:`supernode.outputs`
before and while it writes): the path must be text the OS takes (:func:`supernode.inputs.
check_path_text`), every ``..`` in it must follow a folder that exists (``x/../d`` with no
``x`` would create a stray ``x``), a file path may not end with ``/``, and what is already
there must be replaceable (:func:`check_replaceable`): a regular file (not a symlink, FIFO,
device or folder), not read-only, not another user's file in a sticky folder such as
``/tmp``, and not one of the command's own inputs. An output folder may not be a symbolic
link, nor hold any of the command's input files at any depth (a set written there could
replace or remove them; symlinks resolved): :func:`check_not_holding_inputs`. Commands
pass every file they read as ``inputs``.

Every refusal, and every OS error met while writing (:func:`output_errors`), is an
:class:`InputError` naming the option, so bad paths exit with code 2 and no traceback.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from supernode.errors import InputError
from supernode.inputs import check_path_text, exists, is_file, same_file

Inputs = Iterable[str | Path]


def shown(path: str | Path) -> str:
    """``path`` as it appears in a message: quoted, control characters made visible."""
    from supernode.textsafe import printable

    return repr(printable(os.fspath(path)))


def _check_dotdots(text: str, option: str) -> None:
    """Every ``..`` must follow a folder that exists (the OS resolves it, nothing is made)."""
    parts = text.split("/")
    if ".." not in parts:
        return
    last = len(parts) - 1 - parts[::-1].index("..")
    prefix = "/".join(parts[: last + 1]) or "/"
    if not os.path.isdir(prefix):
        raise InputError(option, f"{shown(text)} goes through {shown(prefix)}, which is not "
                                 "an existing folder; give a path without '..' through "
                                 "folders that do not exist")


def _check_parent(folder: Path, option: str, what: str) -> None:
    if not folder.is_dir():
        raise InputError(option, f"cannot create {what}: {shown(folder)} is not a folder")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise InputError(option, f"cannot create {what}: folder {shown(folder)} is not "
                                 "writable")


def check_replaceable(path: str | Path, option: str, inputs: Inputs = ()) -> None:
    """Refuse (InputError at ``option``) to replace what is at ``path`` unless it is a
    regular file we may replace; nothing there is fine."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise InputError(option, f"cannot write {shown(path)}: {exc.strerror}") from None
    if stat.S_ISLNK(info.st_mode):
        raise InputError(option, f"{shown(path)} is a symbolic link; refusing to replace or "
                                 "follow it (give the real file or a new name)")
    if not stat.S_ISREG(info.st_mode):
        kind = "a folder" if stat.S_ISDIR(info.st_mode) else "not a regular file (a FIFO, " \
                                                             "device or socket)"
        raise InputError(option, f"{shown(path)} is {kind}; give a file name (existing "
                                 "regular file or new)")
    if not info.st_mode & 0o222:
        raise InputError(option, f"{shown(path)} is read-only; refusing to replace it")
    folder = os.path.dirname(os.fspath(path)) or "."
    with suppress(OSError):
        sticky = os.stat(folder).st_mode & stat.S_ISVTX
        if sticky and info.st_uid != os.geteuid():
            raise InputError(option, f"{shown(path)} belongs to another user in a shared "
                                     "(sticky) folder; refusing to replace it")
    for source in inputs:
        if same_file(path, source):
            raise InputError(option, f"{shown(path)} is one of this command's inputs; "
                                     "write the output elsewhere")


def check_output_file(path: str | Path, option: str, inputs: Inputs = ()) -> Path:
    """``path`` as a :class:`Path` if a result file can be written there (its folder exists
    and is writable, and what is there may be replaced); InputError at ``option``."""
    text = check_path_text(path, option)
    if text.endswith("/") or text.endswith("/.") or text in (".", ".."):
        raise InputError(option, f"{shown(text)} names a folder; give a file name")
    _check_dotdots(text, option)
    target = Path(text)
    folder = target.parent
    if not os.path.isdir(folder):
        raise InputError(option, f"folder {shown(folder)} does not exist")
    _check_parent(folder, option, f"file {shown(text)}")
    check_replaceable(target, option, inputs)
    return target


def check_not_holding_inputs(directory: str | Path, option: str, inputs: Inputs = ()) -> None:
    """Refuse (InputError at ``option``) an output folder that is, or holds at any depth,
    one of the command's input files (paths resolved, so a symlink to the folder or to the
    input counts): writing a set there could replace the input or remove it with a swapped
    sub-folder. Inputs that are not files (preset names) are ignored."""
    root = os.path.realpath(directory)
    for source in inputs:
        if not is_file(source):
            continue
        real = os.path.realpath(source)
        if real == root or os.path.commonpath([root, real]) == root:
            raise InputError(option, f"{shown(directory)} holds {shown(source)}, one of this "
                                     "command's inputs; write the output elsewhere")


def _check_not_a_link(text: str, option: str) -> None:
    """Refuse an output folder given as a symbolic link (as a file output is refused)."""
    bare = text.rstrip("/")
    if bare and os.path.islink(bare):
        raise InputError(option, f"{shown(bare)} is a symbolic link; refusing to follow it "
                                 "(give the real folder or a new name)")


def check_output_folder(directory: str | Path, option: str, inputs: Inputs = ()) -> Path:
    """``directory`` if it is a writable folder or can be created, not a symbolic link, and
    holds none of ``inputs`` (:func:`check_not_holding_inputs`); InputError at ``option``."""
    text = check_path_text(directory, option)
    _check_dotdots(text, option)
    _check_not_a_link(text, option)
    path = Path(text)
    check_not_holding_inputs(path, option, inputs)
    if exists(path):
        if not path.is_dir():
            raise InputError(option, f"{shown(path)} exists and is not a folder; give a "
                                     f"folder (existing or new) for the output")
        if not os.access(path, os.W_OK | os.X_OK):
            raise InputError(option, f"folder {shown(path)} is not writable")
        return path
    _check_parent(nearest_existing(path), option, f"folder {shown(path)}")
    return path


def nearest_existing(path: Path) -> Path:
    """The nearest folder above ``path`` (made absolute) that exists."""
    parent = path.absolute().parent
    while not exists(parent):
        parent = parent.parent
    return parent


@contextmanager
def output_errors(directory: str | Path, option: str) -> Iterator[None]:
    """Turn an OSError raised while writing into an :class:`InputError` at ``option``."""
    try:
        yield
    except OSError as exc:
        raise InputError(option, f"cannot write to {shown(directory)}: "
                                 f"{exc.strerror or exc}") from None

"""Writing result files safely: checked before a run, never half-written, never clobbering.

One output path for every command:

* :func:`check_output_file` / :func:`check_output_folder` run *before* the work, so a bad
  path costs nothing: the path must be text the OS takes (:func:`supernode.inputs.
  check_path_text`), every ``..`` in it must follow a folder that exists (``x/../d`` with
  no ``x`` would create a stray ``x``), a file path may not end with ``/``, and what is
  already there must be replaceable (:func:`check_replaceable`): a regular file (not a
  symlink, FIFO, device or folder), not read-only, not another user's file in a sticky
  folder such as ``/tmp``, and not one of the command's own inputs. An output folder may
  not be a symbolic link, nor hold any of the command's input files at any depth (a set
  written there could replace or remove them; symlinks resolved):
  :func:`check_not_holding_inputs`. Commands pass every file they read as ``inputs``.
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
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from supernode.errors import InputError
from supernode.inputs import check_path_text, exists, is_file, same_file
from supernode.shutdown import deferred_signals

Inputs = Iterable[str | Path]


def _show(path: str | Path) -> str:
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
        raise InputError(option, f"{_show(text)} goes through {_show(prefix)}, which is not "
                                 "an existing folder; give a path without '..' through "
                                 "folders that do not exist")


def _check_parent(folder: Path, option: str, what: str) -> None:
    if not folder.is_dir():
        raise InputError(option, f"cannot create {what}: {_show(folder)} is not a folder")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise InputError(option, f"cannot create {what}: folder {_show(folder)} is not "
                                 "writable")


def check_replaceable(path: str | Path, option: str, inputs: Inputs = ()) -> None:
    """Refuse (InputError at ``option``) to replace what is at ``path`` unless it is a
    regular file we may replace; nothing there is fine."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise InputError(option, f"cannot write {_show(path)}: {exc.strerror}") from None
    if stat.S_ISLNK(info.st_mode):
        raise InputError(option, f"{_show(path)} is a symbolic link; refusing to replace or "
                                 "follow it (give the real file or a new name)")
    if not stat.S_ISREG(info.st_mode):
        kind = "a folder" if stat.S_ISDIR(info.st_mode) else "not a regular file (a FIFO, " \
                                                             "device or socket)"
        raise InputError(option, f"{_show(path)} is {kind}; give a file name (existing "
                                 "regular file or new)")
    if not info.st_mode & 0o222:
        raise InputError(option, f"{_show(path)} is read-only; refusing to replace it")
    folder = os.path.dirname(os.fspath(path)) or "."
    with suppress(OSError):
        sticky = os.stat(folder).st_mode & stat.S_ISVTX
        if sticky and info.st_uid != os.geteuid():
            raise InputError(option, f"{_show(path)} belongs to another user in a shared "
                                     "(sticky) folder; refusing to replace it")
    for source in inputs:
        if same_file(path, source):
            raise InputError(option, f"{_show(path)} is one of this command's inputs; "
                                     "write the output elsewhere")


def check_output_file(path: str | Path, option: str, inputs: Inputs = ()) -> Path:
    """``path`` as a :class:`Path` if a result file can be written there (its folder exists
    and is writable, and what is there may be replaced); InputError at ``option``."""
    text = check_path_text(path, option)
    if text.endswith("/") or text.endswith("/.") or text in (".", ".."):
        raise InputError(option, f"{_show(text)} names a folder; give a file name")
    _check_dotdots(text, option)
    target = Path(text)
    folder = target.parent
    if not os.path.isdir(folder):
        raise InputError(option, f"folder {_show(folder)} does not exist")
    _check_parent(folder, option, f"file {_show(text)}")
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
            raise InputError(option, f"{_show(directory)} holds {_show(source)}, one of this "
                                     "command's inputs; write the output elsewhere")


def _check_not_a_link(text: str, option: str) -> None:
    """Refuse an output folder given as a symbolic link (as a file output is refused)."""
    bare = text.rstrip("/")
    if bare and os.path.islink(bare):
        raise InputError(option, f"{_show(bare)} is a symbolic link; refusing to follow it "
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
            raise InputError(option, f"{_show(path)} exists and is not a folder; give a "
                                     f"folder (existing or new) for the output")
        if not os.access(path, os.W_OK | os.X_OK):
            raise InputError(option, f"folder {_show(path)} is not writable")
        return path
    _check_parent(_nearest_existing(path), option, f"folder {_show(path)}")
    return path


def _nearest_existing(path: Path) -> Path:
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
        raise InputError(option, f"cannot write to {_show(directory)}: "
                                 f"{exc.strerror or exc}") from None


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
    home = target if existed else _nearest_existing(target)
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
        raise InputError(option, f"{_show(target)} appeared while the command ran; run it "
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
        raise InputError(option, f"{_show(path)} is {kind} where the output has a folder; "
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

"""Writing result files safely: folders checked before a run, no half-written files.

Commands that write a folder of results (``simulate --plot``, ``sweep --out``) check the
folder first (:func:`check_output_folder`), write each file through a temporary path that is
renamed into place (:func:`atomic_path`), and turn OS errors into an :class:`InputError`
naming the option (:func:`output_errors`), so bad paths exit with code 2 and no traceback.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from supernode.errors import InputError


def check_output_folder(directory: str | Path, option: str) -> Path:
    """``directory`` if it is a writable folder or can be created; InputError at ``option``."""
    path = Path(directory)
    if path.exists():
        if not path.is_dir():
            raise InputError(option, f"{str(path)!r} exists and is not a folder; give a "
                                     f"folder (existing or new) for the output")
        if not os.access(path, os.W_OK | os.X_OK):
            raise InputError(option, f"folder {str(path)!r} is not writable")
        return path
    parent = path.absolute().parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        raise InputError(option, f"cannot create folder {str(path)!r}: {str(parent)!r} is "
                                 f"not a folder")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise InputError(option, f"cannot create folder {str(path)!r}: {str(parent)!r} is "
                                 f"not writable")
    return path


@contextmanager
def output_errors(directory: Path, option: str) -> Iterator[None]:
    """Turn an OSError raised while writing into an :class:`InputError` at ``option``."""
    try:
        yield
    except OSError as exc:
        raise InputError(option, f"cannot write to {str(directory)!r}: "
                                 f"{exc.strerror or exc}") from None


@contextmanager
def atomic_path(path: Path) -> Iterator[Path]:
    """A temporary path beside ``path``, renamed onto it on success (never half-written)."""
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        yield tmp
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


@contextmanager
def output_folder(directory: str | Path, option: str) -> Iterator[Path]:
    """Stage a set of result files; ``directory`` gets all of them or none (exit 2 on OSError).

    Yields an empty staging folder beside ``directory`` (``.NAME.staging-PID``). Write every
    file of the set there. On success the set is moved into place: a new ``directory`` is the
    staging folder renamed; an existing folder receives each staged file by ``os.replace``
    and each staged sub-folder whole (a folder of the same name is swapped out and removed:
    no stale files of an earlier set are left in it); files of other names are kept. A staged
    file where the folder has a sub-folder of that name, or the reverse, is refused before
    anything moves. On any exception the staging folder is removed and ``directory`` is left
    as it was.
    """
    import shutil

    target = check_output_folder(directory, option)
    parent = target.absolute().parent
    with output_errors(target, option):
        parent.mkdir(parents=True, exist_ok=True)
        staging = parent / f".{target.name}.staging-{os.getpid()}"
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir()
    try:
        yield staging
        with output_errors(target, option):
            if not target.exists():
                os.rename(staging, target)
            else:
                _move_into(staging, target, option)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _move_into(staging: Path, target: Path, option: str) -> None:
    """Move every staged entry into the existing folder ``target`` (see output_folder)."""
    import shutil

    items = sorted(staging.iterdir())
    for item in items:
        dest = target / item.name
        folder = dest.is_dir() and not dest.is_symlink()
        if dest.exists() and item.is_dir() != folder:
            kinds = ("a folder", "a file") if folder else ("a file", "a folder")
            raise InputError(option, f"{str(dest)!r} is {kinds[0]} where the output has "
                                     f"{kinds[1]}; move it away")
    for item in items:
        dest = target / item.name
        if item.is_dir() and dest.exists():
            old = target / f".{item.name}.replaced-{os.getpid()}"
            os.rename(dest, old)
            os.rename(item, dest)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(item, dest)

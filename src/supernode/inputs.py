"""Reading user files safely: regular files only, never more than a stated byte limit.

Every command that takes a path reads it through :func:`read_text_file` (or
:func:`read_bytes_file`), so a FIFO, a device node or a folder is refused with exit 2, and
a file is read with a byte limit (``st_size`` is 0 for ``/dev/zero``; the read itself is
bounded). A FIFO is opened without blocking, so it cannot hang a command.

Paths are checked as text first (:func:`check_path_text`): no NUL byte, no component over
:data:`MAX_NAME_BYTES` bytes, no path over :data:`MAX_PATH_BYTES` bytes, so the OS never
raises on them. To ask whether a name is a file without risking an exception (a preset
name or a file name?), use :func:`path_kind` / :func:`is_file`.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from supernode.errors import InputError

#: Default largest input file, in bytes (16 MiB).
DEFAULT_INPUT_LIMIT_BYTES = 16 * 2**20
#: Longest file or folder name (one path component), in bytes (Linux NAME_MAX).
MAX_NAME_BYTES = 255
#: Longest path, in bytes (Linux PATH_MAX less the terminating NUL).
MAX_PATH_BYTES = 4095


def check_path_text(path: str | Path, option: str = "") -> str:
    """``path`` as a string if the OS can take it; :class:`InputError` at ``option`` if it
    holds a NUL byte, is empty, has a component over :data:`MAX_NAME_BYTES` bytes or is
    longer than :data:`MAX_PATH_BYTES` bytes."""
    text = os.fspath(path)
    if not text:
        raise InputError(option, "an empty path; give a file name")
    if "\x00" in text:
        raise InputError(option, "a path cannot contain a NUL byte", source=text)
    raw = os.fsencode(text)
    if len(raw) > MAX_PATH_BYTES:
        raise InputError(option, f"path is {len(raw):,} bytes long; the limit is "
                                 f"{MAX_PATH_BYTES:,}", source=text[:60] + "...")
    for part in raw.split(b"/"):
        if len(part) > MAX_NAME_BYTES:
            raise InputError(option, f"a file or folder name of {len(part):,} bytes; the "
                                     f"limit is {MAX_NAME_BYTES} bytes per name",
                             source=text[:60] + "...")
    return text


def path_kind(path: str | Path) -> str | None:
    """``"file"``, ``"dir"`` or ``"other"`` (FIFO, device, socket) for what ``path`` names
    (symlinks followed); None when it does not exist or cannot be examined. Never raises."""
    try:
        info = os.stat(check_path_text(path))
    except (InputError, OSError, ValueError):
        return None
    if stat.S_ISREG(info.st_mode):
        return "file"
    return "dir" if stat.S_ISDIR(info.st_mode) else "other"


def is_file(path: str | Path) -> bool:
    """True when ``path`` names a regular file (after symlinks); never raises."""
    return path_kind(path) == "file"


def exists(path: str | Path) -> bool:
    """True when something is at ``path`` (a dangling symlink counts); never raises."""
    try:
        os.lstat(check_path_text(path))
    except (InputError, OSError, ValueError):
        return False
    return True


def _os_error(option: str, source: str, exc: OSError) -> InputError:
    if isinstance(exc, FileNotFoundError):
        return InputError(option, "no such file", source=source)
    return InputError(option, f"cannot read: {exc.strerror or exc.__class__.__name__}",
                      source=source)


def read_bytes_file(path: str | Path, option: str = "",
                    limit_bytes: int = DEFAULT_INPUT_LIMIT_BYTES) -> bytes:
    """The bytes of regular file ``path``, at most ``limit_bytes``; InputError otherwise."""
    source = check_path_text(path, option)
    try:
        fd = os.open(source, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise _os_error(option, source, exc) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise InputError(option, "not a regular file (a folder, FIFO or device); give a "
                                     "file", source=source)
        if info.st_size > limit_bytes:
            raise InputError(option, f"file is {info.st_size:,} bytes; the limit is "
                                     f"{limit_bytes:,}", source=source)
        chunks, total = [], 0
        while True:
            chunk = os.read(fd, min(1 << 20, limit_bytes + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > limit_bytes:
                raise InputError(option, f"file is over the limit of {limit_bytes:,} bytes",
                                 source=source)
        return b"".join(chunks)
    except OSError as exc:
        raise _os_error(option, source, exc) from None
    finally:
        os.close(fd)


def read_text_file(path: str | Path, option: str = "",
                   limit_bytes: int = DEFAULT_INPUT_LIMIT_BYTES) -> str:
    """The UTF-8 text of regular file ``path`` (at most ``limit_bytes``); InputError otherwise."""
    data = read_bytes_file(path, option, limit_bytes)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(option, f"cannot read: not UTF-8 text (byte {exc.start})",
                         source=os.fspath(path)) from None


def same_file(a: str | Path, b: str | Path) -> bool:
    """True when ``a`` and ``b`` name the same existing file (device and inode); never
    raises."""
    try:
        one, two = os.stat(check_path_text(a)), os.stat(check_path_text(b))
    except (InputError, OSError, ValueError):
        return False
    return (one.st_dev, one.st_ino) == (two.st_dev, two.st_ino)

"""Clean shutdown: SIGTERM (and SIGHUP) handled like SIGINT, and commits signals cannot split.

The CLI installs :func:`handle_termination` around every command. A SIGTERM then raises
:class:`Terminated` in the main thread, so every ``finally`` block runs as it does for
Ctrl-C: temporary files and staging folders are removed (:mod:`supernode.outputs`),
process pools are stopped and their workers ended (:mod:`supernode.parallel`),
and the process exits with 128 + the signal number (143 for SIGTERM). A second signal
during that cleanup is ignored, so the cleanup finishes.

:func:`deferred_signals` blocks SIGINT and SIGTERM for a few renames (a result set moved
into place), so a signal lands before or after them, never between.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

#: Signals turned into :class:`Terminated` (SIGINT stays KeyboardInterrupt).
TERMINATING = tuple(s for s in (getattr(signal, "SIGTERM", None), getattr(signal, "SIGHUP",
                                                                           None)) if s)
#: Signals held back during a commit.
DEFERRED = tuple(s for s in (signal.SIGINT, *TERMINATING))


#: The signal that asked this process to stop (None until one does).
requested: int | None = None


class Terminated(BaseException):
    """The process was asked to stop (SIGTERM/SIGHUP). Not an ``Exception``: a command's
    ``except Exception`` cannot swallow it; ``finally`` blocks and context managers run."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"terminated by signal {signum}")
        self.signum = signum

    @property
    def exit_code(self) -> int:
        """The shell's convention: 128 + the signal number."""
        return 128 + self.signum


def _raise_terminated(signum: int, frame: FrameType | None) -> None:
    global requested
    requested = signum
    for sig in (signal.SIGINT, *TERMINATING):  # let the cleanup finish
        signal.signal(sig, signal.SIG_IGN)
    raise Terminated(signum)


def _raise_interrupt(signum: int, frame: FrameType | None) -> None:
    global requested
    requested = signum
    for sig in (signal.SIGINT, *TERMINATING):
        signal.signal(sig, signal.SIG_IGN)
    raise KeyboardInterrupt


def interrupted_exit_code() -> int | None:
    """128 + the signal that asked us to stop, or None. Whatever exception the signal
    became (raised inside a C extension's import it turns into ImportError), the process
    exits as interrupted, not as a defect."""
    return None if requested is None else 128 + requested


@contextmanager
def handle_termination() -> Iterator[None]:
    """While inside: SIGTERM/SIGHUP raise :class:`Terminated`, SIGINT KeyboardInterrupt,
    each once (later signals are ignored while the cleanup runs). Restores the previous
    handlers on exit. Does nothing outside the main thread."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    global requested
    requested = None
    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, *TERMINATING)}
    for sig in TERMINATING:
        signal.signal(sig, _raise_terminated)
    if previous[signal.SIGINT] is signal.default_int_handler:
        signal.signal(signal.SIGINT, _raise_interrupt)
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler if handler is not None else signal.SIG_DFL)


@contextmanager
def deferred_signals() -> Iterator[None]:
    """Hold SIGINT/SIGTERM/SIGHUP back while inside; a signal that arrives is delivered on
    exit. For short commits (renames) only. Does nothing outside the main thread."""
    if threading.current_thread() is not threading.main_thread() \
            or not hasattr(signal, "pthread_sigmask"):
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, DEFERRED)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)

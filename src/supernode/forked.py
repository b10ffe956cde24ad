"""Pure tasks run side by side in forked child processes, with the answers run inline give.

:func:`run_forked` runs its first task in this process and each other task in a child made
by ``fork`` (the child shares the parent's imports and data copy-on-write, so it starts in
milliseconds, not the second a spawned interpreter takes). A child sends its answer back
pickled through a pipe and leaves with ``os._exit``: it never returns into the caller's
code, flushes none of its buffers and runs none of its ``finally`` blocks.

Tasks must be pure (their answer depends on their inputs only), so where a child cannot
answer (no ``fork`` on the platform, a thread other than the main one, a child that fails
or is killed) the parent runs that task itself and the answer is the same; an error a task
raises is raised by the parent's own run of it, as inline.

:func:`prepared_child` forks a child early, to run slow preparation (imports) while the
caller works, then one task handed to it later with its arguments, pickled (the
plots of ``simulate --plot``: matplotlib is imported beside the simulation).
:func:`in_background` forks a child that runs a task at once, beside the caller, whose
answer the caller collects when it needs it (``design``'s scheduling replay).

Why not :mod:`supernode.parallel` (the process pool and Ray fan-out of the sweep, the
reliability Monte Carlo and the scheduler): its workers are spawned interpreters, each
paying about a second of imports and taking only picklable module-level functions, which
suits tasks of seconds to minutes. The plan search's shares and the design's side stages
last a fraction of that and are closures over the caller's data (a search space, a loaded
cluster), so a forked child that inherits both costs milliseconds; and a child answers
once, through a pipe, instead of serving a queue of tasks. The two share nothing but
the rule that no worker outlives the call.

No child outlives its parent: Ctrl-C, SIGTERM or an error in the parent ends every child
(SIGKILL, then reaped) before the exception goes on; a child dies with its parent on Linux
(``PR_SET_PDEATHSIG``) even when the parent is killed outright; and children take the
default action of SIGINT and SIGTERM (the parent's handlers are not theirs).
"""

from __future__ import annotations

import gc
import os
import pickle
import signal
import sys
import threading
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from functools import partial
from typing import Any

#: Signals a child takes the default action for, and that are held back while forking.
CHILD_DEFAULTS = tuple(s for s in (signal.SIGINT, getattr(signal, "SIGTERM", None),
                                   getattr(signal, "SIGHUP", None)) if s is not None)
_PR_SET_PDEATHSIG = 1  # linux/prctl.h


def can_fork() -> bool:
    """True when tasks can run in forked children here (``fork`` exists and this is the
    main thread, whose signal handlers a child must reset)."""
    return hasattr(os, "fork") and threading.current_thread() is threading.main_thread()


def run_forked(tasks: Sequence[Callable[[], Any]]) -> list[Any]:
    """Answers of ``tasks`` in order: the first run here, each other in a forked child
    (all inline when :func:`can_fork` is False or there is one task)."""
    if len(tasks) <= 1 or not can_fork():
        return [task() for task in tasks]
    jobs: list[Background] = []
    try:
        for task in tasks[1:]:
            jobs.append(Background(task))
        return [tasks[0](), *(job.result() for job in jobs)]
    finally:  # an error or a signal here: the children still running are ended
        for job in jobs:
            job.stop()


class Background:
    """A task running in a forked child beside the caller (:func:`in_background`); its
    answer by :meth:`result`, computed here where the child cannot give it."""

    def __init__(self, task: Callable[[], Any]) -> None:
        self._task = task
        self._children = [_start(task) if can_fork() else None]

    def result(self) -> Any:
        """The task's answer (waits for the child; once)."""
        return _collect(self._children, 0, self._task)

    def stop(self) -> None:
        """End the child if it still runs (its answer unused)."""
        _stop(self._children)


@contextmanager
def in_background(task: Callable[[], Any]) -> Iterator[Background]:
    """``task`` started now in a forked child; ended on leaving, whatever happens."""
    job = Background(task)
    try:
        yield job
    finally:
        job.stop()


class PreparedChild:
    """A forked child that has run its preparation and waits for one task (:meth:`run`);
    without a child (no fork here, or it failed) the task runs in this process."""

    def __init__(self, child: tuple[int, int] | None, task_fd: int | None) -> None:
        self._children = [child]
        self._task_fd = task_fd

    def run(self, task: Callable[..., Any], *args: Any) -> Any:
        """``task(*args)`` in the child (``task`` a module-level function, the arguments
        picklable), or here when the child cannot answer; once."""
        if self._task_fd is None or self._children[0] is None:
            return task(*args)
        fd, self._task_fd = self._task_fd, None
        try:
            with os.fdopen(fd, "wb") as pipe:
                pickle.dump((task, args), pipe, protocol=pickle.HIGHEST_PROTOCOL)
        except (OSError, pickle.PickleError, AttributeError, TypeError, RecursionError):
            _stop(self._children)  # the child never got it: do it here
            return task(*args)
        return _collect(self._children, 0, lambda: task(*args))

    def stop(self) -> None:
        """End the child if it still runs (its task unused or unfinished)."""
        if self._task_fd is not None:
            os.close(self._task_fd)
            self._task_fd = None
        _stop(self._children)


@contextmanager
def prepared_child(prepare: Callable[[], Any]) -> Iterator[PreparedChild]:
    """A child forked now that runs ``prepare()`` at once, beside the caller, then the one
    task :meth:`PreparedChild.run` hands it; ended on leaving, whatever happens."""
    child, task_fd = None, None
    if can_fork():
        read_fd, task_fd = os.pipe()
        child = _start(partial(_prepared, prepare, read_fd), close=(task_fd,))
        os.close(read_fd)
        if child is None:
            os.close(task_fd)
            task_fd = None
    prepared = PreparedChild(child, task_fd)
    try:
        yield prepared
    finally:
        prepared.stop()


def _prepared(prepare: Callable[[], Any], task_fd: int) -> Any:  # pragma: no cover - child
    """In the child: prepare, then read the task and its arguments and run it."""
    prepare()
    with os.fdopen(task_fd, "rb") as pipe:
        task, args = pickle.load(pipe)  # EOF (nothing handed over) ends the child
    return task(*args)


def _start(task: Callable[[], Any], close: tuple[int, ...] = ()
           ) -> tuple[int, int] | None:
    """Fork a child running ``task``: (pid, read end of its pipe); None if fork fails.
    The child closes ``close`` (this process's ends of pipes to it) first."""
    read_fd, write_fd = os.pipe()
    parent = os.getpid()
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, CHILD_DEFAULTS)
    gc.freeze()  # the child's collections then leave the shared objects' pages alone
    try:
        with warnings.catch_warnings():  # 3.12+ warns of other threads (a progress bar's
            warnings.simplefilter("ignore", DeprecationWarning)  # refresh): the child
            pid = os.fork()  # runs pure code on its one thread and never touches theirs
    except OSError:
        os.close(read_fd)
        os.close(write_fd)
        return None
    finally:
        if os.getpid() == parent:
            gc.unfreeze()
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
    if pid == 0:  # pragma: no cover - the child; its coverage is not collected
        _child(task, read_fd, write_fd, parent, blocked, close)
    os.close(write_fd)
    return pid, read_fd


def _child(task: Callable[[], Any], read_fd: int, write_fd: int, parent: int,
           blocked: Any, close: tuple[int, ...]) -> None:  # pragma: no cover - in the child
    """Run ``task`` and write its pickled answer; never returns."""
    code = 1
    try:
        for sig in CHILD_DEFAULTS:
            signal.signal(sig, signal.SIG_DFL)
        _die_with(parent)
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        for fd in (read_fd, *close):
            os.close(fd)
        data = pickle.dumps(task(), protocol=pickle.HIGHEST_PROTOCOL)
        with os.fdopen(write_fd, "wb") as pipe:
            pipe.write(data)
        code = 0
    finally:
        os._exit(code)


def _die_with(parent: int) -> None:  # pragma: no cover - runs in the child
    """Ask Linux to SIGKILL this child when its parent dies; exit if it already has."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent:
        os._exit(1)


def _collect(children: list[tuple[int, int] | None], index: int,
             task: Callable[[], Any]) -> Any:
    """Child ``index``'s answer, or ``task`` run here when it gave none; the child is
    reaped and its entry cleared (never signalled again)."""
    child = children[index]
    if child is None:
        return task()
    pid, read_fd = child
    with os.fdopen(read_fd, "rb", closefd=False) as pipe:
        data = pipe.read()
    _, status = os.waitpid(pid, 0)
    children[index] = None
    os.close(read_fd)
    if os.waitstatus_to_exitcode(status) == 0:
        try:
            return pickle.loads(data)
        except Exception:  # noqa: BLE001 - a truncated answer: recompute it here
            pass
    return task()


def _stop(children: list[tuple[int, int] | None]) -> None:
    """End and reap every child not yet collected, closing their pipes and clearing their
    entries (a child not yet reaped keeps its pid, so the signal cannot reach another
    process)."""
    for index, child in enumerate(children):
        if child is None:
            continue
        pid, read_fd = child
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass  # already reaped (a signal between the wait and the bookkeeping)
        children[index] = None
        os.close(read_fd)

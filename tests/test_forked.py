"""Forked tasks (:mod:`supernode.forked`): answers as inline, failures recomputed, errors
raised as inline, and no child outliving its parent (an error, a thread, SIGKILL)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from functools import partial
from pathlib import Path

import pytest
from test_signals import alive

from supernode.forked import can_fork, in_background, prepared_child, run_forked


def test_answers_come_in_order_from_distinct_processes() -> None:
    answers = run_forked([lambda i=i: (i, os.getpid(), [i] * i) for i in range(4)])
    assert [a[0] for a in answers] == [0, 1, 2, 3]
    assert [a[2] for a in answers] == [[], [1], [2, 2], [3, 3, 3]]
    assert answers[0][1] == os.getpid()
    assert len({a[1] for a in answers}) == 4  # each other task ran in its own child


def test_a_child_that_gives_no_answer_is_recomputed_here() -> None:
    parent = os.getpid()

    def dies_in_a_child() -> int:
        if os.getpid() != parent:
            os._exit(3)
        return os.getpid()

    assert run_forked([lambda: 0, dies_in_a_child]) == [0, parent]


def test_an_error_of_a_task_is_raised_as_inline() -> None:
    def bad() -> None:
        raise ValueError("no such thing")

    with pytest.raises(ValueError, match="no such thing"):
        run_forked([lambda: 1, bad])


def test_an_error_here_ends_every_child(tmp_path: Path) -> None:
    marks = tmp_path / "pids"
    marks.mkdir()

    def sleeper() -> None:
        (marks / str(os.getpid())).touch()
        time.sleep(60)

    def fails_once_children_run() -> None:
        deadline = time.monotonic() + 30
        while len(list(marks.iterdir())) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        raise RuntimeError("parent failed")

    with pytest.raises(RuntimeError, match="parent failed"):
        run_forked([fails_once_children_run, sleeper, sleeper])
    pids = [int(p.name) for p in marks.iterdir()]
    assert len(pids) == 2
    assert not any(alive(pid) for pid in pids)
    for pid in pids:  # reaped, not left as zombies
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)


def test_children_take_the_default_signal_actions() -> None:
    previous = signal.signal(signal.SIGTERM, lambda *_: None)
    try:
        here, there = run_forked([lambda: signal.getsignal(signal.SIGTERM),
                                  lambda: signal.getsignal(signal.SIGTERM)])
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert here is not signal.SIG_DFL and there == signal.SIG_DFL


def test_outside_the_main_thread_everything_runs_inline() -> None:
    box: dict[str, object] = {}

    def work() -> None:
        box["can"] = can_fork()
        box["pids"] = run_forked([os.getpid, os.getpid])

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    assert box["can"] is False and box["pids"] == [os.getpid(), os.getpid()]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_a_child_dies_with_its_killed_parent(tmp_path: Path) -> None:
    mark = tmp_path / "child"
    script = textwrap.dedent(f"""
        import os, time
        from supernode.forked import run_forked
        def child():
            open({str(mark)!r}, "w").write(str(os.getpid()))
            time.sleep(60)
        run_forked([lambda: time.sleep(60), child])
    """)
    parent = subprocess.Popen([sys.executable, "-c", script])
    deadline = time.monotonic() + 60
    while not (mark.exists() and mark.read_text()) and time.monotonic() < deadline:
        time.sleep(0.01)
    child = int(mark.read_text())
    parent.kill()
    parent.wait()
    deadline = time.monotonic() + 10
    while alive(child) and time.monotonic() < deadline:
        time.sleep(0.02)
    gone = not alive(child)
    if not gone:
        os.kill(child, signal.SIGKILL)
    assert gone, "the child outlived its SIGKILLed parent"


def _pid_and(value: int) -> tuple[int, int]:
    return os.getpid(), value * 2


def _fails(value: int) -> int:
    raise ValueError(f"bad {value}")


def test_a_prepared_child_prepares_beside_the_caller_then_runs_the_task(tmp_path: Path
                                                                        ) -> None:
    mark = tmp_path / "prepared"
    with prepared_child(lambda: mark.write_text(str(os.getpid()))) as child:
        pid, doubled = child.run(_pid_and, 21)
    assert doubled == 42 and pid != os.getpid()
    assert int(mark.read_text()) == pid  # prepared in the child that ran the task
    assert not alive(pid)


def test_a_prepared_childs_failures_fall_back_to_this_process() -> None:
    with prepared_child(lambda: os._exit(4)) as child:  # dies while preparing
        assert child.run(_pid_and, 1) == (os.getpid(), 2)
    with prepared_child(lambda: None) as child:  # a task not picklable: run here
        assert child.run(lambda v: (os.getpid(), v), 5) == (os.getpid(), 5)
    with prepared_child(lambda: None) as child, pytest.raises(ValueError, match="bad 3"):
        child.run(_fails, 3)  # its error raised as inline


def test_a_prepared_child_never_given_a_task_is_ended(tmp_path: Path) -> None:
    mark = tmp_path / "pid"
    with prepared_child(lambda: (mark.write_text(str(os.getpid())), time.sleep(60))):
        deadline = time.monotonic() + 30
        while not (mark.exists() and mark.read_text()) and time.monotonic() < deadline:
            time.sleep(0.01)
    pid = int(mark.read_text())
    assert not alive(pid)
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)


def test_a_background_task_runs_beside_and_answers_when_asked(tmp_path: Path) -> None:
    with in_background(partial(_pid_and, 4)) as job:
        pid, value = job.result()
    assert value == 8 and pid != os.getpid() and not alive(pid)
    parent = os.getpid()
    with in_background(lambda: os._exit(2) if os.getpid() != parent else "here") as job:
        assert job.result() == "here"  # the child gave nothing: computed here
    mark = tmp_path / "pid"
    with in_background(lambda: (mark.write_text(str(os.getpid())), time.sleep(60))):
        deadline = time.monotonic() + 30
        while not (mark.exists() and mark.read_text()) and time.monotonic() < deadline:
            time.sleep(0.01)
    assert not alive(int(mark.read_text()))  # never asked: ended on leaving

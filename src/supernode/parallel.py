"""Pure tasks fanned out over a local process pool or Ray, their results in task order.

:func:`run_tasks` is the one start-and-wait loop of the sweep's variants
(:mod:`supernode.planner.sweep_run`), the reliability Monte Carlo
(:mod:`supernode.reliability.parallel`) and the scheduler's policies
(:mod:`supernode.scheduler.run`): ``function(*shared, *task)`` for every task, run here
(one worker or one task), in a spawn-safe :class:`~concurrent.futures.ProcessPoolExecutor`
or as Ray remote calls. The function must be pure and importable by name (a module-level
function), its arguments picklable: the results are then the same, in the same order,
whichever way they ran. ``on_done(index)`` is called here, in the caller's thread, as each
task finishes (in the order they finish), for a progress display.

No worker outlives the call: an error, Ctrl-C or SIGTERM (:mod:`supernode.shutdown` turns
it into an exception) stops the pool and ends its workers at once (:func:`stop_pool`), and
a Ray instance this call started is shut down.

The planner's search uses :mod:`supernode.forked` instead: forked children that share
the parent's memory and take closures, for work too short to pay for a spawned worker.
"""

from __future__ import annotations

import concurrent.futures.process as _process_pools
import multiprocessing
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from contextlib import suppress
from typing import Any, TypeVar

from supernode.bounds import check_workers, worker_processes
from supernode.errors import InputError
from supernode.textsafe import one_line

T = TypeVar("T")
Done = Callable[[int], None]


def run_tasks(function: Callable[..., T], tasks: Sequence[Sequence[Any]], workers: int,
              *, shared: Sequence[Any] = (), use_ray: bool = False,
              ray_address: str | None = None, on_done: Done | None = None) -> list[T]:
    """``function(*shared, *task)`` of every task, in task order.

    ``workers`` is checked first (1..:data:`supernode.bounds.MAX_WORKERS`). ``use_ray``:
    Ray remote calls (``ray_address``'s cluster, else a local instance of ``workers``
    CPUs; ``shared`` put in its object store once). Otherwise: here when one process is
    enough, else a pool of :func:`supernode.bounds.worker_processes` spawned processes
    (never more than the tasks or the CPU cores).
    """
    if not tasks:
        return []
    check_workers(workers, "workers")
    done = on_done or (lambda index: None)
    if use_ray:
        return _on_ray(function, tasks, workers, shared, ray_address, done)
    processes = worker_processes(workers, len(tasks))
    if processes <= 1:
        out = []
        for index, task in enumerate(tasks):
            out.append(function(*shared, *task))
            done(index)
        return out
    return _on_pool(function, tasks, processes, shared, done)


def _on_pool(function: Callable[..., T], tasks: Sequence[Sequence[Any]], workers: int,
             shared: Sequence[Any], done: Done) -> list[T]:
    results: dict[int, T] = {}
    context = multiprocessing.get_context("spawn")
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=context)
    try:
        futures = {pool.submit(function, *shared, *task): i for i, task in enumerate(tasks)}
        for future in as_completed(futures):
            index = futures[future]
            results[index] = future.result()
            done(index)
    except BaseException:  # an error, Ctrl-C or SIGTERM: no worker may outlive us
        stop_pool(pool)
        raise
    pool.shutdown(wait=True)
    return [results[i] for i in range(len(tasks))]


def stop_pool(pool: ProcessPoolExecutor, grace_s: float = 2.0) -> None:
    """Cancel what has not started and end every worker process now (SIGTERM, then
    SIGKILL after ``grace_s`` seconds), so none is left running or holding the caller's
    pipes."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        if process.is_alive():
            process.terminate()
    for process in processes:
        process.join(grace_s)
        if process.is_alive():
            process.kill()
            process.join(grace_s)
    # The pool's manager thread closes its wake-up pipe as it ends; left running, it races
    # concurrent.futures' exit hook, which writes to that pipe unlocked before Python 3.12
    # (an "OSError: Bad file descriptor" traceback at exit after Ctrl-C). Let it end first.
    # On a loaded machine it may outlive the join's grace: then the hook is told to leave
    # this pool's pipe alone (the manager thread is still joined by the interpreter's own
    # shutdown, and ends by itself: the pool is shut down).
    manager = getattr(pool, "_executor_manager_thread", None)
    if manager is not None and manager.is_alive():
        manager.join(grace_s)
    if manager is not None:
        _process_pools._threads_wakeups.pop(manager, None)


def _on_ray(function: Callable[..., T], tasks: Sequence[Sequence[Any]], workers: int,
            shared: Sequence[Any], address: str | None, done: Done) -> list[T]:
    """The same calls as Ray remote calls (a local ``ray.init`` when no address is given)."""
    try:
        import ray
    except ImportError:
        raise InputError("--ray", "Ray is not installed: pip install "
                                  "'supernode-toolkit[ray]'") from None
    started = not ray.is_initialized()
    try:  # ray.init inside: one that fails part-way (memory cap) may have started raylet
        if started:
            _start_ray(ray, address, workers)
        remote = ray.remote(function)
        common = [ray.put(value) for value in shared]
        refs = [remote.remote(*common, *task) for task in tasks]
        index = {ref: i for i, ref in enumerate(refs)}
        results: dict[int, T] = {}
        pending = list(refs)
        while pending:
            ready, pending = ray.wait(pending, num_returns=1)
            for ref in ready:
                results[index[ref]] = ray.get(ref)
                done(index[ref])
        return [results[i] for i in range(len(tasks))]
    finally:
        if started:  # also after an error, Ctrl-C or SIGTERM: no raylet/gcs_server left
            with suppress(Exception):
                ray.shutdown()


def _start_ray(ray: Any, address: str | None, workers: int) -> None:
    """``ray.init`` on ``address`` or a local instance of ``workers`` CPUs; a start that
    fails (no cluster at the address, a raylet that cannot start under a memory cap) is
    the machine's or the address's problem, not a defect: one ``error: --ray:`` line."""
    try:
        if address:
            ray.init(address=address, log_to_driver=False)
        else:
            ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False)
    except (KeyboardInterrupt, SystemExit, InputError):
        raise
    except Exception as exc:  # Ray raises plain Exceptions, ConnectionErrors, TimeoutErrors
        where = f"the Ray cluster at {address!r}" if address else "a local Ray instance"
        raise InputError("--ray", f"could not start {where}: {one_line(str(exc))[:300]}"
                         ) from None

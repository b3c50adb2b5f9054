"""Work spread over processes: the logs of a fleet, the sessions of a log of many runs."""

from __future__ import annotations

import ctypes
import itertools
import multiprocessing
import os
import signal
import sys
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

#: Items handed to the processes ahead of the one being waited for, per process: enough to
#: keep each busy, few enough that results a slow reader has not taken yet (a report
#: written to a pipe nobody reads) do not pile up in this process.
AHEAD = 2


def process_map(
    fn: Callable[..., object],
    work: list[tuple],
    jobs: int,
    died: Callable[[tuple], object] | None = None,
) -> Iterator[object]:
    """``fn(*item)`` of every item, in order, each as it is done; over ``jobs`` processes
    (forked where the platform has fork: they start with this process's memory) when more
    than one, with at most ``AHEAD * jobs`` items ahead of the one taken.  ``fn`` is a
    module-level function.

    A process that dies (killed, out of memory) breaks the pool and every item in flight
    with it: each of those is run again alone in a fresh process, and one whose process
    dies again gives ``died(item)`` (without ``died``: ``BrokenProcessPool``); the rest go
    on in a new pool.  The processes die with this one (Linux: a parent-death signal)."""
    if jobs <= 1:
        yield from (fn(*item) for item in work)
        return
    sys.stdout.flush()  # a forked process flushes what it inherited: write it once, now
    sys.stderr.flush()
    items = iter(work)
    while True:
        pool = _executor(jobs)
        flight: deque[tuple[tuple, Future | None]] = deque()

        broken = False
        try:
            _top_up(pool, fn, items, flight, AHEAD * jobs)
            while flight:
                done = flight[0][1]
                try:
                    if done is None:
                        raise BrokenProcessPool
                    result = done.result()
                except BrokenProcessPool:
                    broken = True
                    break
                flight.popleft()
                _top_up(pool, fn, items, flight, 1)
                yield result
        finally:  # the reader stopped early, or the pool broke: what has not started is not run
            for _, future in flight:
                if future is not None:
                    future.cancel()
            pool.shutdown(wait=not broken, cancel_futures=True)
        if not broken:
            return
        for item, _ in flight:  # in order; each alone, so that one bad item breaks only itself
            yield _alone(fn, item, died)


def _top_up(pool: Executor, fn: Callable[..., object], items, flight: deque, n: int) -> None:  # noqa: ANN001
    """Hand ``n`` more items to ``pool`` (an item it refuses, broken, is kept with None)."""
    for item in itertools.islice(items, n):
        try:
            flight.append((item, pool.submit(fn, *item)))
        except BrokenProcessPool:  # the pool broke since the last result
            flight.append((item, None))


def _alone(
    fn: Callable[..., object], item: tuple, died: Callable[[tuple], object] | None
) -> object:
    with _executor(1) as pool:
        try:
            return pool.submit(fn, *item).result()
        except BrokenProcessPool:
            if died is None:
                raise
            return died(item)


def _die_with_parent() -> None:
    """In a worker: ask Linux to kill this process when its parent dies (prctl
    PR_SET_PDEATHSIG), and go now if the parent already has."""
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG = 1
        except (OSError, AttributeError):
            return
        if os.getppid() == 1:
            os._exit(1)


def _executor(jobs: int) -> Executor:
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else None)
    return ProcessPoolExecutor(jobs, mp_context=context, initializer=_die_with_parent)

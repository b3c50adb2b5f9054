"""Work spread over processes: the logs of a fleet, the sessions of a log of many runs."""

from __future__ import annotations

import itertools
import multiprocessing
import sys
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Executor, Future, ProcessPoolExecutor

#: Items handed to the processes ahead of the one being waited for, per process: enough to
#: keep each busy, few enough that results a slow reader has not taken yet (a report
#: written to a pipe nobody reads) do not pile up in this process.
AHEAD = 2


def process_map(fn: Callable[..., object], work: list[tuple], jobs: int) -> Iterator[object]:
    """``fn(*item)`` of every item, in order, each as it is done; over ``jobs`` processes
    (forked where the platform has fork: they start with this process's memory) when more
    than one, with at most ``AHEAD * jobs`` items ahead of the one taken.  ``fn`` is a
    module-level function.  A process that dies raises ``BrokenProcessPool``."""
    if jobs <= 1:
        yield from (fn(*item) for item in work)
        return
    sys.stdout.flush()  # a forked process flushes what it inherited: write it once, now
    sys.stderr.flush()
    items = iter(work)
    with _executor(jobs) as pool:
        flight: deque[Future] = deque(
            pool.submit(fn, *item) for item in itertools.islice(items, AHEAD * jobs)
        )
        try:
            while flight:
                done = flight.popleft()
                flight.extend(pool.submit(fn, *item) for item in itertools.islice(items, 1))
                yield done.result()
        finally:  # the reader stopped early: what has not started is not run
            for future in flight:
                future.cancel()


def _executor(jobs: int) -> Executor:
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else None)
    return ProcessPoolExecutor(jobs, mp_context=context)

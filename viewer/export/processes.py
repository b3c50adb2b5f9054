"""Work spread over processes: the logs of a fleet, the sessions of a log of many runs."""

from __future__ import annotations

import multiprocessing
import sys
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor


def process_map(fn: Callable[..., object], work: list[tuple], jobs: int) -> Iterator[object]:
    """``fn(*item)`` of every item, in order, each as it is done; over ``jobs`` processes
    (forked where the platform has fork: they start with this process's memory) when more
    than one.  A process that dies raises ``BrokenProcessPool``."""
    if jobs <= 1:
        yield from (fn(*item) for item in work)
        return
    sys.stdout.flush()  # a forked process flushes what it inherited: write it once, now
    sys.stderr.flush()
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else None)
    with ProcessPoolExecutor(jobs, mp_context=context) as pool:
        yield from pool.map(_call, [(fn, item) for item in work])


def _call(task: tuple) -> object:
    fn, item = task
    return fn(*item)

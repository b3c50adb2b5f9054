"""Work off the GUI thread on one Python worker thread, results back on the GUI thread.

A plain ``concurrent.futures`` thread rather than ``QThreadPool`` + Python ``QRunnable``
subclasses: auto-deleted runnables race with Python's garbage collector on the GUI
thread (seen as rare aborts in the test suite), and nothing here needs Qt's pool.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, wait

from PySide6 import QtCore

from viewer.heap import release_free_memory

#: Longest a busy worker keeps the GIL once the GUI thread asks for it (Python's default
#: is 5 ms). Every Qt -> Python call of the GUI thread (a slot, a paint, a table cell)
#: takes the GIL anew, so one repaint can wait this long dozens of times.
GUI_SWITCH_INTERVAL_S = 0.0005
#: Nice increment of worker threads over the GUI thread, so that the GUI thread gets a
#: core first when both are ready to run (2 cores and a multi-threaded scanner).
WORKER_NICE = 5


def share_gil_with_gui() -> None:
    """Make worker threads hand the GIL to the GUI thread quickly (process-wide; only
    costs anything while two threads want the GIL at once)."""
    if sys.getswitchinterval() > GUI_SWITCH_INTERVAL_S:
        sys.setswitchinterval(GUI_SWITCH_INTERVAL_S)


def lower_thread_priority() -> None:
    """Run the calling worker thread (and the threads it starts) below the GUI thread.

    Linux only, where the nice value is per thread; elsewhere ``setpriority`` would
    lower the whole process, GUI thread included.
    """
    if sys.platform.startswith("linux"):
        tid = threading.get_native_id()
        with contextlib.suppress(OSError):
            os.setpriority(os.PRIO_PROCESS, tid, os.getpriority(os.PRIO_PROCESS, tid) + WORKER_NICE)


class BackgroundWorker(QtCore.QObject):
    """``submit(fn, *args)`` runs ``fn`` on the worker thread, in submission order;
    ``finished(token, result, error)`` then fires on the GUI thread (``error`` is ""
    on success, else a one-line message and ``result`` is None)."""

    finished = QtCore.Signal(object, object, str)

    def __init__(self, parent: QtCore.QObject | None = None, name: str = "viewer") -> None:
        super().__init__(parent)
        self._executor = ThreadPoolExecutor(
            max_workers=1, thread_name_prefix=name, initializer=lower_thread_priority
        )
        self._futures: list[Future] = []
        share_gil_with_gui()

    def submit(self, token: object, fn: Callable[..., object], *args: object) -> None:
        self._futures = [f for f in self._futures if not f.done()]
        self._futures.append(self._executor.submit(self._run, token, fn, args))

    def call(self, fn: Callable[..., object], *args: object) -> None:
        """Run ``fn`` on the worker thread after what is queued, without a result."""
        self._futures.append(self._executor.submit(fn, *args))

    def _run(self, token: object, fn: Callable[..., object], args: tuple) -> None:
        try:
            result, error = fn(*args), ""
        except Exception as exc:  # a bug in the work shows as a message, not a crash
            result, error = None, f"{type(exc).__name__}: {exc}"
        # What the job freed (a load's scan columns and temporaries: ~90 MB of a 10^6-event
        # log) goes back to the system, not kept by this thread's allocator for the
        # window's lifetime.
        release_free_memory()
        # The owner may have been deleted (window closed) while this ran.
        with contextlib.suppress(RuntimeError):
            self.finished.emit(token, result, error)

    def wait(self, msecs: int = 5000) -> bool:
        """Block until the queued work is done (tests and shutdown)."""
        pending = [f for f in self._futures if not f.done()]
        done, not_done = wait(pending, timeout=msecs / 1000)
        return not not_done


class LatestTask(QtCore.QObject):
    """Background work where only the newest request matters: a log load, a range summary,
    a replay, a comparison, a follow poll.  The one primitive the window's background work
    goes through (on a ``BackgroundWorker`` thread of its own).

    ``request(context, fn, *args)`` runs ``fn(*args)`` off the GUI thread.  One request
    runs at a time; a request made meanwhile replaces the pending one, so a burst of edits
    costs at most one stale run.  Only the newest request's outcome is signalled, on the GUI
    thread: ``ready(context, result)`` or ``failed(context, message)``.  ``cancel()`` drops
    the pending request and silences the running one; ``stop()`` asks the running one to stop
    and still signals how it ended (a load says "cancelled").  With ``hooks=True`` the function also
    gets ``progress=(done, total)`` -> ``progressed(context, done, total)`` (any size: bytes of
    a file over 2 GiB) and ``cancelled=() -> bool``, True once the request is superseded or
    cancelled, to stop early.
    """

    ready = QtCore.Signal(object, object)
    failed = QtCore.Signal(object, str)
    progressed = QtCore.Signal(object, object, object)
    _progress = QtCore.Signal(object, object, object, object)  # from the worker thread

    def __init__(self, parent: QtCore.QObject | None = None, name: str = "task") -> None:
        super().__init__(parent)
        self._worker = BackgroundWorker(self, name)
        self._worker.finished.connect(self._on_done)
        self._progress.connect(self._on_progress)
        self._generation = 0
        self._stopped = 0  # requests up to this generation were asked to stop
        self._pending: tuple | None = None
        self._running = False

    @property
    def busy(self) -> bool:
        """A request is running or waiting to."""
        return self._running or self._pending is not None

    def request(
        self, context: object, fn: Callable[..., object], *args: object, hooks: bool = False
    ) -> None:
        self._generation += 1
        self._pending = (self._generation, context, fn, args, hooks)
        self._submit()

    def cancel(self) -> None:
        """Drop the pending request; the running one finishes unseen (or stops early when
        its function watches ``cancelled``)."""
        self._generation += 1
        self._pending = None

    def after(self, fn: Callable[..., object], *args: object) -> None:
        """Run ``fn(*args)`` on the task's thread once the running request is done (closing
        what it reads), with no outcome signalled."""
        self._worker.call(fn, *args)

    def stop(self) -> None:
        """Drop the pending request and ask the running one to stop early (its function's
        ``cancelled()`` turns True); its outcome is still signalled."""
        self._pending = None
        self._stopped = self._generation

    def _submit(self) -> None:
        if self._running or self._pending is None:
            return
        generation, context, fn, args, hooks = self._pending
        self._pending = None
        self._running = True
        kwargs = {}
        if hooks:
            kwargs = {
                "progress": lambda done, total: self._progress.emit(
                    generation, context, done, total
                ),
                "cancelled": lambda: generation != self._generation or generation <= self._stopped,
            }
        self._worker.submit((generation, context), lambda: fn(*args, **kwargs))

    def _on_progress(self, generation: int, context: object, done: object, total: object) -> None:
        if generation == self._generation:
            self.progressed.emit(context, done, total)

    def _on_done(self, token: tuple, result: object, error: str) -> None:
        generation, context = token
        self._running = False
        self._submit()
        if generation != self._generation:
            return  # superseded or cancelled
        if error:
            self.failed.emit(context, error)
        else:
            self.ready.emit(context, result)

    def wait(self, msecs: int = 5000) -> bool:
        """Block until the work handed to the thread is done (tests and shutdown)."""
        return self._worker.wait(msecs)

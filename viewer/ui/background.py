"""Work off the GUI thread on one Python worker thread, results back on the GUI thread.

A plain ``concurrent.futures`` thread rather than ``QThreadPool`` + Python ``QRunnable``
subclasses: auto-deleted runnables race with Python's garbage collector on the GUI
thread (seen as rare aborts in the test suite), and nothing here needs Qt's pool.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, wait

from PySide6 import QtCore


class BackgroundWorker(QtCore.QObject):
    """``submit(fn, *args)`` runs ``fn`` on the worker thread, in submission order;
    ``finished(token, result, error)`` then fires on the GUI thread (``error`` is ""
    on success, else a one-line message and ``result`` is None)."""

    finished = QtCore.Signal(object, object, str)

    def __init__(self, parent: QtCore.QObject | None = None, name: str = "viewer") -> None:
        super().__init__(parent)
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=name)
        self._futures: list[Future] = []

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
        # The owner may have been deleted (window closed) while this ran.
        with contextlib.suppress(RuntimeError):
            self.finished.emit(token, result, error)

    def wait(self, msecs: int = 5000) -> bool:
        """Block until the queued work is done (tests and shutdown)."""
        pending = [f for f in self._futures if not f.done()]
        done, not_done = wait(pending, timeout=msecs / 1000)
        return not not_done

"""Recompute the range summary off the GUI thread, debounced, dropping stale results."""

from __future__ import annotations

import contextlib

from PySide6 import QtCore

from viewer.analysis import summarize


class _Task(QtCore.QRunnable):
    def __init__(self, runner: SummaryRunner, generation: int, session, rng) -> None:
        super().__init__()
        self.runner, self.generation, self.session, self.rng = runner, generation, session, rng

    def run(self) -> None:
        try:
            summary, error = summarize(self.session, self.rng), ""
        except Exception as exc:  # an analysis bug shows in the status bar, not as a crash
            summary, error = None, f"{type(exc).__name__}: {exc}"
        # The window may have been closed (its runner deleted) while this ran.
        with contextlib.suppress(RuntimeError):
            self.runner._done.emit(self.generation, summary, error)


class SummaryRunner(QtCore.QObject):
    """``request(session, rng)`` -> ``summary_ready(summary, rng)`` for the latest request only.

    Requests within ``delay_ms`` collapse into one (range drags emit storms); work runs
    on a private one-thread pool so at most one summary is computed at a time.
    """

    summary_ready = QtCore.Signal(object, object)
    failed = QtCore.Signal(str)
    _done = QtCore.Signal(int, object, str)

    def __init__(self, parent: QtCore.QObject | None = None, delay_ms: int = 35) -> None:
        super().__init__(parent)
        self._pool = QtCore.QThreadPool(self)
        self._pool.setMaxThreadCount(1)
        self._timer = QtCore.QTimer(self, singleShot=True, interval=delay_ms)
        self._timer.timeout.connect(self._on_timeout)
        self._generation = 0
        self._pending: tuple | None = None
        self._rngs: dict[int, object] = {}
        self._done.connect(self._on_done, QtCore.Qt.ConnectionType.QueuedConnection)

    def request(self, session, rng) -> None:
        self._pending = (session, rng)
        self._timer.start()

    def _on_timeout(self) -> None:
        if self._pending is None:
            return
        session, rng = self._pending
        self._pending = None
        self._generation += 1
        self._rngs = {self._generation: rng}
        self._pool.start(_Task(self, self._generation, session, rng))

    def _on_done(self, generation: int, summary, error: str) -> None:
        if generation != self._generation:
            return  # a newer request superseded this one
        if summary is None:
            self.failed.emit(error)
        else:
            self.summary_ready.emit(summary, self._rngs.get(generation))

    def wait(self, msecs: int = 5000) -> bool:
        """Block until the pool is idle (tests and shutdown)."""
        return self._pool.waitForDone(msecs)

"""Recompute the range summary off the GUI thread, debounced, dropping stale results."""

from __future__ import annotations

from PySide6 import QtCore

from viewer.analysis import summarize
from viewer.ui.background import BackgroundWorker


class SummaryRunner(QtCore.QObject):
    """``request(session, rng)`` -> ``summary_ready(summary, rng)`` for the latest request only.

    Requests within ``delay_ms`` collapse into one (range drags emit storms); the work
    runs on one background thread, so at most one summary is computed at a time.
    """

    summary_ready = QtCore.Signal(object, object)
    failed = QtCore.Signal(str)

    def __init__(self, parent: QtCore.QObject | None = None, delay_ms: int = 35) -> None:
        super().__init__(parent)
        self._worker = BackgroundWorker(self, "summary")
        self._worker.finished.connect(self._on_done)
        self._timer = QtCore.QTimer(self, singleShot=True, interval=delay_ms)
        self._timer.timeout.connect(self._on_timeout)
        self._generation = 0
        self._pending: tuple | None = None

    def request(self, session, rng) -> None:
        self._pending = (session, rng)
        self._timer.start()

    def deliver(self, summary, rng) -> None:
        """Show ``summary``, computed elsewhere (the loader), as the latest result: pending
        and running requests are dropped."""
        self._timer.stop()
        self._pending = None
        self._generation += 1
        self.summary_ready.emit(summary, rng)

    def _on_timeout(self) -> None:
        if self._pending is None:
            return
        session, rng = self._pending
        self._pending = None
        self._generation += 1
        self._worker.submit((self._generation, rng), summarize, session, rng)

    def _on_done(self, token, summary, error: str) -> None:
        generation, rng = token
        if generation != self._generation:
            return  # a newer request superseded this one
        if error:
            self.failed.emit(error)
        else:
            self.summary_ready.emit(summary, rng)

    def wait(self, msecs: int = 5000) -> bool:
        """Block until the background work is done (tests and shutdown)."""
        return self._worker.wait(msecs)

"""Recompute the range summary off the GUI thread, debounced, dropping stale results."""

from __future__ import annotations

from PySide6 import QtCore

from viewer.analysis import summarize
from viewer.ui.background import LatestTask


class SummaryRunner(QtCore.QObject):
    """``request(session, rng)`` -> ``summary_ready(summary, rng)`` for the latest request only.

    Requests within ``delay_ms`` collapse into one (range drags emit storms); the work
    runs on a ``LatestTask``: one summary at a time, the newest request wins.
    """

    summary_ready = QtCore.Signal(object, object)
    failed = QtCore.Signal(str)

    def __init__(self, parent: QtCore.QObject | None = None, delay_ms: int = 35) -> None:
        super().__init__(parent)
        self.task = LatestTask(self, "summary")
        self.task.ready.connect(lambda rng, summary: self.summary_ready.emit(summary, rng))
        self.task.failed.connect(lambda _rng, message: self.failed.emit(message))
        self._timer = QtCore.QTimer(self, singleShot=True, interval=delay_ms)
        self._timer.timeout.connect(self._on_timeout)
        self._pending: tuple | None = None

    def request(self, session, rng) -> None:
        self._pending = (session, rng)
        self._timer.start()

    def deliver(self, summary, rng) -> None:
        """Show ``summary``, computed elsewhere (the loader), as the latest result: pending
        and running requests are dropped."""
        self._timer.stop()
        self._pending = None
        self.task.cancel()
        self.summary_ready.emit(summary, rng)

    def _on_timeout(self) -> None:
        if self._pending is None:
            return
        session, rng = self._pending
        self._pending = None
        self.task.request(rng, summarize, session, rng)

    def wait(self, msecs: int = 5000) -> bool:
        """Block until the background work is done (tests and shutdown)."""
        return self.task.wait(msecs)

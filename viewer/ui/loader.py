"""Loading logs off the GUI thread, with progress and Cancel."""

from __future__ import annotations

import threading
from pathlib import Path

from PySide6 import QtCore

from viewer.analysis import summarize
from viewer.io import LoadCancelled, LogError, open_log
from viewer.ui.background import lower_thread_priority, share_gil_with_gui
from viewer.ui.lane_data import build_lanes


class LoadJob(QtCore.QThread):
    """Reads one log in a worker thread; the GUI thread only receives signals.

    ``progress_changed(done, total)`` in bytes; ``loaded(timeline, session_index, lanes,
    summary)`` with the session to show first, its lanes already built (seconds on big
    logs) and, with ``with_summary=True``, the summary of that whole session (else None), so
    the window shows the log without a second pass competing with its first paint;
    ``failed(message)`` with a message naming the file; ``cancelled()``.
    """

    progress_changed = QtCore.Signal(int, int)
    loaded = QtCore.Signal(object, int, object, object)
    failed = QtCore.Signal(str)
    cancelled = QtCore.Signal()

    def __init__(
        self,
        path: Path,
        workers_per_gpu: int | None = None,
        parent: QtCore.QObject | None = None,
        *,
        with_summary: bool = False,
    ) -> None:
        super().__init__(parent)
        self.path = Path(path)
        self.workers_per_gpu = workers_per_gpu
        self.with_summary = with_summary
        self._cancel = threading.Event()
        share_gil_with_gui()

    def cancel(self) -> None:
        self._cancel.set()

    def run(self) -> None:
        lower_thread_priority()
        try:
            timeline = open_log(
                self.path,
                workers_per_gpu=self.workers_per_gpu,
                progress=self.progress_changed.emit,
                cancel=self._cancel.is_set,
            )
        except LoadCancelled:
            self.cancelled.emit()
        except LogError as exc:
            self.failed.emit(str(exc))
        except MemoryError:
            self.failed.emit(f"{self.path}: not enough memory to load this log")
        except Exception as exc:  # a reader bug must not take the window down
            self.failed.emit(f"{self.path}: could not be read ({type(exc).__name__}: {exc})")
        else:
            index = timeline.main_session_position()
            lanes, summary = {}, None
            if timeline.sessions:
                session = timeline.sessions[index]
                lanes = {index: build_lanes(session)}
                summary = self._summary(session)
            if self._cancel.is_set():
                self.cancelled.emit()
            else:
                self.loaded.emit(timeline, index, lanes, summary)

    def _summary(self, session):
        """The whole-session summary, or None (the window then asks its own runner,
        which reports a failure in the status bar)."""
        if not self.with_summary:
            return None
        try:
            return summarize(session, None)
        except Exception:
            return None

"""Loading logs off the GUI thread, with progress and Cancel (on ``background.LatestTask``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from PySide6 import QtCore

from viewer.analysis import summarize
from viewer.io import LoadCancelled, LogError, open_log
from viewer.lanes.data import build_lanes
from viewer.model import Timeline
from viewer.ui.background import LatestTask


@dataclass(frozen=True, eq=False)
class Loaded:
    """A log read: the session to show first, its lanes and (when asked) its summary."""

    timeline: Timeline
    index: int
    lanes: dict
    summary: object


@dataclass(frozen=True)
class NotLoaded:
    """Why there is no log: a message naming the file, or cancelled (message "")."""

    message: str = ""


def load(
    path: Path,
    workers_per_gpu: int | None,
    with_summary: bool,
    *,
    progress: Callable[[int, int], None],
    cancelled: Callable[[], bool],
) -> Loaded | NotLoaded:
    """Read ``path`` and build what the window shows first (on a worker thread)."""
    try:
        timeline = open_log(
            path, workers_per_gpu=workers_per_gpu, progress=progress, cancel=cancelled
        )
    except LoadCancelled:
        return NotLoaded()
    except LogError as exc:
        return NotLoaded(str(exc))
    except MemoryError:
        return NotLoaded(f"{path}: not enough memory to load this log")
    except Exception as exc:  # a reader bug must not take the window down
        return NotLoaded(f"{path}: could not be read ({type(exc).__name__}: {exc})")
    index = timeline.main_session_position()
    lanes, summary = {}, None
    if timeline.sessions:
        session = timeline.sessions[index]
        lanes = {index: build_lanes(session)}
        if with_summary:
            try:
                summary = summarize(session, None)
            except Exception:
                summary = None  # the window asks its own runner, which reports the failure
    if cancelled():
        return NotLoaded()
    return Loaded(timeline, index, lanes, summary)


class LoadJob(QtCore.QObject):
    """Reads one log off the GUI thread; the GUI thread only receives signals.

    ``progress_changed(done, total)`` in bytes (any size); ``loaded(timeline,
    session_index, lanes, summary)`` with the session to show first, its lanes already
    built (seconds on big logs) and, with ``with_summary=True``, the summary of that whole
    session (else None; the window asks for it once it has drawn the log, whose first
    frame it would delay); ``failed(message)`` with a message naming the file;
    ``cancelled()``; then ``finished()`` in every case.
    """

    progress_changed = QtCore.Signal(object, object)
    loaded = QtCore.Signal(object, int, object, object)
    failed = QtCore.Signal(str)
    cancelled = QtCore.Signal()
    finished = QtCore.Signal()

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
        self._task = LatestTask(self, "load")
        self._task.progressed.connect(
            lambda _, done, total: self.progress_changed.emit(done, total)
        )
        self._task.ready.connect(self._on_ready)
        self._task.failed.connect(self._on_failed)
        self._running = False

    def start(self) -> None:
        self._running = True
        self._task.request(
            None, load, self.path, self.workers_per_gpu, self.with_summary, hooks=True
        )

    def cancel(self) -> None:
        """Stop reading; ``cancelled()`` follows once the reader has stopped."""
        self._task.stop()

    def isRunning(self) -> bool:  # noqa: N802 (QThread's name, which this replaced)
        return self._running

    def wait(self, msecs: int = 5000) -> bool:
        """Block until the reader has stopped (tests and shutdown)."""
        return self._task.wait(msecs)

    def _on_ready(self, _context: object, outcome: Loaded | NotLoaded) -> None:
        self._running = False
        if isinstance(outcome, Loaded):
            self.loaded.emit(outcome.timeline, outcome.index, outcome.lanes, outcome.summary)
        elif outcome.message:
            self.failed.emit(outcome.message)
        else:
            self.cancelled.emit()
        self.finished.emit()

    def _on_failed(self, _context: object, message: str) -> None:
        self._running = False
        self.failed.emit(f"{self.path}: {message}")
        self.finished.emit()

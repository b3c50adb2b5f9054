"""View > Wall-clock time: the axis and the status bar in UTC instead of time since the
daemon started.

The wall time of each session's start is read off the log's ``cuzk-daemon starting``
lines (``viewer.analysis.wallclock``) on a background thread, once per log, when the
option is on; a session whose start is unknown keeps its own clock and says why.
"""

from __future__ import annotations

from PySide6 import QtCore, QtGui, QtWidgets

from viewer.analysis.units import wall_stamp
from viewer.analysis.wallclock import session_wall_starts
from viewer.model import Timeline
from viewer.ui.background import LatestTask

SETTING = "view/wall_clock"
UNKNOWN = (
    "wall-clock time unknown for this session: the log has no timed "
    "'cuzk-daemon starting' line for it; showing time since the daemon started"
)


class WallClock(QtCore.QObject):
    """The checkable View > Wall-clock time action of ``window`` and the starts it needs."""

    starts_ready = QtCore.Signal()

    def __init__(self, window: QtWidgets.QMainWindow) -> None:
        super().__init__(window)
        self.window = window
        self._timeline: Timeline | None = None
        self._starts: list[float | None] | None = None  # of self._timeline
        self._task = LatestTask(self, "wallclock")
        self._task.ready.connect(self._on_ready)
        self._task.failed.connect(lambda timeline, _message: self._on_ready(timeline, None))
        self.action = QtGui.QAction("&Wall-clock time (UTC)", window)
        self.action.setObjectName("action_wall_clock")
        self.action.setCheckable(True)
        tip = "Show times as UTC wall-clock times, from the daemon's start line"
        self.action.setStatusTip(tip)
        self.action.setToolTip(tip)
        self.action.setChecked(str(window.settings.value(SETTING, "false")) == "true")
        self.action.toggled.connect(self._on_toggled)
        window.view.session_changed.connect(lambda _index: self._apply())

    def is_on(self) -> bool:
        return self.action.isChecked()

    def _on_toggled(self, on: bool) -> None:
        self.window.settings.setValue(SETTING, str(on).lower())
        self._apply()

    def _apply(self) -> None:
        view = self.window.view
        timeline = view.timeline()
        if not self.is_on() or timeline is None:
            view.set_wall_start(None)
            return
        if timeline is not self._timeline:
            self._timeline, self._starts = timeline, None
            n = len(timeline.sessions)
            self._task.request(timeline, session_wall_starts, timeline.source, n)
            return
        if self._starts is None:
            return  # still reading; _on_done applies it
        index = view.session_index()
        wall = self._starts[index] if 0 <= index < len(self._starts) else None
        view.set_wall_start(wall)
        if wall is None:
            self.window.statusBar().showMessage(UNKNOWN, 8000)
        else:
            self.window.statusBar().showMessage(f"session started {wall_stamp(wall)}", 5000)

    def _on_ready(self, timeline: Timeline, starts: list | None) -> None:
        if timeline is not self._timeline:
            return
        self._starts = starts if starts is not None else [None] * len(timeline.sessions)
        self._apply()
        self.starts_ready.emit()

    def wait(self, msecs: int = 10000) -> bool:
        return self._task.wait(msecs)


def install(window: QtWidgets.QMainWindow) -> WallClock:
    """Add View > Wall-clock time to ``window`` (kept as ``window.wall_clock``)."""
    clock = WallClock(window)
    window.view_menu.addAction(clock.action)
    window.wall_clock = clock
    return clock

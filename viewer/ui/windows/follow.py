"""View > Follow (Ctrl+F): keep reading the shown log while the daemon writes it.

Polls run on a one-thread pool (``LogFollower.poll`` plus the lanes of the session to
show), at the follower's adaptive interval; the GUI thread only swaps the timeline in,
keeping the user's zoom and selection, or sliding along when the view was at the live edge.
"""

from __future__ import annotations

import time
from pathlib import Path

from PySide6 import QtCore, QtGui, QtWidgets

from viewer.analysis.units import counted
from viewer.io import LogError
from viewer.io.follow import LogFollower
from viewer.lanes.data import build_lanes
from viewer.model import Timeline
from viewer.ui.background import LatestTask

EDGE_PX = 8  # the view's right end this close to the data's end: at the live edge


def _poll(follower: LogFollower, index: int, follow_last: bool) -> tuple:
    """On the worker thread: the newer Timeline (or None) and the lanes of the session to show."""
    timeline = follower.poll()
    lanes = {}
    if timeline is not None and timeline.sessions:
        n = len(timeline.sessions)
        index = n - 1 if follow_last else min(max(index, 0), n - 1)
        lanes = {index: build_lanes(timeline.sessions[index])}
    return timeline, lanes


class FollowController(QtCore.QObject):
    """The checkable Follow action, its polling and the status-bar label of ``window``."""

    def __init__(self, window: QtWidgets.QMainWindow) -> None:
        super().__init__(window)
        self.window = window
        self.follower: LogFollower | None = None
        self._armed = False  # checked while a log loads: follow it once shown
        self._events = 0
        self._updated = "—"
        self._task = LatestTask(self, "follow")
        self._task.ready.connect(self._on_ready)
        self._task.failed.connect(self._on_failed)
        self._timer = QtCore.QTimer(self, singleShot=True)
        self._timer.timeout.connect(self._on_timeout)

        self.action = QtGui.QAction("F&ollow", window)
        self.action.setObjectName("action_follow")
        self.action.setCheckable(True)
        self.action.setShortcut(QtGui.QKeySequence("Ctrl+F"))
        tip = "Keep reading the log as the daemon writes it (like tail -f)"
        self.action.setStatusTip(tip)
        self.action.setToolTip(f"{tip} (Ctrl+F)")
        self.action.toggled.connect(self._on_toggled)
        self.label = QtWidgets.QLabel()
        self.label.setTextFormat(QtCore.Qt.TextFormat.PlainText)
        self.label.hide()
        window.statusBar().addPermanentWidget(self.label)
        window.timeline_loaded.connect(self._on_timeline_loaded)
        window.installEventFilter(self)

    # ------------------------------------------------------------ public
    def is_following(self) -> bool:
        return self.follower is not None

    def start(self, path: str | Path) -> None:
        """Follow ``path`` (the log the window shows) from now on."""
        self.stop()
        try:
            self.follower = LogFollower(path, getattr(self.window, "workers_per_gpu", None))
        except LogError as exc:
            self.window.banner.show_message(f"Cannot follow: {exc}")
            return
        self._events = 0
        self._updated = "—"
        self._show_status()
        self.label.show()
        self._set_checked(True)
        self._timer.start(0)

    def stop(self) -> None:
        self._armed = False
        self._task.cancel()  # a poll still running is dropped when it reports
        self._timer.stop()
        if self.follower is not None:
            follower, self.follower = self.follower, None
            self._task.after(follower.close)  # after the running poll, on the same thread
        self.label.hide()
        self._set_checked(False)

    def wait(self, msecs: int = 5000) -> bool:
        """Block until no poll runs (tests and shutdown)."""
        return self._task.wait(msecs)

    # ------------------------------------------------------------ slots
    def _on_toggled(self, checked: bool) -> None:
        if not checked:
            if self.follower is not None or self._armed:
                self.stop()
            return
        if self.follower is not None:
            return
        timeline = self.window.timeline()
        if self.window.is_loading():
            self._armed = True
        elif timeline is None:
            self._set_checked(False)
            self.window.banner.show_message("Open a log first: Follow reads it as it grows.")
        else:
            self.start(timeline.source)

    def _on_timeline_loaded(self, timeline: Timeline) -> None:
        if self._armed:
            self.start(timeline.source)
        elif self.follower is not None and Path(timeline.source) != self.follower.path:
            self.stop()  # another file is shown now

    def _on_timeout(self) -> None:
        if self.follower is None:
            return
        sessions = self.window.timeline().sessions if self.window.timeline() else []
        # On the last session: a restart's new session takes over (the old one is dead).
        follow_last = not sessions or self.window.view.session_index() == len(sessions) - 1
        index = self.window.view.session_index()
        self._task.request(None, _poll, self.follower, index, follow_last)

    def _on_failed(self, _context: object, error: str) -> None:
        if self.follower is None:
            return
        path = self.follower.path
        self.stop()
        self.window.banner.show_message(f"Follow stopped: {path}: {error}")

    def _on_ready(self, _context: object, result: tuple) -> None:
        if self.follower is None:
            return
        timeline, lanes = result
        if timeline is not None:
            self._apply(timeline, lanes)
            self._events = timeline.events
            self._updated = time.strftime("%H:%M:%S")
            self._show_status()
        self._timer.start(int(1000 * self.follower.next_interval()))

    def eventFilter(self, watched: QtCore.QObject, event: QtCore.QEvent) -> bool:
        if watched is self.window and event.type() == QtCore.QEvent.Type.Close:
            self.stop()
            self.wait(3000)
        return False

    # ----------------------------------------------------------- helpers
    def _at_live_edge(self) -> bool:
        lanes = self.window.view.lanes()
        if lanes is None:
            return True
        x0, x1 = self.window.view.x_range()
        px = (x1 - x0) / max(self.window.view.width(), 1)
        return x1 >= lanes.x_max - EDGE_PX * px

    def _apply(self, timeline: Timeline, lanes: dict) -> None:
        """Show the newer read, keeping the session, zoom and selection (or the live edge)."""
        view = self.window.view
        old = view.lanes()
        index, n_old = view.session_index(), len(self.window.timeline().sessions)
        x0, x1 = view.x_range()
        at_edge = self._at_live_edge()
        selection = view.selection()
        restarted = len(timeline.sessions) > n_old and index == n_old - 1
        if restarted:
            # The daemon restarted (or the log rotated): the session shown has ended, the
            # new one is what is live now.  A session chosen further back is kept.
            index = len(timeline.sessions) - 1
        same = old is not None and index == view.session_index()
        self.window.replace_timeline(timeline, index, lanes)
        new = view.lanes()
        if same and new is not None:
            if at_edge:
                grown = new.x_max - old.x_max
                whole = x0 <= old.x_min + EDGE_PX * (x1 - x0) / max(view.width(), 1)
                x0, x1 = (x0 if whole else x0 + grown), x1 + grown
            view.set_x_range(x0, x1)
            if selection is not None:
                view.set_selection(*selection)  # its signal brings the panels up to date
        if not same:
            view.clear_selection()  # its signal brings the panels and range label up to date
        if restarted:
            self.window.statusBar().showMessage(
                f"The daemon restarted: following session {index + 1} (session {n_old} ended)",
                15000,
            )
        elif selection is None:
            self.window.runner.request(timeline.sessions[index], None)

    def _show_status(self) -> None:
        name = self.follower.path.name if self.follower is not None else ""
        events = counted(self._events, "event", grouped=True)
        self.label.setText(f"following {name} · {events} · last update {self._updated}")

    def _set_checked(self, checked: bool) -> None:
        blocked = self.action.blockSignals(True)
        self.action.setChecked(checked)
        self.action.blockSignals(blocked)


def install(window: QtWidgets.QMainWindow) -> FollowController:
    """Add View > Follow and its toolbar button to ``window`` (once, at the end of
    ``MainWindow.__init__``); the controller is also kept as ``window.follow``."""
    existing = getattr(window, "follow", None)
    if isinstance(existing, FollowController):
        return existing
    controller = FollowController(window)
    menu = window.view_menu
    separators = [a for a in menu.actions() if a.isSeparator()]
    if separators:
        menu.insertAction(separators[0], controller.action)
    else:
        menu.addAction(controller.action)
    window.toolbar.addSeparator()
    window.toolbar.addAction(controller.action)
    window.follow = controller
    return controller

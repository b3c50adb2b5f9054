"""The main window: swimlanes in the middle, range panels docked around them."""

from __future__ import annotations

import gc
import time
from collections.abc import Iterable
from pathlib import Path

from PySide6 import QtCore, QtGui, QtWidgets

from viewer.analysis.units import counted, duration
from viewer.export.format import display_path
from viewer.heap import release_free_memory
from viewer.io.paths import DIALOG_FILTER, NO_LOG_IN_FOLDER, expand_paths, unlistable
from viewer.model import Timeline
from viewer.ui.actions import make_action
from viewer.ui.dialogs import ask_save_path, show_about, show_shortcuts
from viewer.ui.panels import GapsPanel, JobsPanel, KernelPanel, ThroughputPanel, TransitionsPanel
from viewer.ui.panels.details_pane import DetailsPane
from viewer.ui.panels.summary_runner import SummaryRunner
from viewer.ui.panels.whatif import WhatIfPanel
from viewer.ui.panels.whatif import install as install_whatif
from viewer.ui.resources import app_icon
from viewer.ui.view.timeline_view import TimelineView
from viewer.ui.windows.compare_window import install as install_compare
from viewer.ui.windows.compare_window import open_compare, open_runs
from viewer.ui.windows.empty_state import EmptyState
from viewer.ui.windows.follow import install as install_follow
from viewer.ui.windows.loader import LoadJob
from viewer.ui.windows.search_bar import SearchBar
from viewer.ui.windows.skipped_lines import SkippedButton
from viewer.ui.windows.sweep_window import install as install_sweep
from viewer.ui.windows.sweep_window import open_sweep
from viewer.ui.windows.theme_menu import install as install_themes
from viewer.ui.windows.wall_clock import install as install_wall_clock
from viewer.ui.writeups.write_ups import install as install_write_ups

MAX_RECENT = 10
#: Panels are filled for at most about this long per event-loop turn.
FILL_SLICE_S = 0.010
#: The first load waits for the window's first paint at most this long.
FIRST_PAINT_WAIT_MS = 300
#: The least width (side panels) or height (bottom panels) a shown panel keeps.
MIN_DOCK_PX = 120
#: Restored or carried to a larger screen, a side panel is made at least this wide (or a
#: fifth of the window), a bottom one this high (or a sixth): sizes saved on a small screen
#: cut a big screen's panels mid-word. Never more than a third of the window.
READABLE_SIDE_PX = 340
READABLE_BOTTOM_PX = 170


class MessageBanner(QtWidgets.QFrame):
    """An inline, dismissable message above the view (errors never take the view away)."""

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("messageBanner")
        self.label = QtWidgets.QLabel()
        self.label.setTextFormat(QtCore.Qt.TextFormat.PlainText)
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(QtCore.Qt.TextInteractionFlag.TextSelectableByMouse)
        close = QtWidgets.QToolButton()
        close.setText("✕")
        close.setAutoRaise(True)
        close.setToolTip("Dismiss")
        close.clicked.connect(self.hide)
        layout = QtWidgets.QHBoxLayout(self)
        layout.setContentsMargins(10, 6, 6, 6)
        layout.addWidget(self.label, 1)
        layout.addWidget(close)
        self.hide()

    def show_message(self, text: str, *, error: bool = True) -> None:
        colour = "#d04a3c" if error else "#2e7bd0"
        self.setStyleSheet(
            f"#messageBanner {{ border: 1px solid {colour}; border-left: 5px solid {colour};"
            " border-radius: 3px; }"
        )
        self.label.setText(text)
        self.show()


class MainWindow(QtWidgets.QMainWindow):
    """Open logs, browse their swimlanes and read the figures of the selected range.

    Every way in (command line, File > Open, Open Recent, drag and drop) goes through
    ``open_paths``. ``timeline_loaded(timeline)`` fires when a log is shown;
    ``load_failed(message)`` when one could not be read; ``summary_ready(summary)``
    when the panels show the figures of a new range.
    """

    timeline_loaded = QtCore.Signal(object)
    load_failed = QtCore.Signal(str)
    summary_ready = QtCore.Signal(object)

    def __init__(
        self,
        settings: QtCore.QSettings | None = None,
        workers_per_gpu: int | None = None,
        parent: QtWidgets.QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.settings = settings or QtCore.QSettings()
        self.workers_per_gpu = workers_per_gpu
        self._timeline: Timeline | None = None
        self._session_index = 0
        self._queue: list[Path] = []
        self._job: LoadJob | None = None
        self._summary = None  # the summary the panels show
        self._pending_summary = None  # the one they are being filled with
        self._release_after_fill = False  # a log replaced another: free its pages once shown
        self._painted = False  # see _start_next
        self._summary_after_paint = False  # see _on_loaded
        self.installEventFilter(self)

        self.setWindowIcon(app_icon())
        self.setAcceptDrops(True)
        self.setDockOptions(
            QtWidgets.QMainWindow.DockOption.AnimatedDocks
            | QtWidgets.QMainWindow.DockOption.AllowTabbedDocks
        )
        self.view = TimelineView(self)
        self.banner = MessageBanner(self)
        self.empty_state = EmptyState(self)
        self.empty_state.open_requested.connect(self.choose_files)
        self.empty_state.recent_chosen.connect(lambda path: self.open_paths([path]))
        self._stack = QtWidgets.QStackedWidget(self)
        self._stack.addWidget(self.empty_state)
        self._stack.addWidget(self.view)
        central = QtWidgets.QWidget(self)
        layout = QtWidgets.QVBoxLayout(central)
        layout.setContentsMargins(4, 4, 4, 0)
        layout.setSpacing(4)
        layout.addWidget(self.banner)
        self.search_bar = SearchBar(self.view, self)
        layout.addWidget(self.search_bar)
        layout.addWidget(self._stack, 1)
        self.setCentralWidget(central)

        self.kernel_panel = KernelPanel()
        self.throughput_panel = ThroughputPanel()
        self.transitions_panel = TransitionsPanel()
        self.gaps_panel = GapsPanel()
        self.jobs_panel = JobsPanel()
        self.whatif_panel = WhatIfPanel()
        self.details_pane = DetailsPane()
        self.docks: dict[str, QtWidgets.QDockWidget] = {}
        right = QtCore.Qt.DockWidgetArea.RightDockWidgetArea
        bottom = QtCore.Qt.DockWidgetArea.BottomDockWidgetArea
        self._dock_areas: dict[str, QtCore.Qt.DockWidgetArea] = {}
        for key, title, panel, area in (
            ("throughput", "Throughput", self.throughput_panel, right),
            ("kernel", "Kernel time", self.kernel_panel, right),
            ("transitions", "Sector transitions", self.transitions_panel, bottom),
            ("gaps", "Idle gaps", self.gaps_panel, bottom),
            ("jobs", "Jobs", self.jobs_panel, bottom),
            ("details", "Details", self.details_pane, bottom),
            ("whatif", "What if", self.whatif_panel, bottom),
        ):
            self._add_dock(key, title, panel, area)
        self._tabify_bottom()

        self.runner = SummaryRunner(self)
        self.runner.summary_ready.connect(self._on_summary_ready)
        self.runner.failed.connect(self._on_summary_failed)

        self._build_status_bar()
        self._build_actions()
        self._connect_view()
        self._update_title()
        self._readable_timer = QtCore.QTimer(self)
        self._readable_timer.setSingleShot(True)
        self._readable_timer.setInterval(120)
        self._readable_timer.timeout.connect(self.readable_docks)
        self._restore_layout()
        self._show_empty_state()
        install_write_ups(self)
        install_compare(self)
        install_sweep(self)
        install_follow(self)
        install_whatif(self, open_runs)
        install_wall_clock(self)
        install_themes(self)

    # ----------------------------------------------------------------- building
    def _tabify_bottom(self) -> None:
        self.tabifyDockWidget(self.docks["transitions"], self.docks["gaps"])
        self.tabifyDockWidget(self.docks["gaps"], self.docks["jobs"])
        self.tabifyDockWidget(self.docks["jobs"], self.docks["details"])
        self.tabifyDockWidget(self.docks["details"], self.docks["whatif"])
        self.docks["transitions"].raise_()

    def _add_dock(self, key, title, widget, area) -> None:
        dock = QtWidgets.QDockWidget(title, self)
        dock.setObjectName(f"dock_{key}")
        dock.setWidget(widget)
        dock.setFeatures(
            QtWidgets.QDockWidget.DockWidgetFeature.DockWidgetMovable
            | QtWidgets.QDockWidget.DockWidgetFeature.DockWidgetClosable
            | QtWidgets.QDockWidget.DockWidgetFeature.DockWidgetFloatable
        )
        # A floor under each dock, so that shrinking the window shrinks the lanes rather than
        # collapsing a panel to nothing (which the saved layout then kept for good).
        if area == QtCore.Qt.DockWidgetArea.BottomDockWidgetArea:
            dock.setMinimumHeight(MIN_DOCK_PX)
        else:
            dock.setMinimumWidth(MIN_DOCK_PX)
        self.addDockWidget(area, dock)
        self.docks[key] = dock
        self._dock_areas[key] = area

    def _build_status_bar(self) -> None:
        bar = self.statusBar()
        self.cursor_label = QtWidgets.QLabel("")
        self.range_label = QtWidgets.QLabel("no range selected")
        for label in (self.cursor_label, self.range_label):
            label.setTextFormat(QtCore.Qt.TextFormat.PlainText)
        self.cursor_label.setMinimumWidth(130)
        self.progress = QtWidgets.QProgressBar()
        self.progress.setMaximumWidth(220)
        self.progress.setRange(0, 100)
        self.progress.setFormat("loading %p%")
        self.cancel_button = QtWidgets.QPushButton("Cancel")
        self.cancel_button.clicked.connect(self.cancel_loading)
        self.progress.hide()
        self.cancel_button.hide()
        self.skipped_button = SkippedButton(self)
        bar.addWidget(self.cursor_label)
        bar.addWidget(self.range_label, 1)
        bar.addPermanentWidget(self.skipped_button)
        bar.addPermanentWidget(self.progress)
        bar.addPermanentWidget(self.cancel_button)
        # A message (a load's notes, a hint) stands in for the cursor and range labels while
        # it shows.  QStatusBar hides them itself, but only as "not explicitly hidden", and
        # Qt shows such children again with their parent: the texts were drawn over each
        # other after a multi-GPU log's note.
        bar.messageChanged.connect(self._show_status_labels)

    def _action(self, text, slot, shortcut=None, tip=None) -> QtGui.QAction:
        return make_action(self, text, slot, shortcut, tip)

    def _build_actions(self) -> None:
        Std = QtGui.QKeySequence.StandardKey
        self.open_action = self._action("&Open…", self.choose_files, Std.Open, "Open cuzk logs")
        self.quit_action = self._action("&Quit", self.close, Std.Quit)
        self.export_report_action = self._action(
            "Export report (Markdown)…",
            self.export_report_markdown,
            None,
            "Write the report of the selected range as Markdown tables",
        )
        self.fit_action = self._action("&Fit all", self.view.fit, "F", "Show the whole session")
        self.select_visible_action = self._action(
            "Select &visible", self.view.select_visible, "V", "Select the visible time span"
        )
        self.clear_selection_action = self._action(
            "&Clear range",
            self._on_escape,
            "Esc",
            "Leave the annotation tool, or analyse the whole session",
        )
        self.next_action = self._action(
            "&Next transition",
            self.view.next_transition,
            "]",
            "Frame the next sector transition",
        )
        self.prev_action = self._action(
            "&Previous transition",
            self.view.prev_transition,
            "[",
            "Frame the previous sector transition",
        )
        self.find_action = self._action(
            "&Find partitions…",
            self._on_find,
            "Ctrl+K",
            "Find partitions by job id, partition, worker, GPU or event (Ctrl+K or /)",
        )
        self.find_action.setShortcuts([QtGui.QKeySequence("Ctrl+K"), QtGui.QKeySequence("/")])
        self.find_next_action = self._action(
            "Find ne&xt", lambda: self._on_find(+1), "F3", "Go to the next match"
        )
        self.find_prev_action = self._action(
            "Find pre&vious", lambda: self._on_find(-1), "Shift+F3", "Go to the previous match"
        )
        self.reset_layout_action = self._action(
            "&Reset layout",
            self.reset_layout,
            None,
            "Every panel back in its place and shown, at its default size",
        )
        self.about_action = self._action("&About", lambda: show_about(self))
        self.shortcuts_action = self._action(
            "&Keyboard shortcuts", lambda: show_shortcuts(self), Std.HelpContents
        )

        menu = self.menuBar()
        file_menu = self.file_menu = menu.addMenu("&File")
        file_menu.setObjectName("menu_file")
        file_menu.addAction(self.open_action)
        self.recent_menu = file_menu.addMenu("Open &Recent")
        self.recent_menu.aboutToShow.connect(self._fill_recent_menu)
        file_menu.addSeparator()
        self.export_menu = file_menu.addMenu("&Export")
        self.export_menu.setObjectName("menu_export")
        self.export_menu.addAction(self.export_report_action)
        file_menu.addSeparator()
        file_menu.addAction(self.quit_action)

        view_menu = self.view_menu = menu.addMenu("&View")
        view_menu.setObjectName("menu_view")
        for action in (
            self.fit_action,
            self.select_visible_action,
            self.clear_selection_action,
            self.next_action,
            self.prev_action,
        ):
            view_menu.addAction(action)
        view_menu.addSeparator()
        for action in (self.find_action, self.find_next_action, self.find_prev_action):
            view_menu.addAction(action)
        view_menu.addSeparator()
        panels = view_menu.addMenu("&Panels")
        for dock in self.docks.values():
            panels.addAction(dock.toggleViewAction())
        view_menu.addAction(self.reset_layout_action)

        help_menu = self.help_menu = menu.addMenu("&Help")
        help_menu.setObjectName("menu_help")
        help_menu.addAction(self.shortcuts_action)
        help_menu.addAction(self.about_action)

        tools = self.toolbar = self.addToolBar("Main")
        tools.setObjectName("toolbar_main")
        tools.setMovable(False)
        tools.setToolButtonStyle(QtCore.Qt.ToolButtonStyle.ToolButtonTextOnly)
        # Short toolbar texts, so that everything fits at 1366 px (the menus keep the long ones).
        for action, short in (
            (self.open_action, "Open"),
            (self.fit_action, "Fit"),
            (self.select_visible_action, "Select visible"),
            (self.clear_selection_action, "Clear range"),
            (self.prev_action, "◀ Transition"),
            (self.next_action, "Transition ▶"),
        ):
            action.setIconText(short)
            tools.addAction(action)
        tools.addSeparator()
        tools.addWidget(QtWidgets.QLabel(" Session "))
        self.session_combo = QtWidgets.QComboBox()
        self.session_combo.setMinimumContentsLength(22)
        self.session_combo.setSizeAdjustPolicy(
            QtWidgets.QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.session_combo.activated.connect(self.set_session)
        tools.addWidget(self.session_combo)

    def _connect_view(self) -> None:
        self.view.selection_changed.connect(self._on_selection_changed)
        self.view.cursor_moved.connect(self._on_cursor_moved)
        self.view.session_changed.connect(self._on_view_session_changed)
        self.view.message_ready.connect(lambda text: self.statusBar().showMessage(text, 5000))
        for panel in (self.transitions_panel, self.gaps_panel, self.jobs_panel):
            panel.frame_requested.connect(self._on_frame_requested)
        self.view.partition_clicked.connect(self._on_partition_clicked)
        self.view.clock_changed.connect(self._on_clock_changed)
        self.view.session_changed.connect(lambda _index: self.details_pane.set_partition(None, -1))
        self.details_pane.frame_requested.connect(self.view.frame_partition)

    # ------------------------------------------------------------------ opening
    def dialog_folder(self) -> str:
        """Where the Open, Compare and Sweep dialogs start: the folder of the log on screen,
        else the one File > Open last went to, else the home folder."""
        timeline = self.timeline()
        folders = [str(self.settings.value("last_dir", ""))]
        if timeline is not None:
            folders.insert(0, str(Path(timeline.source).absolute().parent))
        return next((f for f in folders if f and Path(f).is_dir()), str(Path.home()))

    def choose_files(self) -> None:
        paths, _ = QtWidgets.QFileDialog.getOpenFileNames(
            self, "Open cuzk logs", self.dialog_folder(), DIALOG_FILTER
        )
        if paths:
            self.settings.setValue("last_dir", str(Path(paths[0]).parent))
            self.open_paths(paths)

    def open_paths(self, paths: Iterable[str | Path], mode: str = "open") -> None:
        """The one way logs come in: drop, File > Open, recent files, the command line and
        Shift+drop.  ``open`` loads them one after the other (the last one that loads is
        shown); ``compare`` opens the compare window of the log shown against the first of
        them (or opens them, when nothing is shown yet); ``sweep`` (Ctrl+drop) lines them up
        in a sweep window (File > Sweep…)."""
        if mode not in ("open", "compare", "sweep"):
            raise ValueError(f"open_paths mode must be 'open', 'compare' or 'sweep', not {mode!r}")
        paths = list(paths)
        try:
            expanded = expand_paths(paths)
        except OSError as exc:  # a folder that cannot be listed
            where = display_path(exc.filename or ", ".join(map(str, paths)))
            self._on_failed(f"{where}: {unlistable(exc)}")
            return
        if not expanded:
            names = ", ".join(display_path(p) for p in paths) or "nothing"
            self._on_failed(f"Nothing to open in {names}: {NO_LOG_IN_FOLDER}.")
            return
        if mode == "compare" and self._timeline is not None:
            open_compare(self, expanded[0])
            return
        if mode == "sweep":
            open_sweep(self, expanded)
            return
        self._queue.extend(expanded)
        if self._job is None:
            self._start_next()

    def _start_next(self) -> None:
        if not self._queue or self._job is not None:
            return
        if self.isVisible() and not self._painted:
            # The window's first paint takes tens of ms; a reader starting meanwhile would
            # compete with it for the CPU and the GIL. Start after it (or after a moment,
            # should the window stay unexposed).
            QtCore.QTimer.singleShot(FIRST_PAINT_WAIT_MS, self, self._on_first_paint)
            return
        path = self._queue.pop(0)
        gc.unfreeze()  # what the last load pinned can be collected again (see _on_loaded)
        job = LoadJob(path, self.workers_per_gpu, self)
        job.progress_changed.connect(self._on_progress)
        job.loaded.connect(self._on_loaded)
        job.failed.connect(self._on_failed)
        job.cancelled.connect(self._on_cancelled)
        job.finished.connect(self._on_job_finished)
        self._job = job
        self.progress.setValue(0)
        self.progress.setFormat(f"{path.name} %p%")
        self.progress.show()
        self.cancel_button.show()
        job.start()

    def eventFilter(self, watched: QtCore.QObject, event: QtCore.QEvent) -> bool:
        if event.type() == QtCore.QEvent.Type.Paint:
            if watched is self:
                self.removeEventFilter(self)
                # After the whole paint pass, children included.
                QtCore.QTimer.singleShot(0, self, self._on_first_paint)
            elif watched is self.view.plot.viewport() and self._summary_after_paint:
                QtCore.QTimer.singleShot(0, self, self._summary_after_first_frame)
        return super().eventFilter(watched, event)

    def _summary_after_first_frame(self) -> None:
        if self._summary_after_paint:
            self._request_summary(None)

    def _on_first_paint(self) -> None:
        self._painted = True
        self._start_next()

    def cancel_loading(self) -> None:
        self._queue.clear()
        if self._job is not None:
            self._job.cancel()

    def is_loading(self) -> bool:
        return self._job is not None or bool(self._queue)

    def _on_progress(self, done: int, total: int) -> None:
        # QProgressBar repaints at once on every visible change: once per percent is enough.
        self.progress.setValue(int(100 * done / total) if total > 0 else 0)

    def _on_loaded(self, timeline: Timeline, index: int, lanes: dict, summary) -> None:
        self.banner.hide()
        self.statusBar().clearMessage()
        self._release_after_fill = self._timeline is not None
        self._timeline = timeline
        self._stack.setCurrentWidget(self.view)
        self._show_status_labels(self.statusBar().currentMessage())
        self.skipped_button.set_timeline(timeline)
        self._remember_recent(timeline.source)
        self._fill_session_combo()
        self._session_index = index
        self.view.set_timeline(timeline, index, lanes)
        self.session_combo.setCurrentIndex(self._session_index)
        self._update_title()
        if summary is None and self.view.plot.viewport().isVisible():
            # The figures of the whole session (0.2 s for a week's log) are computed after
            # the log's first frame, which they would otherwise delay, holding the GIL.
            self._show_range(None)
            self._summary_after_paint = True
            self.view.plot.viewport().installEventFilter(self)
            QtCore.QTimer.singleShot(FIRST_PAINT_WAIT_MS, self, self._summary_after_first_frame)
        elif summary is None:
            self._request_summary(None)
        else:
            self._show_range(None)
            self.runner.deliver(summary, None)
        notes = [n for s in timeline.sessions for n in s.notes]
        shown = timeline.sessions[index].notes if timeline.sessions else []
        # The throughput panel keeps the shown session's notes under its verdict; the status
        # bar says them (for 10 s, over the cursor and range) only when that panel is not
        # in view or other sessions have notes of their own.
        if notes and (not self.throughput_panel.isVisible() or len(notes) > len(shown)):
            sentences = (n if n.endswith(".") else f"{n}." for n in dict.fromkeys(notes))
            self.statusBar().showMessage(" ".join(sentences), 10000)
        self.timeline_loaded.emit(timeline)
        # Pin everything alive out of the collector's reach: a loaded week holds ~10^5
        # tracked objects, some of them 10^5-item object arrays, and every full
        # collection would walk them all again (46 ms on the GUI thread for the 1.46 GB
        # benchmark log).  No collection here (it cost ~50 ms more of GUI stall): the
        # previous timeline, if caught in a reference cycle, stays pinned until the next
        # load starts and unpins it; a collection can free it from then on.
        gc.freeze()

    def _on_failed(self, message: str) -> None:
        self.banner.show_message(message)
        self.load_failed.emit(message)

    def _on_cancelled(self) -> None:
        self.statusBar().showMessage("Loading cancelled; the previous view is kept.", 5000)

    def _on_job_finished(self) -> None:
        job, self._job = self._job, None
        if job is not None:
            job.deleteLater()
        self.progress.hide()
        self.cancel_button.hide()
        self._start_next()

    # ---------------------------------------------------------------- sessions
    def timeline(self) -> Timeline | None:
        return self._timeline

    def replace_timeline(self, timeline: Timeline, index: int, lanes: dict) -> None:
        """Swap in a newer read of the same log (follow mode) without the load path's
        side effects: no fit, no ``timeline_loaded``, no recent-files entry."""
        gc.unfreeze()  # follow mode swaps timelines every second: leave the collector be
        self._timeline = timeline
        self._session_index = index
        self._fill_session_combo()
        self.view.set_timeline(timeline, index, lanes)
        self.session_combo.setCurrentIndex(index)
        self.skipped_button.set_timeline(timeline)
        self._update_title()

    def session(self):
        if self._timeline is None or not self._timeline.sessions:
            return None
        return self._timeline.sessions[self._session_index]

    def _fill_session_combo(self) -> None:
        self.session_combo.clear()
        if self._timeline is None:
            return
        for s in self._timeline.sessions:
            jobs = counted(len(s.jobs), "job", grouped=True)
            self.session_combo.addItem(f"{s.number}: {jobs}, {duration(s.end_ms - s.start_ms)}")
            self.session_combo.setItemData(
                s.index, counted(len(s.partitions), "GPU call"), QtCore.Qt.ItemDataRole.ToolTipRole
            )

    def set_session(self, index: int) -> None:
        if self._timeline is None or not 0 <= index < len(self._timeline.sessions):
            return
        if index != self._session_index or self.view.session_index() != index:
            self._session_index = index
            self.view.set_session(index)
        self.session_combo.setCurrentIndex(index)
        self._update_title()
        self._request_summary(None)

    def _on_view_session_changed(self, index: int) -> None:
        if index != self._session_index:
            self._session_index = index
            self.session_combo.setCurrentIndex(index)
            self._update_title()
            self._request_summary(None)

    # ------------------------------------------------------------------- range
    def _on_selection_changed(self, start_ms: float, end_ms: float) -> None:
        self._request_summary(None if end_ms <= start_ms else (start_ms, end_ms))

    def _request_summary(self, rng) -> None:
        if self._summary_after_paint:  # a request now supersedes the deferred one
            self._summary_after_paint = False
            self.view.plot.viewport().removeEventFilter(self)
        session = self.session()
        if session is None:
            return
        self._show_range(rng)
        self.runner.request(session, rng)

    def _show_range(self, rng) -> None:
        if rng is None:
            self.range_label.setText("range: whole session (drag with Ctrl, or press V)")
        else:
            a, b = rng
            fmt = self.view.format_time
            self.range_label.setText(f"range {fmt(a)} → {fmt(b)}  (length {duration(b - a)})")

    def _on_summary_ready(self, summary, rng) -> None:
        """Fill the panels from the next event-loop turn on, a few milliseconds' worth per
        turn: with 10^5-row tables each takes several ms, and together (or with the new
        lanes' first paint) they would freeze the window for a moment."""
        self._pending_summary = summary
        panels = [
            self.throughput_panel,
            self.kernel_panel,
            self.transitions_panel,
            self.gaps_panel,
            self.jobs_panel,
        ]
        self._fill_panels_later(summary, panels)

    def _fill_panels_later(self, summary, panels: list) -> None:
        # A 1 ms timer rather than 0: zero-delay calls are posted events, which the event
        # loop runs before due timers, so a chain of them would hold the window's back.
        QtCore.QTimer.singleShot(1, self, lambda: self._fill_panels(summary, panels))

    def _fill_panels(self, summary, panels: list) -> None:
        if summary is not self._pending_summary:
            return  # a newer range arrived meanwhile: it fills the panels itself
        start = time.perf_counter()
        while panels and time.perf_counter() - start < FILL_SLICE_S:
            panels[0].set_summary(summary)
            panels = panels[1:]
        if panels:
            self._fill_panels_later(summary, panels)
        else:
            self._summary = summary
            if self._release_after_fill:
                # The panels held the previous log's summary, the last references to its
                # tables: what they freed here, on the GUI thread, goes back to the system
                # from the summaries' thread (a reload held ~100 MB more for good).
                self._release_after_fill = False
                self.runner.task.after(release_free_memory)
            self.summary_ready.emit(summary)

    def _on_summary_failed(self, message: str) -> None:
        self.statusBar().showMessage(f"Could not compute the figures: {message}", 10000)

    def current_summary(self):
        """The summary every panel shows (None before the first one)."""
        return self._summary

    def _on_escape(self) -> None:
        """Esc leaves an armed annotation tool first, then the search bar; else it clears
        the range."""
        write_ups = getattr(self, "write_ups", None)
        if write_ups is not None and write_ups.controller.tool:
            write_ups.controller.set_tool("")
            self.statusBar().showMessage("annotation tool off", 3000)
            return
        if self.search_bar.isVisible() and self.search_bar.isAncestorOf(self.focusWidget()):
            self.search_bar.close_bar()
            return
        self.view.clear_selection()

    def _on_find(self, step: int = 0) -> None:
        """Open the search bar (Ctrl+K, /); F3 / Shift+F3 go to the next / previous match."""
        if step == 0 or not self.search_bar.isVisible():
            self.search_bar.open()
        if step:
            self.search_bar.next() if step > 0 else self.search_bar.prev()

    def _on_clock_changed(self, clock) -> None:
        """The panels and the Details tab write their times on the clock the axis shows."""
        for panel in (
            self.throughput_panel,
            self.kernel_panel,
            self.transitions_panel,
            self.gaps_panel,
            self.jobs_panel,
            self.details_pane,
        ):
            panel.set_clock(clock)

    def _on_partition_clicked(self, row: int) -> None:
        """A bar was clicked: its partition's life in the Details tab, raised."""
        self.details_pane.set_partition(self.view.session(), row)
        if row >= 0:
            self.docks["details"].show()
            self.docks["details"].raise_()

    def _on_frame_requested(self, start_ms: float, end_ms: float) -> None:
        self.view.set_x_range(start_ms, end_ms)

    def _on_cursor_moved(self, ms: float) -> None:
        self.cursor_label.setText(f"cursor {self.view.format_time(ms)}")

    # ---------------------------------------------------------------- exports
    def export_report_markdown(self) -> None:
        from viewer.export.report import report_markdown

        if self._timeline is None:
            return
        default = str(Path(self._timeline.source).with_suffix(".report.md"))
        path, _ = ask_save_path(self, self.settings, "Export report", default, "Markdown (*.md)")
        if not path:
            return
        timeline, selection = self._timeline, self.view.selection()
        self.write_ups.write_file(
            path,
            lambda: report_markdown(timeline, session=self._session_index, rng=selection),
            "report",
        )

    # ---------------------------------------------------------- drag and drop
    def dragEnterEvent(self, event: QtGui.QDragEnterEvent) -> None:
        if event.mimeData().hasUrls() and any(u.isLocalFile() for u in event.mimeData().urls()):
            event.acceptProposedAction()
        else:
            event.ignore()

    def dragMoveEvent(self, event: QtGui.QDragMoveEvent) -> None:
        if event.mimeData().hasUrls():
            event.acceptProposedAction()

    def dropEvent(self, event: QtGui.QDropEvent) -> None:
        paths = [u.toLocalFile() for u in event.mimeData().urls() if u.isLocalFile()]
        if paths:
            event.acceptProposedAction()
            mods = event.modifiers()
            if mods & QtCore.Qt.KeyboardModifier.ControlModifier:
                self.open_paths(paths, "sweep")
            elif mods & QtCore.Qt.KeyboardModifier.ShiftModifier:
                self.open_paths(paths, "compare")
            else:
                self.open_paths(paths, "open")

    # ------------------------------------------------------------ persistence
    def recent_files(self) -> list[str]:
        value = self.settings.value("recent_files", [])
        if isinstance(value, str):
            value = [value]
        return [str(v) for v in (value or [])]

    def _remember_recent(self, path: Path) -> None:
        text = str(Path(path).resolve())
        recent = [text] + [p for p in self.recent_files() if p != text]
        self.settings.setValue("recent_files", recent[:MAX_RECENT])
        self.empty_state.set_recent(self.recent_files())

    def _fill_recent_menu(self) -> None:
        self.recent_menu.clear()
        recent = self.recent_files()
        for path in recent:
            action = self.recent_menu.addAction(path)
            action.triggered.connect(lambda _=False, p=path: self.open_paths([p]))
        if not recent:
            self.recent_menu.addAction("(no recent files)").setEnabled(False)
        else:
            self.recent_menu.addSeparator()
            self.recent_menu.addAction("Clear list", self._clear_recent)

    def _clear_recent(self) -> None:
        self.settings.remove("recent_files")
        self.empty_state.set_recent([])

    def _restore_layout(self) -> None:
        geometry = self.settings.value("window/geometry")
        state = self.settings.value("window/state")
        if geometry is not None:
            self.restoreGeometry(geometry)
        else:
            self.resize(1500, 900)
        if state is not None and self.restoreState(state):
            # A layout saved squeezed (before the panels had a minimum size) is not kept;
            # one saved on a smaller screen is widened to read on this one.
            QtCore.QTimer.singleShot(0, self._unsqueeze)
        else:
            # Dock sizes only apply once the window has its size: after the first show.
            QtCore.QTimer.singleShot(0, self._default_dock_sizes)

    def reset_layout(self) -> None:
        """View > Reset layout: every panel back in its place, shown, at its default size;
        the saved layout is forgotten."""
        for key, dock in self.docks.items():
            dock.setFloating(False)
            self.addDockWidget(self._dock_areas[key], dock)
            dock.show()
        self._tabify_bottom()
        self.settings.remove("window/state")
        self._default_dock_sizes()
        self.statusBar().showMessage("Layout reset", 4000)

    def collapsed_docks(self) -> list[str]:
        """The panels shown but squeezed below a usable size (a layout not worth keeping)."""
        out = []
        for key, dock in self.docks.items():
            if dock.isHidden() or dock.isFloating():
                continue
            bottom = self._dock_areas[key] == QtCore.Qt.DockWidgetArea.BottomDockWidgetArea
            if (dock.height() if bottom else dock.width()) < MIN_DOCK_PX:
                out.append(key)
        return out

    def _default_dock_sizes(self) -> None:
        h = QtCore.Qt.Orientation.Horizontal
        v = QtCore.Qt.Orientation.Vertical
        self.resizeDocks([self.docks["throughput"]], [max(400, self.width() // 4)], h)
        self.resizeDocks([self.docks["throughput"], self.docks["kernel"]], [1, 1], v)
        self.resizeDocks([self.docks["transitions"]], [max(230, self.height() // 4)], v)

    def _unsqueeze(self) -> None:
        if self.collapsed_docks():
            self.reset_layout()
        else:
            self.readable_docks()

    def readable_docks(self) -> list[str]:
        """Widen the side panels and heighten the bottom ones that are too small to read at
        this window's size (``READABLE_SIDE_PX``, ``READABLE_BOTTOM_PX``); returns those
        changed. Run after a restored layout, a move to another screen and a resize."""
        w, h = self.width(), self.height()
        side = min(max(READABLE_SIDE_PX, w // 5), w // 3)
        low = min(max(READABLE_BOTTOM_PX, h // 6), h // 3)
        bottom_area = QtCore.Qt.DockWidgetArea.BottomDockWidgetArea
        narrow, short = [], []
        seen: set = set()
        for key, dock in self.docks.items():
            if dock.isHidden() or dock.isFloating() or dock in seen:
                continue
            # Tabs share one place: the group is sized once, through its first dock.
            seen.update(self.tabifiedDockWidgets(dock))
            if self.dockWidgetArea(dock) == bottom_area:
                if max(d.height() for d in (dock, *self.tabifiedDockWidgets(dock))) < low:
                    short.append(key)
            elif dock.width() < side:
                narrow.append(key)
        if narrow:
            docks = [self.docks[k] for k in narrow]
            self.resizeDocks(docks, [side] * len(docks), QtCore.Qt.Orientation.Horizontal)
        if short:
            docks = [self.docks[k] for k in short]
            # A tab group's place holds its tab bar too: ask for that much more.
            bars = [b.height() for b in self.findChildren(QtWidgets.QTabBar) if b.isVisible()]
            tabs = [max(bars, default=0) if self.tabifiedDockWidgets(d) else 0 for d in docks]
            sizes = [low + t for t in tabs]
            self.resizeDocks(docks, sizes, QtCore.Qt.Orientation.Vertical)
        return narrow + short

    def _on_screen_changed(self, _screen=None) -> None:
        self._readable_timer.start()

    def resizeEvent(self, event: QtGui.QResizeEvent) -> None:
        super().resizeEvent(event)
        grew = event.size().width() > event.oldSize().width() or (
            event.size().height() > event.oldSize().height()
        )
        if event.oldSize().isValid() and grew:
            self._readable_timer.start()  # maximized, or carried to a bigger screen

    def showEvent(self, event: QtGui.QShowEvent) -> None:
        super().showEvent(event)
        handle = self.windowHandle()
        if handle is not None and not getattr(self, "_screen_hooked", False):
            handle.screenChanged.connect(self._on_screen_changed)
            self._screen_hooked = True

    def closeEvent(self, event: QtGui.QCloseEvent) -> None:
        self.cancel_loading()
        if self._job is not None:
            self._job.wait(3000)
        self.runner.wait(3000)
        self.settings.setValue("window/geometry", self.saveGeometry())
        if self.collapsed_docks():
            self.settings.remove("window/state")  # next start: the default layout
        else:
            self.settings.setValue("window/state", self.saveState())
        self.settings.sync()
        super().closeEvent(event)

    # ------------------------------------------------------------------ misc
    def _update_title(self) -> None:
        if self._timeline is None:
            self.setWindowTitle("cuzk Timeline Viewer")
            return
        name = Path(self._timeline.source).name
        n = len(self._timeline.sessions)
        suffix = f" — session {self._session_index + 1} of {n}" if n > 1 else ""
        self.setWindowTitle(f"{name}{suffix} — cuzk Timeline Viewer")

    def _show_status_labels(self, message: str = "") -> None:
        """The cursor and range labels: shown with a log and no status message."""
        shown = not message and self._stack.currentWidget() is self.view
        for label in (self.cursor_label, self.range_label):
            label.setVisible(shown)

    def _show_empty_state(self) -> None:
        """Before the first log: the drop hint and recent files instead of an empty axis,
        and a quiet status bar."""
        self.empty_state.set_recent(self.recent_files())
        self._stack.setCurrentWidget(self.empty_state)
        for label in (self.cursor_label, self.range_label):
            label.hide()

"""Compare two runs: A's and B's swimlanes stacked on one aligned time axis, and their diff.

Zooming, panning or selecting in one view applies to the other through the
alignment offsets (aligned time = a run's own offset minus its alignment
point).  The diff panel follows the selected range, else the visible one.
``install(window)`` plugs "Compare…" and Shift+drop into the main window.
"""

from __future__ import annotations

from pathlib import Path

from PySide6 import QtCore, QtGui, QtWidgets

from viewer.analysis.compare import ALIGN_MODES, Alignment, alignment_offset, main_session
from viewer.export.compare import (
    CompareResult,
    compare_csv,
    compare_markdown,
    compare_runs,
    run_label,
)
from viewer.export.files import write_output
from viewer.io.paths import DIALOG_FILTER
from viewer.lanes.data import SessionLanes
from viewer.model import Session, Timeline
from viewer.ui.background import LatestTask
from viewer.ui.dialogs import ask_save_path
from viewer.ui.panels.compare_panel import CompareDiffPanel
from viewer.ui.view.timeline_view import TimelineView
from viewer.ui.windows.loader import LoadJob
from viewer.ui.writeups.image_export import png_bytes

Qt = QtCore.Qt
DIFF_DELAY_MS = 150
ALIGN_LABELS = {
    "first-gpu": "first GPU_START",
    "session": "session start",
    "completion": "n-th job completed",
}


class _DiffRunner(QtCore.QObject):
    """Computes the latest requested comparison off the GUI thread (a ``LatestTask``)."""

    ready = QtCore.Signal(object)
    failed = QtCore.Signal(str)

    def __init__(self, parent: QtCore.QObject) -> None:
        super().__init__(parent)
        self._task = LatestTask(self, "compare")
        self._task.ready.connect(lambda _, res: self.ready.emit(res))
        self._task.failed.connect(lambda _, message: self.failed.emit(message))

    def request(self, **args) -> None:
        self._task.request(None, lambda: compare_runs(**args))

    def wait(self, msecs: int = 10000) -> bool:
        return self._task.wait(msecs)


class _RunPane(QtWidgets.QWidget):
    """One run: a caption naming it and its alignment point, above its swimlanes."""

    def __init__(self, tag: str, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.tag = tag
        self.caption = QtWidgets.QLabel()
        self.caption.setTextFormat(Qt.TextFormat.PlainText)
        font = self.caption.font()
        font.setBold(True)
        self.caption.setFont(font)
        self.view = TimelineView(self)
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(self.caption)
        layout.addWidget(self.view, 1)


class CompareWindow(QtWidgets.QWidget):
    """Runs A (top) and B (bottom) with linked aligned time axes and a diff panel.

    ``comparison_ready(result)`` fires whenever the diff panel shows a new ``CompareResult``;
    ``runs_loaded()`` once both runs are shown.
    """

    comparison_ready = QtCore.Signal(object)
    runs_loaded = QtCore.Signal()

    def __init__(
        self, parent: QtWidgets.QWidget | None = None, workers_per_gpu: int | None = None
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Compare runs — cuzk Timeline Viewer")
        self.workers_per_gpu = workers_per_gpu
        self._sessions: list[Session | None] = [None, None]
        self._labels = ["A", "B"]
        self._details = ["", ""]
        self._sources = ["", ""]
        self._whole: tuple | None = None  # whole-run summaries, once computed
        self._choice: tuple[int | None, int | None] = (None, None)
        self._alignment = Alignment()
        self._offsets = (0.0, 0.0)
        self._syncing = False
        self._jobs: list[LoadJob] = []
        self._pending: list[Timeline | None] = [None, None]

        self.pane_a, self.pane_b = _RunPane("A"), _RunPane("B")
        self.view_a, self.view_b = self.pane_a.view, self.pane_b.view
        self.panel = CompareDiffPanel()
        self.status = QtWidgets.QLabel()
        self.status.setTextFormat(Qt.TextFormat.PlainText)
        self._build_bar()

        runs = QtWidgets.QSplitter(Qt.Orientation.Vertical)
        runs.addWidget(self.pane_a)
        runs.addWidget(self.pane_b)
        self.splitter = QtWidgets.QSplitter(Qt.Orientation.Horizontal)
        self.splitter.addWidget(runs)
        self.splitter.addWidget(self.panel)
        self.splitter.setStretchFactor(0, 1)
        self.splitter.setSizes([1000, 640])
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 4)
        layout.setSpacing(4)
        layout.addLayout(self.bar)
        layout.addWidget(self.splitter, 1)
        layout.addWidget(self.status)

        self.runner = _DiffRunner(self)
        self.runner.ready.connect(self._on_result)
        self.runner.failed.connect(self.status.setText)
        self._diff_timer = QtCore.QTimer(self, singleShot=True, interval=DIFF_DELAY_MS)
        self._diff_timer.timeout.connect(self._request_diff)
        for src in (self.view_a, self.view_b):
            src.plot.getViewBox().sigXRangeChanged.connect(self._on_x_range)
            src.selection_changed.connect(self._on_selection)
        self.resize(1600, 950)

    def _build_bar(self) -> None:
        self.bar = QtWidgets.QHBoxLayout()
        self.bar.addWidget(QtWidgets.QLabel("Align on"))
        self.align_combo = QtWidgets.QComboBox()
        for mode in ALIGN_MODES:
            self.align_combo.addItem(ALIGN_LABELS[mode], mode)
        self.align_combo.activated.connect(self._on_alignment_chosen)
        self.align_n = QtWidgets.QSpinBox()
        self.align_n.setRange(1, 100000)
        self.align_n.setPrefix("#")
        self.align_n.setEnabled(False)
        self.align_n.valueChanged.connect(self._on_alignment_chosen)
        fit = QtWidgets.QPushButton("Fit")
        fit.clicked.connect(self.fit)
        clear = QtWidgets.QPushButton("Clear range")
        clear.clicked.connect(self.view_a.clear_selection)
        self.export_button = QtWidgets.QToolButton()
        self.export_button.setText("Export")
        self.export_button.setPopupMode(QtWidgets.QToolButton.ToolButtonPopupMode.InstantPopup)
        menu = QtWidgets.QMenu(self.export_button)
        menu.addAction("Image (PNG)…", lambda: self._export("png"))
        menu.addAction("Diff table (Markdown)…", lambda: self._export("md"))
        menu.addAction("Diff table (CSV)…", lambda: self._export("csv"))
        self.export_button.setMenu(menu)
        hint = QtWidgets.QLabel("drag pans both · Ctrl-drag selects a range in both")
        hint.setEnabled(False)
        for w in (self.align_combo, self.align_n, fit, clear):
            self.bar.addWidget(w)
        self.bar.addSpacing(12)
        self.bar.addWidget(hint)
        self.bar.addStretch(1)
        self.bar.addWidget(self.export_button)

    # ------------------------------------------------------------------ runs
    def set_runs(
        self,
        a: Session,
        b: Session,
        label_a: str = "A",
        label_b: str = "B",
        source_a: str = "",
        source_b: str = "",
        lanes: tuple[SessionLanes | None, SessionLanes | None] = (None, None),
        details: tuple[str, str] = ("", ""),
    ) -> None:
        """Show sessions ``a`` and ``b`` (a Timeline each is built around them for the views;
        a run need not come from a file, e.g. a what-if's predicted run).  ``lanes``: their
        lanes when already built off the GUI thread; ``details``: more words on each run
        for its caption (the labels head the diff table's columns: keep them short)."""
        self._sessions = [a, b]
        self._labels = [label_a, label_b]
        self._details = list(details)
        self._sources = [source_a, source_b]
        self._whole = None
        for pane, s, source, built in zip(
            (self.pane_a, self.pane_b), (a, b), (source_a, source_b), lanes, strict=True
        ):
            timeline = Timeline(Path(source or "run"), [s])
            pane.view.set_timeline(timeline, 0, None if built is None else {0: built})
        self.setWindowTitle(f"{label_a} vs {label_b} — compare — cuzk Timeline Viewer")
        if not self._apply_alignment(self._alignment):
            self._apply_alignment(Alignment())
        self.fit()
        self.runs_loaded.emit()

    def load(
        self,
        a: Timeline | str | Path,
        b: Timeline | str | Path,
        session_a: int | None = None,
        session_b: int | None = None,
    ) -> None:
        """Show two runs, reading the ones given as paths off the GUI thread."""
        self._pending = [None, None]
        self._choice = (session_a, session_b)
        for i, run in enumerate((a, b)):
            if isinstance(run, Timeline):
                self._pending[i] = run
                continue
            job = LoadJob(Path(run), self.workers_per_gpu, self)
            job.setProperty("run", i)
            # A bound method of this QObject: the slot runs on the GUI thread (queued).
            job.loaded.connect(self._on_loaded)
            job.failed.connect(self.status.setText)
            job.finished.connect(self._on_job_finished)
            self._jobs.append(job)
            job.start()
        self.status.setText("loading…")
        self._maybe_show()

    def _on_loaded(self, timeline: Timeline) -> None:
        job = self.sender()
        self._pending[int(job.property("run"))] = timeline
        self._maybe_show()

    def _on_job_finished(self) -> None:
        job = self.sender()
        if job in self._jobs:
            self._jobs.remove(job)
            job.deleteLater()

    def _maybe_show(self) -> None:
        if any(t is None for t in self._pending):
            return
        ta, tb = self._pending
        try:
            a, b = (main_session(t, s) for t, s in zip((ta, tb), self._choice, strict=True))
        except ValueError as exc:
            self.status.setText(str(exc))
            return
        la, lb = (run_label(t.source) for t in (ta, tb))
        if la == lb:
            la, lb = f"{la} session {a.number}", f"{lb} session {b.number}"
        self.status.setText("")
        self.set_runs(a, b, la, lb, str(ta.source), str(tb.source))

    def sessions(self) -> tuple[Session | None, Session | None]:
        return self._sessions[0], self._sessions[1]

    # ------------------------------------------------------------- alignment
    def alignment(self) -> Alignment:
        return self._alignment

    def offsets(self) -> tuple[float, float]:
        """Session offsets (ms) of the alignment point of A and B."""
        return self._offsets

    def set_alignment(self, alignment: Alignment) -> bool:
        """Align on ``alignment``; False (and a message) when a run lacks that point."""
        return self._apply_alignment(alignment)

    def _on_alignment_chosen(self, *args) -> None:
        mode = self.align_combo.currentData()
        self.align_n.setEnabled(mode == "completion")
        alignment = Alignment(mode, self.align_n.value() if mode == "completion" else 1)
        if not self._apply_alignment(alignment):
            self._show_alignment_controls()

    def _apply_alignment(self, alignment: Alignment) -> bool:
        a, b = self._sessions
        if a is None or b is None:
            self._alignment = alignment
            self._show_alignment_controls()
            return True
        try:
            offsets = (alignment_offset(a, alignment), alignment_offset(b, alignment))
        except ValueError as exc:
            self.status.setText(f"Cannot align on {alignment.describe()}: {exc}")
            return False
        self.status.setText("")
        self._alignment, self._offsets = alignment, offsets
        self._show_alignment_controls()
        for pane, label, detail, off in zip(
            (self.pane_a, self.pane_b), self._labels, self._details, offsets, strict=True
        ):
            named = f"{label} ({detail})" if detail else label
            pane.caption.setText(
                f"{pane.tag}: {named} — aligned time 0 = {alignment.describe()} "
                f"at {off / 1000:.3f} s of the log"
            )
            pane.view.set_time_zero(off, alignment.describe())
        self._follow(self.view_a, self.view_b)
        sel = self.view_a.selection()
        if sel is not None:
            self._mirror_selection(self.view_a, self.view_b, sel)
        self._diff_timer.start()
        return True

    def _show_alignment_controls(self) -> None:
        for w in (self.align_combo, self.align_n):
            w.blockSignals(True)
        self.align_combo.setCurrentIndex(ALIGN_MODES.index(self._alignment.mode))
        self.align_n.setValue(self._alignment.n)
        self.align_n.setEnabled(self._alignment.mode == "completion")
        for w in (self.align_combo, self.align_n):
            w.blockSignals(False)

    # ---------------------------------------------------------------- linking
    def _offset(self, view: TimelineView) -> float:
        return self._offsets[0] if view is self.view_a else self._offsets[1]

    def _other(self, view: TimelineView) -> TimelineView:
        return self.view_b if view is self.view_a else self.view_a

    def to_aligned(self, view: TimelineView, ms: float) -> float:
        return ms - self._offset(view)

    def aligned_range(self) -> tuple[float, float]:
        """The selected range in aligned ms, else the visible one (A's view)."""
        a, b = self.view_a.selection() or self.view_a.x_range()
        return self.to_aligned(self.view_a, a), self.to_aligned(self.view_a, b)

    def range_to_compare(self) -> tuple[float, float] | None:
        """``aligned_range``, or None when nothing is selected and both whole runs are in
        view: the range section would repeat the whole-run one figure for figure."""
        rng = self.aligned_range()
        if self.view_a.selection() is not None:
            return rng
        for view, s in zip((self.view_a, self.view_b), self._sessions, strict=True):
            if s is None:
                continue
            lo, hi = self.to_aligned(view, s.start_ms), self.to_aligned(view, s.end_ms)
            if rng[0] > lo or rng[1] < hi:
                return rng
        return None

    def fit(self) -> None:
        """Show the union of both runs in aligned time."""
        lo, hi = [], []
        for view in (self.view_a, self.view_b):
            lanes = view.lanes()
            if lanes is not None:
                lo.append(self.to_aligned(view, lanes.x_min))
                hi.append(self.to_aligned(view, lanes.x_max))
        if lo:
            pad = (max(hi) - min(lo)) * 0.01
            self.view_a.set_x_range(
                min(lo) - pad + self._offsets[0], max(hi) + pad + self._offsets[0]
            )

    def _on_x_range(self, vb, *args) -> None:
        if self._syncing:
            return
        src = self.view_a if vb is self.view_a.plot.getViewBox() else self.view_b
        self._follow(src, self._other(src))
        self._diff_timer.start()

    def _follow(self, src: TimelineView, dst: TimelineView) -> None:
        if dst.lanes() is None:
            return
        d = self._offset(dst) - self._offset(src)
        x0, x1 = src.x_range()
        self._syncing = True
        try:
            dst.set_x_range(x0 + d, x1 + d)
        finally:
            self._syncing = False

    def _on_selection(self, start: float, end: float) -> None:
        src = self.sender()
        if src not in (self.view_a, self.view_b):
            return
        sel = (start, end) if end > start else None
        self._mirror_selection(src, self._other(src), sel)
        self._diff_timer.start()

    def _mirror_selection(self, src, dst, sel: tuple[float, float] | None) -> None:
        have = dst.selection()
        if sel is None:
            if have is not None:
                dst.clear_selection()
            return
        d = self._offset(dst) - self._offset(src)
        want = (sel[0] + d, sel[1] + d)
        tol = max(1e-6 * abs(want[1] - want[0]), 1e-6)
        if have is None or max(abs(have[0] - want[0]), abs(have[1] - want[1])) > tol:
            dst.set_selection(*want)

    # ------------------------------------------------------------------ diff
    def _request_diff(self) -> None:
        a, b = self._sessions
        if a is None or b is None:
            return
        self.runner.request(
            a=a,
            b=b,
            label_a=self._labels[0],
            label_b=self._labels[1],
            alignment=self._alignment,
            rng=self.range_to_compare(),
            source_a=self._sources[0],
            source_b=self._sources[1],
            whole=self._whole,
        )

    def _on_result(self, res: CompareResult) -> None:
        kind = "Selected range" if self.view_a.selection() is not None else "Visible range"
        if res.whole.a.session is self._sessions[0] and res.whole.b.session is self._sessions[1]:
            self._whole = (res.whole.a, res.whole.b)
        self.panel.set_result(res, kind)
        self.comparison_ready.emit(res)

    def result(self) -> CompareResult | None:
        return self.panel.result()

    # ---------------------------------------------------------------- export
    def grab_image(self, scale: float = 2.0) -> QtGui.QImage:
        """Both runs and the diff rendered at ``scale`` x their size (crisp in write-ups):
        no toolbar, no status line and no scroll bar."""
        target = self.splitter
        size = target.size() * scale
        image = QtGui.QImage(size, QtGui.QImage.Format.Format_ARGB32_Premultiplied)
        image.setDevicePixelRatio(scale)
        image.fill(self.palette().color(QtGui.QPalette.ColorRole.Window))
        bars = [b for b in target.findChildren(QtWidgets.QScrollBar) if b.isVisible()]
        for bar in bars:
            bar.hide()  # not laid out again before the render: a blank strip at most
        painter = QtGui.QPainter(image)
        try:
            with self.view_a.drawn_anew(), self.view_b.drawn_anew():
                target.render(painter, QtCore.QPoint())
        finally:
            painter.end()
            for bar in bars:
                bar.show()
        return image

    def export_to(self, path: str | Path) -> None:
        """Write the view (.png), or the diff table (.md / .csv), by the file's suffix
        (never over either log: ``write_output``)."""
        path = Path(path)
        res = self.result()
        if path.suffix.lower() == ".png":
            data = png_bytes(self.grab_image())
        elif res is None:
            raise ValueError("no comparison to export yet")
        elif path.suffix.lower() == ".csv":
            data = compare_csv(res)
        else:
            data = compare_markdown(res)
        write_output(path, data, [s for s in self._sources if s])

    def _export(self, kind: str) -> None:
        filters = {"png": "PNG image (*.png)", "md": "Markdown (*.md)", "csv": "CSV (*.csv)"}
        stem = "_vs_".join(self._labels).replace(" ", "_")
        settings = getattr(self.parent(), "settings", None)
        title, name = "Export comparison", f"compare_{stem}.{kind}"
        path, _ = ask_save_path(self, settings, title, name, filters[kind])
        if not path:
            return
        try:
            self.export_to(path)
        except (OSError, ValueError) as exc:
            self.status.setText(str(exc))
        else:
            self.status.setText(f"Written to {path}")

    def closeEvent(self, event: QtGui.QCloseEvent) -> None:
        for job in list(self._jobs):
            job.cancel()
            job.wait(3000)
        self.runner.wait(3000)
        super().closeEvent(event)


# ---------------------------------------------------------------- main window hooks


def open_compare(window, b: str | Path | Timeline, a: str | Path | Timeline | None = None):
    """A compare window of ``a`` (default: the window's current log and session) against ``b``."""
    session_a = None
    if a is None:
        a = window.timeline()
        current = window.session()
        session_a = current.index if current is not None else None
    cw = _new_window(window)
    cw.load(a, b, session_a=session_a)
    cw.show()
    return cw


def open_runs(window, a: Session, b: Session, label_a: str, label_b: str, **kwargs):
    """A compare window of two sessions already in memory (``set_runs``'s keywords)."""
    cw = _new_window(window)
    cw.set_runs(a, b, label_a, label_b, **kwargs)
    cw.show()
    return cw


def _new_window(window) -> CompareWindow:
    cw = CompareWindow(window, getattr(window, "workers_per_gpu", None))
    cw.setWindowFlag(Qt.WindowType.Window, True)
    cw.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose, True)
    return cw


def _ask_and_compare(window) -> None:
    start = window.dialog_folder()
    if window.timeline() is not None:
        path, _ = QtWidgets.QFileDialog.getOpenFileName(
            window, "Compare the current run with…", start, DIALOG_FILTER
        )
        if path:
            open_compare(window, path)
        return
    paths, _ = QtWidgets.QFileDialog.getOpenFileNames(
        window, "Choose two runs to compare (A, then B)", start, DIALOG_FILTER
    )
    if len(paths) == 1:
        ask = QtWidgets.QFileDialog.getOpenFileName
        more, _ = ask(window, "Compare with…", start, DIALOG_FILTER)
        paths = [*paths, more] if more else []
    if len(paths) >= 2:
        open_compare(window, paths[1], paths[0])


def install(window) -> QtGui.QAction:
    """Add File > Compare… (after Open Recent) to the main window (Shift+drop goes through
    ``MainWindow.open_paths(paths, "compare")``)."""
    action = QtGui.QAction("&Compare…", window)
    action.setObjectName("action_compare")
    action.setStatusTip("Compare the current run with another log (or two logs), side by side")
    action.triggered.connect(lambda: _ask_and_compare(window))
    menu = window.file_menu
    actions = menu.actions()
    recent = getattr(window, "recent_menu", None)
    after = [i for i, act in enumerate(actions) if recent is not None and act.menu() is recent]
    if after and after[0] + 1 < len(actions):
        menu.insertAction(actions[after[0] + 1], action)
    else:
        menu.addAction(action)
    return action

"""File > Sweep…: runs of one machine lined up by the knob they differ in, as a chart and a
table, in a window of its own.

The logs are read and the sweep computed off the GUI thread (``LatestTask``); the chart
is ``viewer.ui.windows.sweep_chart``, the table and the lines under it are the ``sweep``
command's (``viewer.export.sweep``), so the window and the command say the same thing.
Clicking a measured point opens that run in the main window.
"""

from __future__ import annotations

from pathlib import Path

from PySide6 import QtCore, QtGui, QtWidgets

from viewer.analysis.units import counted
from viewer.export.format import display_path
from viewer.export.sweep import HEAD, rows, summary, sweep_markdown
from viewer.io.paths import DIALOG_FILTER
from viewer.ui.background import LatestTask
from viewer.ui.windows.sweep_chart import SweepChart, chart_bytes
from viewer.whatif.sweep import KNOBS, Sweep, read_runs, sweep

Qt = QtCore.Qt


def compute(paths: list[str], workers_per_gpu: int | None, knob: str | None) -> Sweep:
    """Read every log and make the sweep (off the GUI thread); SweepError says why not."""
    return sweep(read_runs(paths, workers_per_gpu, display_path), knob, consume=True)


class SweepWindow(QtWidgets.QWidget):
    """The chart, the table and the summary of one sweep."""

    ready = QtCore.Signal(object)  # the Sweep, once shown
    open_requested = QtCore.Signal(str)  # a measured run's log, clicked

    def __init__(
        self, parent: QtWidgets.QWidget | None = None, workers_per_gpu: int | None = None
    ) -> None:
        super().__init__(parent)
        self.setObjectName("sweep_window")
        self.setWindowTitle("Sweep")
        self.workers_per_gpu = workers_per_gpu
        self.sweep: Sweep | None = None
        self._paths: list[str] = []
        self._task = LatestTask(self, "sweep")
        self._task.ready.connect(self._on_ready)
        self._task.failed.connect(self._on_failed)

        self.status = QtWidgets.QLabel("")
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.knob = QtWidgets.QComboBox()
        self.knob.addItem("the knob the runs differ in", None)
        for key, (words, _unit) in KNOBS.items():
            self.knob.addItem(f"{words} ({key})", key)
        self.knob.activated.connect(lambda _i: self._start())
        self.save_button = QtWidgets.QPushButton("Save chart…")
        self.save_button.clicked.connect(self.save_chart)
        self.copy_button = QtWidgets.QPushButton("Copy table")
        self.copy_button.setToolTip("The table and the lines under it, as Markdown")
        self.copy_button.clicked.connect(self.copy_table)
        for b in (self.save_button, self.copy_button):
            b.setEnabled(False)
        top = QtWidgets.QHBoxLayout()
        top.addWidget(QtWidgets.QLabel("Knob:"))
        top.addWidget(self.knob)
        top.addStretch(1)
        top.addWidget(self.copy_button)
        top.addWidget(self.save_button)

        self.chart_holder = QtWidgets.QStackedWidget()
        self.placeholder = QtWidgets.QLabel("Reading the logs…")
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.chart_holder.addWidget(self.placeholder)
        self.chart: SweepChart | None = None
        self.table = QtWidgets.QTableWidget(0, len(HEAD))
        self.table.setHorizontalHeaderLabels([h or "note" for h in HEAD])
        self.table.verticalHeader().hide()
        rows_px = QtGui.QFontMetrics(self.table.font()).height() + 6
        self.table.verticalHeader().setDefaultSectionSize(rows_px)
        self.table.setEditTriggers(QtWidgets.QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QtWidgets.QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.cellDoubleClicked.connect(self._on_row_double_clicked)
        self.lines = QtWidgets.QLabel("")
        self.lines.setWordWrap(True)
        self.lines.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        split = QtWidgets.QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.chart_holder)
        below = QtWidgets.QWidget()
        lay = QtWidgets.QVBoxLayout(below)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.table, 1)
        lay.addWidget(self.lines)
        split.addWidget(below)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        layout = QtWidgets.QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.status)
        layout.addWidget(split, 1)
        self.resize(1000, 820)

    # ------------------------------------------------------------------ loading
    def load(self, paths: list[str | Path]) -> None:
        """Read ``paths`` and show their sweep (off the GUI thread)."""
        self._paths = [str(p) for p in paths]
        self._start()

    def _start(self) -> None:
        names = ", ".join(Path(p).name for p in self._paths)
        self.status.setText(f"Reading {counted(len(self._paths), 'log')}: {names}")
        self.placeholder.setText("Reading the logs…")
        self.chart_holder.setCurrentWidget(self.placeholder)
        self._task.request(
            None, compute, self._paths, self.workers_per_gpu, self.knob.currentData()
        )

    def wait(self, msecs: int = 30000) -> bool:
        """Block until the sweep's background work is done (tests and shutdown)."""
        return self._task.wait(msecs)

    def _on_failed(self, _context: object, message: str) -> None:
        self.status.setText(f"No sweep: {message}")
        self.placeholder.setText(f"No sweep: {message}")
        self.chart_holder.setCurrentWidget(self.placeholder)
        self.save_button.setEnabled(False)
        self.copy_button.setEnabled(False)

    def _on_ready(self, _context: object, s: Sweep) -> None:
        self.show_sweep(s)

    def show_sweep(self, s: Sweep) -> None:
        self.sweep = s
        if self.chart is not None:
            self.chart_holder.removeWidget(self.chart)
            self.chart.deleteLater()
        self.chart = SweepChart(s)
        self.chart.runClicked.connect(self.open_requested)
        self.chart_holder.addWidget(self.chart)
        self.chart_holder.setCurrentWidget(self.chart)
        words = KNOBS[s.knob][0]
        runs = counted(len({id(r.run) for r in s.rows if r.run}), "run")
        self.setWindowTitle(f"Sweep of {words}: {runs}")
        self.status.setText(
            f"Predicted from {display_path(s.base.name)}; click a measured point (or double-click "
            "its row) to open the run."
        )
        body = rows(s)
        self.table.setRowCount(len(body))
        for i, row in enumerate(body):
            for j, cell in enumerate(row):
                item = QtWidgets.QTableWidgetItem(cell)
                if j in (0, 2, 3, 4, 5, 6):
                    item.setTextAlignment(
                        Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
                    )
                self.table.setItem(i, j, item)
        self.table.resizeColumnsToContents()
        self.lines.setText("\n".join(summary(s)))
        self.save_button.setEnabled(True)
        self.copy_button.setEnabled(True)
        self.ready.emit(s)

    def _on_row_double_clicked(self, row: int, _col: int) -> None:
        if self.sweep is not None and 0 <= row < len(self.sweep.rows):
            run = self.sweep.rows[row].run
            if run is not None:
                self.open_requested.emit(run.name)

    # ------------------------------------------------------------------ output
    def copy_table(self) -> None:
        if self.sweep is not None:
            QtGui.QGuiApplication.clipboard().setText(sweep_markdown(self.sweep))

    def save_chart(self, path: str | None = None) -> None:
        """Save the chart as PNG or SVG (asks where when ``path`` is None)."""
        if self.sweep is None:
            return
        if not path:
            start = str(Path(self._paths[0]).parent / "sweep.png") if self._paths else "sweep.png"
            path, _ = QtWidgets.QFileDialog.getSaveFileName(
                self, "Save the sweep chart", start, "PNG image (*.png);;SVG image (*.svg)"
            )
            if not path:
                return
        if Path(path).suffix.lower() not in (".png", ".svg"):
            path = f"{path}.png"
        from viewer.export.files import OutputRefused, write_output

        try:
            size = self.chart.size() if self.chart is not None else QtCore.QSize(900, 520)
            data = chart_bytes(
                self.sweep,
                path,
                width=max(size.width(), 480),
                height=max(size.height(), 320),
                palette=self.palette(),
            )
            write_output(path, data, self._paths)
        except (OutputRefused, OSError) as exc:
            QtWidgets.QMessageBox.warning(self, "Sweep", f"Cannot save {display_path(path)}: {exc}")
            return
        self.status.setText(f"Saved {display_path(path)}")

    def closeEvent(self, event: QtGui.QCloseEvent) -> None:
        self._task.cancel()
        super().closeEvent(event)


def open_sweep(window, paths: list[str | Path]) -> SweepWindow:
    """A sweep window of ``paths``, whose clicked runs open in ``window``."""
    sw = SweepWindow(window, getattr(window, "workers_per_gpu", None))
    sw.setWindowFlag(Qt.WindowType.Window, True)
    sw.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose, True)
    sw.open_requested.connect(lambda path: window.open_paths([path]))
    sw.load(list(paths))
    sw.show()
    return sw


def _ask_and_sweep(window) -> None:
    start = window.dialog_folder()
    paths, _ = QtWidgets.QFileDialog.getOpenFileNames(
        window, "Choose runs of one machine to sweep", start, DIALOG_FILTER
    )
    if paths:
        open_sweep(window, paths)


def install(window) -> QtGui.QAction:
    """Add File > Sweep… (after Compare…) to the main window."""
    action = QtGui.QAction("S&weep…", window)
    action.setObjectName("action_sweep")
    action.setStatusTip(
        "Line up runs of one machine by the knob they differ in: measured, predicted, memory"
    )
    action.triggered.connect(lambda: _ask_and_sweep(window))
    menu = window.file_menu
    actions = menu.actions()
    compare = [i for i, a in enumerate(actions) if a.objectName() == "action_compare"]
    if compare and compare[0] + 1 < len(actions):
        menu.insertAction(actions[compare[0] + 1], action)
    else:
        menu.addAction(action)
    return action

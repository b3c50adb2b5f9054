"""File > Sweep… and Ctrl+drop: the sweep window's chart, table and lines, a click on a
measured point opening that run, the chart saved in either palette."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PySide6 import QtCore, QtGui, QtWidgets

from viewer.ui import MainWindow
from viewer.ui.palette import dark_palette
from viewer.ui.windows.sweep_chart import SweepChart, chart_bytes, measured_points
from viewer.ui.windows.sweep_window import SweepWindow

SECOND = Path(__file__).resolve().parents[1] / "whatif" / "data" / "h200_second"
LOGS = sorted(SECOND.glob("*.log.gz"))


@pytest.fixture
def window(qtbot, tmp_path):
    settings = QtCore.QSettings(str(tmp_path / "settings.ini"), QtCore.QSettings.Format.IniFormat)
    win = MainWindow(settings=settings)
    qtbot.addWidget(win)
    win.show()
    yield win
    for child in win.findChildren(SweepWindow):
        child.wait()
        child.close()
    win.cancel_loading()
    win.runner.wait()


def test_file_menu_has_sweep_after_compare(window) -> None:
    actions = window.file_menu.actions()
    names = [a.objectName() for a in actions]
    assert "action_sweep" in names
    assert names.index("action_sweep") == names.index("action_compare") + 1


def test_the_menu_asks_for_logs_and_shows_the_sweep(qtbot, window, monkeypatch) -> None:
    monkeypatch.setattr(
        QtWidgets.QFileDialog, "getOpenFileNames", lambda *a, **k: ([str(p) for p in LOGS], "")
    )
    window.findChild(QtGui.QAction, "action_sweep").trigger()
    (sw,) = window.findChildren(SweepWindow)
    qtbot.waitUntil(lambda: sw.sweep is not None, timeout=60000)
    assert sw.windowTitle() == "Sweep of partition workers: 4 runs"
    assert sw.table.rowCount() == 7
    assert sw.table.item(0, 0).text() == "6"
    assert "best region (measured, within 5 % of the best): pw 8-12" in sw.lines.text()
    assert "gw3.log.gz: differs in gw 3" in sw.lines.text()
    assert isinstance(sw.chart, SweepChart)


def test_ctrl_drop_sweeps_and_a_click_on_a_point_opens_its_run(qtbot, window) -> None:
    mime = QtCore.QMimeData()
    mime.setUrls([QtCore.QUrl.fromLocalFile(str(p)) for p in LOGS])
    pos = QtCore.QPointF(window.width() / 2, window.height() / 2)
    copy, none = QtCore.Qt.DropAction.CopyAction, QtCore.Qt.MouseButton.NoButton
    ctrl = QtCore.Qt.KeyboardModifier.ControlModifier
    QtWidgets.QApplication.sendEvent(
        window, QtGui.QDragEnterEvent(pos.toPoint(), copy, mime, none, ctrl)
    )
    QtWidgets.QApplication.sendEvent(window, QtGui.QDropEvent(pos, copy, mime, none, ctrl))
    (sw,) = window.findChildren(SweepWindow)
    qtbot.waitUntil(lambda: sw.sweep is not None, timeout=60000)
    assert window.timeline() is None  # nothing opened in the main window
    sw.resize(1000, 820)
    qtbot.waitUntil(lambda: sw.chart.isVisible())
    points = measured_points(sw.sweep, QtCore.QSizeF(sw.chart.size()))
    at, row = next((pt, r) for pt, r in points if r.run.name.endswith("pw12.log.gz"))
    with qtbot.waitSignal(window.timeline_loaded, timeout=30000):
        qtbot.mouseClick(sw.chart, QtCore.Qt.MouseButton.LeftButton, pos=at.toPoint())
    assert window.timeline().source.name == "pw12.log.gz"
    # A click away from any point opens nothing.
    assert sw.chart.row_at(QtCore.QPointF(2, 2)) is None


def test_one_log_says_why_there_is_no_sweep(qtbot, window) -> None:
    window.open_paths([LOGS[0]], "sweep")
    (sw,) = window.findChildren(SweepWindow)
    qtbot.waitUntil(lambda: sw.status.text().startswith("No sweep"), timeout=30000)
    assert "one log only" in sw.status.text()
    assert not sw.save_button.isEnabled()


def test_the_chart_is_saved_and_reads_in_either_palette(
    qtbot, window, tmp_path, monkeypatch
) -> None:
    window.open_paths(LOGS, "sweep")
    (sw,) = window.findChildren(SweepWindow)
    qtbot.waitUntil(lambda: sw.sweep is not None, timeout=60000)
    target = tmp_path / "chart.svg"
    sw.save_chart(str(target))
    svg = target.read_text()
    assert "best: pw 12" in svg and "memory held, GiB" in svg
    light = chart_bytes(sw.sweep, "a.png", width=600, height=360)
    dark = chart_bytes(sw.sweep, "a.png", width=600, height=360, palette=dark_palette())
    for data, want_dark in ((light, False), (dark, True)):
        img = QtGui.QImage.fromData(data)
        assert (img.width(), img.height()) == (1200, 720)
        corner = QtGui.QColor(img.pixel(4, 4))
        assert (corner.lightnessF() < 0.5) == want_dark
        # Something is drawn: many distinct colours, not a blank page.
        arr = np.frombuffer(img.constBits(), np.uint32, img.width() * img.height())
        assert len(np.unique(arr)) > 50
    # A chart path that links to one of the logs is refused, the log untouched.
    before = LOGS[0].read_bytes()
    link = tmp_path / "linked.png"
    link.symlink_to(LOGS[0])
    shown = []
    monkeypatch.setattr(QtWidgets.QMessageBox, "warning", lambda *a, **k: shown.append(a[2]))
    sw.save_chart(str(link))
    assert LOGS[0].read_bytes() == before
    assert len(shown) == 1 and "Cannot save" in shown[0]

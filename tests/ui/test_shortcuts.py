"""F1 lists every key the window answers to, and shows them all without scrolling."""

from __future__ import annotations

from PySide6 import QtCore, QtGui, QtWidgets

from viewer.ui import MainWindow
from viewer.ui.dialogs import SHORTCUTS, show_shortcuts


def _listed() -> set[str]:
    keys = set()
    for text, _ in SHORTCUTS:
        for part in text.replace(" or ", " / ").split(" / "):
            keys.add(part.strip())
    return keys


def test_every_shortcut_of_the_window_is_in_the_list(qtbot, tmp_path) -> None:
    settings = QtCore.QSettings(str(tmp_path / "s.ini"), QtCore.QSettings.Format.IniFormat)
    win = MainWindow(settings=settings)
    qtbot.addWidget(win)
    bound = {
        k.toString()
        for action in win.findChildren(QtGui.QAction)
        for k in action.shortcuts()
        if not k.isEmpty() and k.toString() != "Ctrl+C"  # Copy: listed as "Ctrl+C in a table"
    }
    assert {"Ctrl+K", "/", "F3", "Shift+F3", "Ctrl+I", "Esc"} <= bound
    assert bound - _listed() == set()


def test_the_dialog_shows_every_row_at_1366x768(qtbot, tmp_path) -> None:
    parent = QtWidgets.QWidget()
    qtbot.addWidget(parent)
    parent.resize(1366, 768)
    dialog = show_shortcuts(parent)
    qtbot.addWidget(dialog)
    table = dialog.findChild(QtWidgets.QTableWidget)
    qtbot.waitExposed(dialog)
    assert table.rowCount() == len(SHORTCUTS)
    assert not table.verticalScrollBar().isVisible()
    # every action is read whole: the columns fit the table's width
    header = table.horizontalHeader()
    assert header.length() <= table.viewport().width()
    widest = max(table.fontMetrics().horizontalAdvance(what) for _, what in SHORTCUTS)
    assert widest <= table.columnWidth(1)
    assert dialog.height() <= parent.screen().availableGeometry().height()

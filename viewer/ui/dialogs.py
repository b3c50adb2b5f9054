"""About, keyboard-shortcut, note-text and save-path dialogs."""

from __future__ import annotations

from pathlib import Path

from PySide6 import QtCore, QtGui, QtWidgets

import viewer

SHORTCUTS: tuple[tuple[str, str], ...] = (
    ("Ctrl+O", "Open logs (or drop files / a folder on the window)"),
    ("Mouse wheel", "Zoom time around the cursor"),
    ("Drag", "Pan"),
    ("Shift+drag", "Zoom to the dragged span"),
    ("Ctrl+drag", "Select a time range (the panels follow it)"),
    ("W / S", "Zoom in / out"),
    ("A / D", "Pan left / right"),
    ("F or Home", "Fit the whole session"),
    ("] or N", "Next sector transition (from the view's left edge)"),
    ("[ or P", "Previous sector transition"),
    ("1 … 9", "Show session 1 … 9"),
    ("V", "Select the visible span"),
    ("Ctrl+K or /", "Find partitions: a job id prefix, p:3, w:1, gpu:0, an event, open"),
    ("F3 / Shift+F3", "Next / previous match (Enter / Shift+Enter in the search bar)"),
    ("Esc", "Leave an annotation tool, else close the search bar, else clear the range"),
    ("Click a bar", "Its partition's whole life in the Details tab, flow arrows on the lanes"),
    ("Double-click a bar", "Frame that partition"),
    ("Ctrl+C in a table", "Copy the selected rows as tab-separated text"),
    ("Right-click the lanes", "Add a note, highlight or measure the range, edit annotations"),
    ("Ctrl+Z / Ctrl+Shift+Z", "Undo / redo annotation edits"),
    ("Del", "Delete the selected annotation"),
    ("Ctrl+I", "What if: the floors and a replay with other workers, GPUs or kernel times"),
    ("Ctrl+F", "Follow the log as the daemon writes it (View > Follow)"),
    ("Shift+drop a file", "Compare it with the open log (File > Compare…)"),
    ("Ctrl+drop logs", "Sweep: line runs of one machine up by a knob (File > Sweep…)"),
    ("F1", "This list"),
)


def show_shortcuts(parent: QtWidgets.QWidget) -> QtWidgets.QDialog:
    dialog = QtWidgets.QDialog(parent)
    dialog.setWindowTitle("Keyboard shortcuts")
    table = QtWidgets.QTableWidget(len(SHORTCUTS), 2, dialog)
    table.setHorizontalHeaderLabels(["Keys", "Action"])
    table.verticalHeader().setVisible(False)
    table.setEditTriggers(QtWidgets.QAbstractItemView.EditTrigger.NoEditTriggers)
    for row, (keys, what) in enumerate(SHORTCUTS):
        table.setItem(row, 0, QtWidgets.QTableWidgetItem(keys))
        table.setItem(row, 1, QtWidgets.QTableWidgetItem(what))
    table.setWordWrap(True)
    table.resizeColumnsToContents()
    table.horizontalHeader().setStretchLastSection(True)
    table.setHorizontalScrollBarPolicy(QtCore.Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    table.setSelectionMode(QtWidgets.QAbstractItemView.SelectionMode.NoSelection)
    table.setFocusPolicy(QtCore.Qt.FocusPolicy.NoFocus)
    buttons = QtWidgets.QDialogButtonBox(QtWidgets.QDialogButtonBox.StandardButton.Close)
    buttons.rejected.connect(dialog.reject)
    layout = QtWidgets.QVBoxLayout(dialog)
    layout.addWidget(table)
    layout.addWidget(buttons)
    # Tall enough for every row (the list used to scroll), within the screen.
    table.resizeRowsToContents()
    rows = sum(table.rowHeight(r) for r in range(table.rowCount()))
    wanted = rows + table.horizontalHeader().height() + 2 * table.frameWidth() + 4
    screen = (parent.screen() if parent is not None else dialog.screen()).availableGeometry()
    extra = buttons.sizeHint().height() + 40
    dialog.resize(min(760, screen.width()), min(wanted + extra, screen.height() - 40))
    dialog.setAttribute(QtCore.Qt.WidgetAttribute.WA_DeleteOnClose)
    dialog.show()
    return dialog


ABOUT = (
    "cuzk Timeline Viewer {version}\n\n"
    "Reads the TIMELINE and CUZK_TIMING lines of a cuzk proving daemon log and shows "
    "where each GPU worker was busy, where the GPU sat idle, whether the gaps between "
    "sectors are cold-start artifacts or starvation, and whether the run is GPU-bound "
    "(measured s/proof equal to the serial CUDA kernel time).\n\n"
    "The same figures, headless: python -m viewer report LOG"
)


def show_about(parent: QtWidgets.QWidget) -> None:
    box = QtWidgets.QMessageBox(parent)
    box.setWindowTitle("About cuzk Timeline Viewer")
    box.setTextFormat(QtCore.Qt.TextFormat.PlainText)
    box.setText(ABOUT.format(version=viewer.__version__))
    box.setIconPixmap(parent.windowIcon().pixmap(64, 64))
    box.exec()


#: Where the last export went (the export dialogs open there next time).
EXPORT_DIR_SETTING = "export_dir"


def ask_save_path(
    parent: QtWidgets.QWidget,
    settings: QtCore.QSettings | None,
    title: str,
    default: str | Path,
    filters: str,
) -> tuple[str, str]:
    """A save dialog (path, chosen filter; "" when cancelled) that opens in the folder the
    last export went to, with ``default``'s file name, else at ``default`` (next to the log);
    the folder chosen is remembered for the next export."""
    start = str(default)
    folder = settings.value(EXPORT_DIR_SETTING) if settings is not None else None
    if folder and Path(str(folder)).is_dir():
        start = str(Path(str(folder)) / Path(default).name)
    path, chosen = QtWidgets.QFileDialog.getSaveFileName(parent, title, start, filters)
    if path and settings is not None:
        settings.setValue(EXPORT_DIR_SETTING, str(Path(path).parent))
    return path, chosen


class NoteTextEdit(QtWidgets.QPlainTextEdit):
    """A note's text: Enter submits (``submitted``), Shift+Enter starts a new line."""

    submitted = QtCore.Signal()

    def keyPressEvent(self, event: QtGui.QKeyEvent) -> None:
        if event.key() in (QtCore.Qt.Key.Key_Return, QtCore.Qt.Key.Key_Enter):
            if event.modifiers() & QtCore.Qt.KeyboardModifier.ShiftModifier:
                self.insertPlainText("\n")
            else:
                self.submitted.emit()
            return
        super().keyPressEvent(event)


def ask_note_text(parent: QtWidgets.QWidget, title: str, initial: str) -> str | None:
    """The text typed for an annotation (stripped), None when cancelled.  Enter is OK, as
    in a chat box, Shift+Enter a new line: most notes are one line."""
    dialog = QtWidgets.QDialog(parent)
    dialog.setWindowTitle(title)
    edit = NoteTextEdit(dialog)
    edit.setPlainText(initial)
    edit.moveCursor(QtGui.QTextCursor.MoveOperation.End)
    edit.submitted.connect(dialog.accept)
    hint = QtWidgets.QLabel("Enter: OK · Shift+Enter: new line", dialog)
    hint.setEnabled(False)  # drawn in the palette's dimmed text colour
    Box = QtWidgets.QDialogButtonBox
    buttons = Box(Box.StandardButton.Ok | Box.StandardButton.Cancel, dialog)
    buttons.accepted.connect(dialog.accept)
    buttons.rejected.connect(dialog.reject)
    layout = QtWidgets.QVBoxLayout(dialog)
    layout.addWidget(QtWidgets.QLabel("Text:", dialog))
    layout.addWidget(edit)
    layout.addWidget(hint)
    layout.addWidget(buttons)
    edit.setFocus()
    accepted = dialog.exec() == QtWidgets.QDialog.DialogCode.Accepted
    text = edit.toPlainText().strip()
    dialog.deleteLater()
    return text if accepted else None

"""What the window shows before a log is open: where to drop one, and the recent files."""

from __future__ import annotations

from pathlib import Path

from PySide6 import QtCore, QtGui, QtWidgets

from viewer.io.paths import suffix_list
from viewer.ui.palette import mix

Qt = QtCore.Qt
TITLE = "Drop a cuzk log here, or File > Open"
RECENT_SHOWN = 8


class EmptyState(QtWidgets.QWidget):
    """A drop target with an Open button and the recent files as buttons.

    ``open_requested`` asks for the file dialog; ``recent_chosen(path)`` opens a recent file.
    """

    open_requested = QtCore.Signal()
    recent_chosen = QtCore.Signal(str)

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("emptyState")
        self.title = QtWidgets.QLabel(TITLE)
        self.title.setTextFormat(Qt.TextFormat.PlainText)
        self.title.setAlignment(Qt.AlignmentFlag.AlignCenter)
        font = self.title.font()
        font.setPointSizeF(font.pointSizeF() * 1.6)
        font.setBold(True)
        self.title.setFont(font)
        hint = QtWidgets.QLabel(
            f"A daemon log, or just its TIMELINE lines: {suffix_list()}. "
            "Dropping a folder opens every log in it."
        )
        hint.setTextFormat(Qt.TextFormat.PlainText)
        hint.setAlignment(Qt.AlignmentFlag.AlignCenter)
        hint.setWordWrap(True)
        self.open_button = QtWidgets.QPushButton("Open a log…  (Ctrl+O)")
        self.open_button.clicked.connect(self.open_requested)
        self.recent_title = QtWidgets.QLabel("Recent files")
        self.recent_title.setTextFormat(Qt.TextFormat.PlainText)
        bold = self.recent_title.font()
        bold.setBold(True)
        self.recent_title.setFont(bold)
        self._recent = QtWidgets.QVBoxLayout()
        self._recent.setSpacing(0)
        self.recent_buttons: list[QtWidgets.QPushButton] = []

        column = QtWidgets.QVBoxLayout()
        column.setSpacing(10)
        column.addWidget(self.title)
        column.addWidget(hint)
        row = QtWidgets.QHBoxLayout()
        row.addStretch(1)
        row.addWidget(self.open_button)
        row.addStretch(1)
        column.addLayout(row)
        column.addSpacing(18)
        column.addWidget(self.recent_title)
        column.addLayout(self._recent)
        box = QtWidgets.QWidget()
        box.setLayout(column)
        box.setMaximumWidth(720)
        outer = QtWidgets.QVBoxLayout(self)
        outer.setContentsMargins(40, 40, 40, 40)
        outer.addStretch(2)
        outer.addWidget(box, 0, Qt.AlignmentFlag.AlignHCenter)
        outer.addStretch(3)
        self.set_recent([])

    def set_recent(self, paths: list[str]) -> None:
        """Show ``paths`` (newest first) as buttons; files gone since are shown disabled."""
        for button in self.recent_buttons:
            self._recent.removeWidget(button)
            button.deleteLater()
        self.recent_buttons = []
        for path in paths[:RECENT_SHOWN]:
            p = Path(path)
            gone = not p.exists()
            button = QtWidgets.QPushButton(
                f"{p.name}  —  {p.parent}" + ("  (missing)" if gone else "")
            )
            button.setFlat(True)
            button.setCursor(Qt.CursorShape.PointingHandCursor)
            button.setToolTip(path)
            button.setEnabled(not gone)
            button.setStyleSheet("QPushButton { text-align: left; padding: 2px 8px; }")
            button.setMinimumHeight(button.fontMetrics().height() + 10)
            button.clicked.connect(lambda _=False, chosen=path: self.recent_chosen.emit(chosen))
            self._recent.addWidget(button)
            self.recent_buttons.append(button)
        self.recent_title.setText("Recent files" if paths else "No recent files yet")

    def paintEvent(self, event: QtGui.QPaintEvent) -> None:
        """A dashed drop frame around the whole area."""
        painter = QtGui.QPainter(self)
        palette = self.palette()
        base = palette.color(QtGui.QPalette.ColorRole.Base)
        text = palette.color(QtGui.QPalette.ColorRole.Text)
        painter.setRenderHint(QtGui.QPainter.RenderHint.Antialiasing)
        painter.setBrush(base)
        pen = QtGui.QPen(mix(base, text, 0.35), 2.0, Qt.PenStyle.DashLine)
        painter.setPen(pen)
        painter.drawRoundedRect(QtCore.QRectF(self.rect()).adjusted(12, 12, -12, -12), 14, 14)
        painter.end()

"""Shared bits of the side panels: number formatting and selectable value labels."""

from __future__ import annotations

from PySide6 import QtCore, QtGui, QtWidgets

from viewer.analysis.units import Clock, fixed, percent


def fmt_s(seconds: float | None, digits: int = 1) -> str:
    return fixed(seconds, digits, "s")


def fmt_pct(fraction: float | None, digits: int = 1) -> str:
    return percent(fraction, digits)


def value_label(text: str = "—", *, bold: bool = False) -> QtWidgets.QLabel:
    """A right-aligned label whose text the user can select and copy."""
    label = QtWidgets.QLabel(text)
    label.setTextFormat(QtCore.Qt.TextFormat.PlainText)
    label.setTextInteractionFlags(QtCore.Qt.TextInteractionFlag.TextSelectableByMouse)
    label.setAlignment(QtCore.Qt.AlignmentFlag.AlignRight | QtCore.Qt.AlignmentFlag.AlignVCenter)
    if bold:
        font = label.font()
        font.setBold(True)
        label.setFont(font)
    return label


def caption_label(text: str) -> QtWidgets.QLabel:
    label = QtWidgets.QLabel(text)
    label.setTextFormat(QtCore.Qt.TextFormat.PlainText)
    return label


def text_label(text: str = "", *, bold: bool = False) -> QtWidgets.QLabel:
    """Plain text (never markup: job ids come from the log), wrapped and selectable."""
    label = QtWidgets.QLabel(text)
    label.setTextFormat(QtCore.Qt.TextFormat.PlainText)
    label.setWordWrap(True)
    label.setTextInteractionFlags(QtCore.Qt.TextInteractionFlag.TextSelectableByMouse)
    if bold:
        font = label.font()
        font.setBold(True)
        label.setFont(font)
    return label


def note_label(text: str = "") -> QtWidgets.QLabel:
    """A wrapped, selectable, de-emphasized line: what a figure covers or how it is made."""
    label = text_label(text)
    label.setForegroundRole(QtGui.QPalette.ColorRole.PlaceholderText)
    label.setContentsMargins(8, 0, 8, 0)
    return label


def scope_text(summary, clock: Clock | None = None) -> str:
    """What a summary covers, on ``clock`` (the one the axis shows; None: the session's
    own): "Whole session 1: 0:00.040 → 3:46.000 (3 min 46 s)" or "Range 01:01:04.000 →
    01:01:24.000 UTC (20.0 s) of session 1"."""
    s = summary.session
    clock = clock if clock is not None else Clock.of(s.start_ms, s.end_ms)
    a, b = (s.start_ms, s.end_ms) if summary.rng is None else summary.rng
    if summary.rng is None:
        return f"Whole session {s.number}: {clock.span(a, b)}"
    return f"Range {clock.span(a, b)} of session {s.number}"


def section_label(text: str) -> QtWidgets.QLabel:
    label = QtWidgets.QLabel(text)
    label.setTextFormat(QtCore.Qt.TextFormat.PlainText)
    font = label.font()
    font.setBold(True)
    label.setFont(font)
    label.setContentsMargins(0, 6, 0, 0)
    return label


class FormGrid(QtWidgets.QWidget):
    """A two-column grid of caption / selectable value rows, addressed by key."""

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self._grid = QtWidgets.QGridLayout(self)
        self._grid.setContentsMargins(8, 6, 8, 6)
        self._grid.setHorizontalSpacing(12)
        self._grid.setVerticalSpacing(3)
        self._grid.setColumnStretch(0, 1)
        self.values: dict[str, QtWidgets.QLabel] = {}
        self.captions: dict[str, QtWidgets.QLabel] = {}

    def add_section(self, title: str) -> QtWidgets.QLabel:
        label = section_label(title)
        self._grid.addWidget(label, self._grid.rowCount(), 0, 1, 2)
        return label

    def add_row(self, key: str, caption: str, *, bold: bool = False) -> QtWidgets.QLabel:
        row = self._grid.rowCount()
        cap = caption_label(caption)
        cap.setWordWrap(True)  # a narrow dock wraps the caption rather than cut the value
        self._grid.addWidget(cap, row, 0)
        label = value_label(bold=bold)
        self._grid.addWidget(label, row, 1)
        self.values[key] = label
        self.captions[key] = cap
        return label

    def add_widget(self, widget: QtWidgets.QWidget) -> None:
        self._grid.addWidget(widget, self._grid.rowCount(), 0, 1, 2)

    def set(self, key: str, text: str, caption: str | None = None) -> None:
        self.values[key].setText(text)
        if caption is not None:
            self.captions[key].setText(caption)

    def text(self, key: str) -> str:
        return self.values[key].text()


class ScopedPanel(QtWidgets.QScrollArea):
    """A side panel with a scope line (``self.scope``) saying what its figures cover, for
    the summary it shows (``self._summary``), on the session's clock or the wall clock."""

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWidgetResizable(True)
        self.setFrameShape(QtWidgets.QFrame.Shape.NoFrame)
        self.setHorizontalScrollBarPolicy(QtCore.Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self._summary = None
        self._clock: Clock | None = None  # None: the session's own
        self.scope = note_label()

    def set_clock(self, clock: Clock) -> None:
        """Say the scope on ``clock``, the one the axis shows."""
        self._clock = clock
        if self._summary is not None:
            self.scope.setText(scope_text(self._summary, clock))

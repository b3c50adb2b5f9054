"""Shared bits of the side panels: number formatting and selectable value labels."""

from __future__ import annotations

import math

from PySide6 import QtCore, QtWidgets


def fmt_ms(ms: float | None) -> str:
    """'3 746 ms' below 10 s, '37.5 s' above; an em dash when unknown."""
    if ms is None or (isinstance(ms, float) and math.isnan(ms)):
        return "—"
    if abs(ms) >= 10_000:
        return f"{ms / 1000:,.1f} s".replace(",", " ")
    return f"{ms:,.0f} ms".replace(",", " ")


def fmt_s(seconds: float | None, digits: int = 1) -> str:
    if seconds is None or (isinstance(seconds, float) and math.isnan(seconds)):
        return "—"
    return f"{seconds:.{digits}f} s"


def fmt_pct(fraction: float | None, digits: int = 1) -> str:
    if fraction is None or (isinstance(fraction, float) and math.isnan(fraction)):
        return "—"
    return f"{100 * fraction:.{digits}f} %"


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

    def add_section(self, title: str) -> None:
        self._grid.addWidget(section_label(title), self._grid.rowCount(), 0, 1, 2)

    def add_row(self, key: str, caption: str, *, bold: bool = False) -> QtWidgets.QLabel:
        row = self._grid.rowCount()
        self._grid.addWidget(caption_label(caption), row, 0)
        label = value_label(bold=bold)
        self._grid.addWidget(label, row, 1)
        self.values[key] = label
        return label

    def add_widget(self, widget: QtWidgets.QWidget) -> None:
        self._grid.addWidget(widget, self._grid.rowCount(), 0, 1, 2)

    def set(self, key: str, text: str) -> None:
        self.values[key].setText(text)

    def text(self, key: str) -> str:
        return self.values[key].text()

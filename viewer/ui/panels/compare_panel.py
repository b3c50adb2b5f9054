"""The diff panel of the compare window: figure | A | B | delta | relative, coloured better/worse.

Two sections (the aligned visible or selected range, then the whole runs),
a headline above and both verdict sentences below.  Cells come from
``viewer.export.compare`` so the panel, the Markdown and the CSV agree.
"""

from __future__ import annotations

from PySide6 import QtCore, QtGui, QtWidgets

from viewer.analysis.compare import Comparison, FigureDiff, headline
from viewer.export.compare import CompareResult, delta_text, range_title, relative_text, value_text
from viewer.ui.palette import mix
from viewer.ui.panels.common import text_label

Qt = QtCore.Qt
COLUMNS = ("figure", "A", "B", "delta", "relative")


def judgement_colors(palette: QtGui.QPalette) -> dict[str, QtGui.QColor]:
    """Green / red that read on the palette's base colour (light or dark)."""
    dark = palette.color(QtGui.QPalette.ColorRole.Base).lightnessF() < 0.5
    return {
        "better": QtGui.QColor("#5fd37a" if dark else "#1e7d32"),
        "worse": QtGui.QColor("#ff7a6e" if dark else "#c62828"),
    }


class CompareDiffPanel(QtWidgets.QWidget):
    """Shows a ``CompareResult``: ``set_result(res)``; ``judgement(section, key)`` for tests."""

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self._result: CompareResult | None = None
        self.headline = text_label(bold=True)
        font = self.headline.font()
        font.setPointSizeF(font.pointSizeF() * 1.15)
        self.headline.setFont(font)
        self.alignment = text_label()
        self.table = QtWidgets.QTableWidget(0, len(COLUMNS), self)
        self.table.setHorizontalHeaderLabels(list(COLUMNS))
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QtWidgets.QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QtWidgets.QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setWordWrap(False)
        self.table.verticalHeader().setDefaultSectionSize(self.table.fontMetrics().height() + 6)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QtWidgets.QHeaderView.ResizeMode.Stretch)
        for col in range(1, len(COLUMNS)):
            header.setSectionResizeMode(col, QtWidgets.QHeaderView.ResizeMode.ResizeToContents)
        self.verdict_a = text_label()
        self.verdict_b = text_label()
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(6, 4, 6, 4)
        layout.setSpacing(4)
        layout.addWidget(self.headline)
        layout.addWidget(self.alignment)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.verdict_a)
        layout.addWidget(self.verdict_b)
        self._sections: dict[str, dict[str, int]] = {}

    def result(self) -> CompareResult | None:
        return self._result

    def set_result(self, res: CompareResult, range_kind: str = "Range") -> None:
        """Show ``res``; ``range_kind`` names its range section ("Selected range", ...)."""
        self._result = res
        self.headline.setText(headline(res.whole, res.label_a, res.label_b))
        w = res.whole
        self.alignment.setText(
            f"Time aligned on each run's {w.alignment.describe()} "
            f"(A at {w.offset_a / 1000:.1f} s, B at {w.offset_b / 1000:.1f} s of its log)."
        )
        self.table.setHorizontalHeaderLabels(
            ["figure", f"A: {res.label_a}", f"B: {res.label_b}", "delta", "relative"]
        )
        sections = [("whole", w)]
        if res.ranged is not None:
            sections.append(("range", res.ranged))
        self.table.clearSpans()
        self.table.setRowCount(sum(len(c.rows) + 1 for _, c in sections))
        self._sections = {}
        row = 0
        for key, c in sections:
            self._section_row(
                row, "Whole runs" if key == "whole" else self._range_text(c, range_kind)
            )
            row += 1
            self._sections[key] = {}
            for r in c.rows:
                self._sections[key][r.figure.key] = row
                self._figure_row(row, r)
                row += 1
        self.verdict_a.setText(f"A ({res.label_a}): {w.a.verdict.sentence}")
        self.verdict_b.setText(f"B ({res.label_b}): {w.b.verdict.sentence}")

    @staticmethod
    def _range_text(c: Comparison, kind: str) -> str:
        if c.rng is None:
            return range_title(c)
        a, b = c.rng
        return f"{kind}: {a / 1000:.1f} s → {b / 1000:.1f} s (aligned)"

    def _section_row(self, row: int, text: str) -> None:
        item = QtWidgets.QTableWidgetItem(text)
        font = item.font()
        font.setBold(True)
        item.setFont(font)
        # From Base and Text, which every palette sets (a dark one may keep a light
        # AlternateBase: the section titles were light on light).
        pal = self.palette()
        text = pal.color(QtGui.QPalette.ColorRole.Text)
        item.setBackground(mix(pal.color(QtGui.QPalette.ColorRole.Base), text, 0.12))
        item.setForeground(text)
        self.table.setItem(row, 0, item)
        self.table.setSpan(row, 0, 1, len(COLUMNS))

    def _figure_row(self, row: int, r: FigureDiff) -> None:
        colors = judgement_colors(self.palette())
        cells = (
            r.figure.label,
            value_text(r, r.a),
            value_text(r, r.b),
            delta_text(r),
            relative_text(r),
        )
        judgement = r.judgement
        better = "lower" if r.figure.lower_is_better else "higher"
        for col, text in enumerate(cells):
            item = QtWidgets.QTableWidgetItem(text)
            if col:
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            else:
                item.setToolTip(f"{better} is better")
            if col >= 3 and judgement in colors:
                item.setForeground(colors[judgement])
                font = item.font()
                font.setBold(True)
                item.setFont(font)
            item.setData(Qt.ItemDataRole.UserRole, judgement)
            self.table.setItem(row, col, item)

    def cell(self, section: str, key: str, column: int) -> QtWidgets.QTableWidgetItem:
        """The item of figure ``key`` in ``section`` (``range`` or ``whole``)."""
        return self.table.item(self._sections[section][key], column)

    def judgement(self, section: str, key: str) -> str:
        return self.cell(section, key, 4).data(Qt.ItemDataRole.UserRole)

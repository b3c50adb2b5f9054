"""A read-only Qt table model over a pandas DataFrame, and a table view that copies TSV."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd
from PySide6 import QtCore, QtGui, QtWidgets

Formatter = Callable[[object], str]


def format_cell(value: object) -> str:
    """Plain text for a cell: integers without decimals, NaN/None as an em dash."""
    if value is None:
        return "—"
    if isinstance(value, bool | np.bool_):
        return "yes" if value else "no"
    if isinstance(value, float | np.floating):
        if math.isnan(value):
            return "—"
        if float(value).is_integer():
            return f"{int(value):,}".replace(",", " ")
        return f"{value:,.1f}".replace(",", " ")
    if isinstance(value, int | np.integer):
        return f"{int(value):,}".replace(",", " ")
    return str(value)


class DataFrameModel(QtCore.QAbstractTableModel):
    """Rows of a DataFrame with display headers; sorts on the raw values."""

    def __init__(self, parent: QtCore.QObject | None = None) -> None:
        super().__init__(parent)
        self._frame = pd.DataFrame()
        self._headers: list[str] = []
        self._columns: list[str] = []
        self._formatters: dict[str, Formatter] = {}

    def set_frame(
        self,
        frame: pd.DataFrame,
        columns: Sequence[tuple[str, str]],
        formatters: dict[str, Formatter] | None = None,
    ) -> None:
        """Show ``frame``'s ``columns`` (name, header) with optional per-column formatters."""
        self.beginResetModel()
        self._frame = frame.reset_index(drop=True)
        self._columns = [c for c, _ in columns]
        self._headers = [h for _, h in columns]
        self._formatters = formatters or {}
        self.endResetModel()

    def frame(self) -> pd.DataFrame:
        return self._frame

    def rowCount(self, parent: QtCore.QModelIndex = QtCore.QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._frame)

    def columnCount(self, parent: QtCore.QModelIndex = QtCore.QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._columns)

    def data(self, index: QtCore.QModelIndex, role: int = QtCore.Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        name = self._columns[index.column()]
        value = self._frame[name].iat[index.row()]
        if role == QtCore.Qt.ItemDataRole.DisplayRole:
            fmt = self._formatters.get(name, format_cell)
            return fmt(value)
        if role == QtCore.Qt.ItemDataRole.UserRole:  # raw value, for sorting
            if isinstance(value, np.generic):
                value = value.item()
            if isinstance(value, float) and math.isnan(value):
                return -math.inf
            return value
        numeric = isinstance(value, int | float | np.number) and not isinstance(value, bool)
        if role == QtCore.Qt.ItemDataRole.TextAlignmentRole and numeric:
            return int(QtCore.Qt.AlignmentFlag.AlignRight | QtCore.Qt.AlignmentFlag.AlignVCenter)
        return None

    def headerData(
        self,
        section: int,
        orientation: QtCore.Qt.Orientation,
        role: int = QtCore.Qt.ItemDataRole.DisplayRole,
    ):
        if role != QtCore.Qt.ItemDataRole.DisplayRole:
            return None
        if orientation == QtCore.Qt.Orientation.Horizontal:
            return self._headers[section] if section < len(self._headers) else None
        return str(section + 1)


class CopyableTableView(QtWidgets.QTableView):
    """A sortable table whose selection copies as tab-separated text (Ctrl+C)."""

    row_activated = QtCore.Signal(int)  # row in the source model

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.source = DataFrameModel(self)
        self.proxy = QtCore.QSortFilterProxyModel(self)
        self.proxy.setSourceModel(self.source)
        self.proxy.setSortRole(QtCore.Qt.ItemDataRole.UserRole)
        self.setModel(self.proxy)
        self.setSortingEnabled(True)
        self.sortByColumn(-1, QtCore.Qt.SortOrder.AscendingOrder)
        self.setSelectionBehavior(QtWidgets.QAbstractItemView.SelectionBehavior.SelectRows)
        self.setAlternatingRowColors(True)
        self.setWordWrap(False)
        self.verticalHeader().setVisible(False)
        self.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)
        self.horizontalHeader().setStretchLastSection(False)
        self.clicked.connect(self._on_clicked)
        copy = QtGui.QAction("Copy", self)
        copy.setShortcut(QtGui.QKeySequence.StandardKey.Copy)
        copy.setShortcutContext(QtCore.Qt.ShortcutContext.WidgetWithChildrenShortcut)
        copy.triggered.connect(self.copy_selection)
        self.addAction(copy)

    def set_frame(self, frame, columns, formatters=None) -> None:
        self.source.set_frame(frame, columns, formatters)
        self.resizeColumnsToContents()

    def source_row(self, proxy_row: int) -> int:
        return self.proxy.mapToSource(self.proxy.index(proxy_row, 0)).row()

    def _on_clicked(self, index: QtCore.QModelIndex) -> None:
        self.row_activated.emit(self.proxy.mapToSource(index).row())

    def selection_tsv(self) -> str:
        """Selected cells (or the whole table) as TSV with a header line."""
        indexes = self.selectionModel().selectedIndexes() if self.selectionModel() else []
        rows = sorted({i.row() for i in indexes}) or list(range(self.proxy.rowCount()))
        cols = sorted({i.column() for i in indexes}) or list(range(self.proxy.columnCount()))
        header = [self.proxy.headerData(c, QtCore.Qt.Orientation.Horizontal) for c in cols]
        lines = ["\t".join(str(h) for h in header)]
        for r in rows:
            lines.append("\t".join(str(self.proxy.index(r, c).data()) for c in cols))
        return "\n".join(lines) + "\n"

    def copy_selection(self) -> None:
        QtWidgets.QApplication.clipboard().setText(self.selection_tsv())

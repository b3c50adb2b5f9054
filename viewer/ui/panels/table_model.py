"""A read-only Qt table model over a ``Frame``, and a table view that copies TSV."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence

import numpy as np
from PySide6 import QtCore, QtGui, QtWidgets

from viewer.analysis.units import ungroup
from viewer.model.frame import Frame

Formatter = Callable[[object], str]
DISPLAY = int(QtCore.Qt.ItemDataRole.DisplayRole)
ALIGNMENT = int(QtCore.Qt.ItemDataRole.TextAlignmentRole)
RIGHT = int(QtCore.Qt.AlignmentFlag.AlignRight | QtCore.Qt.AlignmentFlag.AlignVCenter)


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


def _numeric_column(values: np.ndarray) -> bool | None:
    """Whether a column's cells align right (numbers), or None when it depends on the cell."""
    if values.dtype.kind in "iuf":
        return True
    if values.dtype.kind == "O":
        return None
    return False


class FrameModel(QtCore.QAbstractTableModel):
    """Rows of a ``Frame`` with display headers, sorted by the model itself.

    Columns are held as numpy arrays and sorting is one vectorized argsort: a proxy
    model comparing cells through ``data()`` costs seconds on 10^4 rows, and the
    panels refill these tables on every range change.
    """

    def __init__(self, parent: QtCore.QObject | None = None) -> None:
        super().__init__(parent)
        self._frame = Frame()
        self._headers: list[str] = []
        self._columns: list[str] = []
        self._arrays: list[np.ndarray] = []
        self._formatters: list[Formatter] = []
        self._copied: list[Formatter] = []
        self._right_aligned: list[bool | None] = []  # None: decided per value
        #: displayed row -> frame row: a range while unsorted (an array of every row cost 8 bytes
        #: a row for nothing: 12 MB a table of 1.5 M rows, three tables in the window).
        self._order: np.ndarray | range = range(0)
        self._sort: tuple[int, QtCore.Qt.SortOrder] | None = None

    def set_frame(
        self,
        frame: Frame,
        columns: Sequence[tuple[str, str]],
        formatters: dict[str, Formatter] | None = None,
        copied: dict[str, Formatter] | None = None,
        text: Iterable[str] = (),
    ) -> None:
        """Show ``frame``'s ``columns`` (name, header) with optional per-column formatters;
        ``copied`` formats the copied text where it differs from the cell's (a whole id
        where the cell shows it elided); ``text``: columns shown as text (aligned left)
        whatever their values (an id drawn from a job number)."""
        self.beginResetModel()
        self._frame = frame
        self._columns = [c for c, _ in columns]
        self._headers = [h for _, h in columns]
        self._arrays = [self._frame[c] for c in self._columns]
        formatters = formatters or {}
        self._formatters = [formatters.get(c, format_cell) for c in self._columns]
        copied = copied or {}
        self._copied = [
            copied.get(c, f) for c, f in zip(self._columns, self._formatters, strict=True)
        ]
        text = set(text)
        self._right_aligned = [
            False if c in text else _numeric_column(a)
            for c, a in zip(self._columns, self._arrays, strict=True)
        ]
        self._order = self._sorted_order()
        self.endResetModel()

    def frame(self) -> Frame:
        return self._frame

    def frame_row(self, row: int) -> int:
        """The frame row shown at display row ``row``."""
        return int(self._order[row])

    def column_texts(self, column: int, rows: int) -> list[str]:
        """The text of the first ``rows`` displayed cells of ``column``."""
        values, fmt = self._arrays[column], self._formatters[column]
        return [fmt(values[i]) for i in self._order[:rows]]

    def copy_text(self, row: int, column: int) -> str:
        """The text Ctrl+C copies for the cell at display ``row``, ``column``."""
        return self._copied[column](self._arrays[column][self._order[row]])

    def rowCount(self, parent: QtCore.QModelIndex = QtCore.QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._order)

    def columnCount(self, parent: QtCore.QModelIndex = QtCore.QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._columns)

    def data(self, index: QtCore.QModelIndex, role: int = DISPLAY):
        # Qt asks about ten roles per painted cell: answer the others before any lookup.
        if (role != DISPLAY and role != ALIGNMENT) or not index.isValid():
            return None
        column = index.column()
        value = self._arrays[column][self._order[index.row()]]
        if role == DISPLAY:
            return self._formatters[column](value)
        right = self._right_aligned[column]
        if right is None:
            right = isinstance(value, int | float | np.number) and not isinstance(value, bool)
        return RIGHT if right else None

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

    def sort(self, column: int, order: QtCore.Qt.SortOrder = QtCore.Qt.SortOrder.AscendingOrder):
        self.layoutAboutToBeChanged.emit()
        self._sort = (column, order) if 0 <= column < len(self._columns) else None
        self._order = self._sorted_order()
        self.layoutChanged.emit()

    def _sorted_order(self) -> np.ndarray | range:
        n = len(self._frame)
        if self._sort is None or not n:
            return range(n)
        column, order = self._sort
        return sort_order(self._arrays[column], order == QtCore.Qt.SortOrder.DescendingOrder)


def _missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def sort_order(values: np.ndarray, descending: bool = False) -> np.ndarray:
    """Rows in the order of ``values``: stable (equal values keep their order), missing
    values (NaN, None) last in both directions."""
    if values.dtype.kind in "biuf":
        v = values.astype(np.float64)
        missing = np.isnan(v)
        present = np.flatnonzero(~missing)
        ranked = present[np.argsort(-v[present] if descending else v[present], kind="stable")]
        return np.concatenate([ranked, np.flatnonzero(missing)]).astype(np.int64)
    items = values.tolist()
    present = [i for i, x in enumerate(items) if not _missing(x)]
    missing = [i for i, x in enumerate(items) if _missing(x)]
    try:
        present.sort(key=items.__getitem__, reverse=descending)
    except TypeError:  # mixed kinds of value: as text
        present.sort(key=lambda i: str(items[i]), reverse=descending)
    return np.array(present + missing, dtype=np.int64)


class CopyableTableView(QtWidgets.QTableView):
    """A sortable table whose selection copies as tab-separated text (Ctrl+C)."""

    row_activated = QtCore.Signal(int)  # row of the frame that was clicked

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.source = FrameModel(self)
        self.setModel(self.source)
        self.setSortingEnabled(True)
        self.horizontalHeader().setSortIndicator(-1, QtCore.Qt.SortOrder.AscendingOrder)
        self.setSelectionBehavior(QtWidgets.QAbstractItemView.SelectionBehavior.SelectRows)
        self.setAlternatingRowColors(True)
        self.setWordWrap(False)
        self.verticalHeader().setVisible(False)
        self.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)
        header = self.horizontalHeader()
        header.setStretchLastSection(False)
        header.setResizeContentsPrecision(64)  # size columns from the first rows, not all
        self.clicked.connect(self._on_clicked)
        copy = QtGui.QAction("Copy", self)
        copy.setShortcut(QtGui.QKeySequence.StandardKey.Copy)
        copy.setShortcutContext(QtCore.Qt.ShortcutContext.WidgetWithChildrenShortcut)
        copy.triggered.connect(self.copy_selection)
        self.addAction(copy)

    def set_frame(self, frame, columns, formatters=None, copied=None, text=()) -> None:
        self.source.set_frame(frame, columns, formatters, copied, text)
        self.fit_columns()

    def fit_columns(self) -> None:
        """Size the columns to their first rows, as ``resizeColumnsToContents`` does, but
        measuring the text in one go: Qt's own sizing calls ``data()`` for every sampled
        cell and role, thousands of Qt -> Python calls that each wait for the GIL while a
        worker thread computes."""
        header = self.horizontalHeader()
        metrics = QtGui.QFontMetricsF(self.font())
        style = self.style()
        margin = style.pixelMetric(QtWidgets.QStyle.PixelMetric.PM_FocusFrameHMargin, None, self)
        pad = 2 * (margin + 1) + (1 if self.showGrid() else 0)
        rows = header.resizeContentsPrecision()
        for column in range(self.source.columnCount()):
            texts = set(self.source.column_texts(column, rows))
            width = max((math.ceil(metrics.horizontalAdvance(t)) for t in texts), default=0)
            header.resizeSection(column, max(width + pad, header.sectionSizeHint(column)))

    def _on_clicked(self, index: QtCore.QModelIndex) -> None:
        self.row_activated.emit(self.source.frame_row(index.row()))

    def selection_tsv(self) -> str:
        """Selected rows (or the whole table) as TSV with a header line, as displayed but
        for thousands separators (a spreadsheet reads "4490", not "4 490") and elisions
        (a whole id, which a grep finds)."""
        model = self.source
        indexes = self.selectionModel().selectedIndexes() if self.selectionModel() else []
        rows = sorted({i.row() for i in indexes}) or list(range(model.rowCount()))
        cols = sorted({i.column() for i in indexes}) or list(range(model.columnCount()))
        header = [model.headerData(c, QtCore.Qt.Orientation.Horizontal) for c in cols]
        lines = ["\t".join(str(h) for h in header)]
        for r in rows:
            lines.append("\t".join(ungroup(model.copy_text(r, c)) for c in cols))
        return "\n".join(lines) + "\n"

    def copy_selection(self) -> None:
        QtWidgets.QApplication.clipboard().setText(self.selection_tsv())

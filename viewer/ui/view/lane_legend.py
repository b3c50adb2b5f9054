"""A one-line legend under the lanes: what each colour, band and hatch means."""

from __future__ import annotations

from collections.abc import Callable

from PySide6 import QtCore, QtGui, QtWidgets

from viewer.lanes.data import GAP_DISPATCH, GAP_STARVED
from viewer.ui.palette import Theme, job_color

Swatch = Callable[[QtGui.QPainter, QtCore.QRectF, Theme], None]


def _sectors(p: QtGui.QPainter, r: QtCore.QRectF, t: Theme) -> None:
    w = r.width() / 3
    for i in range(3):
        p.fillRect(QtCore.QRectF(r.x() + i * w, r.y(), w - 1, r.height()), job_color(i))


def _kernel(p: QtGui.QPainter, r: QtCore.QRectF, t: Theme) -> None:
    p.fillRect(r, job_color(0))
    p.fillRect(r.adjusted(0, r.height() * 0.22, 0, -r.height() * 0.22), t.kernel(0))


def _wait(p: QtGui.QPainter, r: QtCore.QRectF, t: Theme) -> None:
    p.fillRect(QtCore.QRectF(r.x(), r.center().y() - 1.5, r.width(), 3), t.wait)


def _open(p: QtGui.QPainter, r: QtCore.QRectF, t: Theme) -> None:
    p.fillRect(r, job_color(0))
    p.fillRect(r, QtGui.QBrush(t.foreground, QtCore.Qt.BrushStyle.BDiagPattern))


def _fill(color: Callable[[Theme], QtGui.QColor], inset: float = 0.0) -> Swatch:
    def draw(p: QtGui.QPainter, r: QtCore.QRectF, t: Theme) -> None:
        p.fillRect(r.adjusted(0, r.height() * inset, 0, -r.height() * inset), color(t))

    return draw


def _counter(p: QtGui.QPainter, r: QtCore.QRectF, t: Theme) -> None:
    w = r.width() / 4
    for i, (lo, hi) in enumerate(((0.3, 0.5), (0.5, 0.9), (0.7, 0.7), (0.4, 0.6))):
        x = r.x() + i * w
        up_to = QtCore.QRectF(x, r.bottom() - hi * r.height(), w, (hi - lo) * r.height())
        p.fillRect(up_to, t.counter_range)
        p.fillRect(QtCore.QRectF(x, r.bottom() - lo * r.height(), w, lo * r.height()), t.counter)


def _kernel_parts(p: QtGui.QPainter, r: QtCore.QRectF, t: Theme) -> None:
    widths = (0.6, 0.3, 0.1)
    x = r.x()
    for k, share in enumerate(widths):
        p.fillRect(QtCore.QRectF(x, r.y(), r.width() * share, r.height()), t.kernel_part(k))
        x += r.width() * share


def _cold(p: QtGui.QPainter, r: QtCore.QRectF, t: Theme) -> None:
    p.fillRect(r, t.cold)
    p.fillRect(r, QtGui.QBrush(t.cold_hatch, QtCore.Qt.BrushStyle.FDiagPattern))


def _marker(p: QtGui.QPainter, r: QtCore.QRectF, t: Theme) -> None:
    p.setPen(QtGui.QPen(t.marker, 1.0, QtCore.Qt.PenStyle.DashLine))
    x = r.center().x()
    p.drawLine(QtCore.QPointF(x, r.top()), QtCore.QPointF(x, r.bottom()))


ENTRIES: tuple[tuple[str, Swatch], ...] = (
    ("sector (job)", _sectors),
    ("CUDA kernel", _kernel),
    ("wait (queue / pickup)", _wait),
    ("open call", _open),
    ("GPU busy", _fill(lambda t: t.busy, 0.15)),
    ("idle: starved", _fill(lambda t: t.gap[GAP_STARVED])),
    ("idle: dispatch", _fill(lambda t: t.gap[GAP_DISPATCH])),
    ("cross-sector idle", _fill(lambda t: t.cross_band)),
    ("cold start", _cold),
    ("transition", _marker),
    ("several jobs (zoom in)", _fill(lambda t: t.mixed)),
    ("count: surely / up to (per pixel)", _counter),
    ("ntt · batch · tail (zoom in)", _kernel_parts),
)


#: A legend swatch's size (logical px).
SWATCH = QtCore.QSizeF(22, 11)


def legend_rows(
    width: float, metrics: QtGui.QFontMetricsF, margin: float
) -> list[list[tuple[float, int]]]:
    """The legend's entries as (x, index of ``ENTRIES``), wrapped into rows that fit
    ``width`` between margins of ``margin`` (the window's legend and an image's page)."""
    rows: list[list[tuple[float, int]]] = [[]]
    x = margin
    for i, (name, _) in enumerate(ENTRIES):
        w = SWATCH.width() + 4 + metrics.horizontalAdvance(name) + 14
        if rows[-1] and x + w > width - margin:
            rows.append([])
            x = margin
        rows[-1].append((x, i))
        x += w
    return rows


class LegendBar(QtWidgets.QWidget):
    """Swatches and names of every mark the lanes use, wrapped into as many lines as the
    width needs (a narrow window cut the last entries off)."""

    MARGIN = 6.0

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.theme = Theme.from_palette(self.palette())
        policy = QtWidgets.QSizePolicy(
            QtWidgets.QSizePolicy.Policy.Expanding, QtWidgets.QSizePolicy.Policy.Fixed
        )
        policy.setHeightForWidth(True)
        self.setSizePolicy(policy)

    def set_theme(self, theme: Theme) -> None:
        self.theme = theme
        self.update()

    def _line(self) -> float:
        return QtGui.QFontMetricsF(self.font()).height() + 6

    def rows(self, width: float | None = None) -> list[list[tuple[float, int]]]:
        w = float(self.width() if width is None else width)
        return legend_rows(w, QtGui.QFontMetricsF(self.font()), self.MARGIN)

    def hasHeightForWidth(self) -> bool:
        return True

    def heightForWidth(self, width: int) -> int:
        return round(len(self.rows(width)) * self._line() + 2)

    def sizeHint(self) -> QtCore.QSize:
        width = max(self.width(), 800)
        return QtCore.QSize(800, self.heightForWidth(width))

    def minimumSizeHint(self) -> QtCore.QSize:
        return QtCore.QSize(100, self.heightForWidth(max(self.width(), 100)))

    def resizeEvent(self, event: QtGui.QResizeEvent) -> None:
        super().resizeEvent(event)
        if event.size().width() != event.oldSize().width():
            height = self.heightForWidth(event.size().width())
            if height != self.height():
                self.setFixedHeight(height)  # the layout gives the lines their height
                self.updateGeometry()

    def paintEvent(self, event: QtGui.QPaintEvent) -> None:
        painter = QtGui.QPainter(self)
        metrics = QtGui.QFontMetricsF(self.font())
        line = self._line()
        text = self.palette().color(QtGui.QPalette.ColorRole.WindowText)
        for r, row in enumerate(self.rows()):
            top = 1 + r * line
            for x, i in row:
                name, swatch = ENTRIES[i]
                rect = QtCore.QRectF(
                    x, top + (line - SWATCH.height()) / 2, SWATCH.width(), SWATCH.height()
                )
                painter.save()
                swatch(painter, rect, self.theme)
                painter.restore()
                painter.setPen(text)
                width = metrics.horizontalAdvance(name) + 14
                painter.drawText(
                    QtCore.QRectF(rect.right() + 4, top, width, line),
                    QtCore.Qt.AlignmentFlag.AlignVCenter,
                    name,
                )
        painter.end()

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


class LegendBar(QtWidgets.QWidget):
    """Swatches and names of every mark the lanes use, on one line."""

    SWATCH = QtCore.QSizeF(22, 11)

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.theme = Theme.from_palette(self.palette())
        self.setSizePolicy(
            QtWidgets.QSizePolicy.Policy.Expanding, QtWidgets.QSizePolicy.Policy.Fixed
        )

    def set_theme(self, theme: Theme) -> None:
        self.theme = theme
        self.update()

    def sizeHint(self) -> QtCore.QSize:
        return QtCore.QSize(800, self.fontMetrics().height() + 8)

    def paintEvent(self, event: QtGui.QPaintEvent) -> None:
        painter = QtGui.QPainter(self)
        metrics = self.fontMetrics()
        x, h = 6.0, float(self.height())
        for name, swatch in ENTRIES:
            width = self.SWATCH.width() + 4 + metrics.horizontalAdvance(name) + 14
            if x + width > self.width():
                break
            rect = QtCore.QRectF(
                x, (h - self.SWATCH.height()) / 2, self.SWATCH.width(), self.SWATCH.height()
            )
            painter.save()
            swatch(painter, rect, self.theme)
            painter.restore()
            painter.setPen(self.palette().color(QtGui.QPalette.ColorRole.WindowText))
            painter.drawText(
                QtCore.QRectF(rect.right() + 4, 0, width, h),
                QtCore.Qt.AlignmentFlag.AlignVCenter,
                name,
            )
            x += width
        painter.end()

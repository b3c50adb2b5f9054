"""The tuning chart of a sweep: s/proof across a knob's values, measured and predicted, with
the memory each value needs on a second axis.

One paint function draws the chart into any QPainter: the widget on screen, a PNG
(``QImage``) or an SVG (``QSvgGenerator``, text as text), so the file is the chart as
seen.  Measured runs are filled circles (interval between completions) and hollow
squares (wall time / proofs, as cuzk-bench prints it); the prediction from the base run
is a line with its band, dashed where it leaves the loads the logs cover; the memory
range is a shaded band on the right axis with the RAM limit marked; the best region is
tinted.  Clicking a measured point asks for its run (``runClicked``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from PySide6 import QtCore, QtGui, QtSvg, QtWidgets

from viewer.analysis.units import counted
from viewer.export.files import write_output
from viewer.export.format import display_path
from viewer.ui.palette import Theme, dark_palette, light_palette, mix, with_alpha
from viewer.ui.writeups.image_export import png_bytes
from viewer.whatif.sweep import Sweep, knob_label, knob_title, value_text

Qt = QtCore.Qt
MARGIN = QtCore.QMarginsF(70, 58, 74, 52)
POINT = 5.0  # radius of a measured point, px
HIT = 9.0  # a click this close to a point picks it


@dataclass(frozen=True)
class Colours:
    fg: QtGui.QColor
    bg: QtGui.QColor
    grid: QtGui.QColor
    measured: QtGui.QColor
    predicted: QtGui.QColor
    memory: QtGui.QColor
    limit: QtGui.QColor
    best: QtGui.QColor

    @classmethod
    def of(cls, theme: Theme) -> Colours:
        dark = theme.dark
        return cls(
            fg=theme.foreground,
            bg=theme.background,
            grid=mix(theme.background, theme.foreground, 0.12),
            measured=QtGui.QColor("#f2f2f2" if dark else "#1a1a1a"),
            predicted=QtGui.QColor("#4c8ee8" if dark else "#2f6db5"),
            memory=QtGui.QColor("#c39bd3" if dark else "#8e44ad"),
            limit=QtGui.QColor("#ff5a4e" if dark else "#d62728"),
            best=QtGui.QColor("#3ec46d" if dark else "#2e9e50"),
        )


def nice_ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    """Round numbers covering [lo, hi], about ``count`` of them."""
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        return [lo]
    raw = (hi - lo) / max(count, 1)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    first = math.ceil(lo / step - 1e-9) * step
    out = []
    v = first
    while v <= hi + step * 1e-9 and len(out) < 50:
        out.append(round(v, 10))
        v += step
    return out


def _tick_text(v: float) -> str:
    return f"{v:.0f}" if abs(v) >= 100 or v == int(v) else f"{v:.3g}"


class Frame:
    """Data to pixels: x (log for worker counts spanning 4x or more), the s/proof axis
    on the left and the GiB axis on the right."""

    def __init__(self, s: Sweep, rect: QtCore.QRectF) -> None:
        self.rect = rect
        xs = [r.value for r in s.rows]
        self.x0, self.x1 = min(xs), max(xs)
        self.log = s.knob in ("pw", "gw", "budget") and self.x0 > 0 and self.x1 / self.x0 >= 4
        if self.x1 == self.x0:
            self.x0, self.x1 = self.x0 * 0.9, self.x1 * 1.1 + 1
        ys = []
        for r in s.rows:
            ys += [v for v in (r.s_per_proof, r.wall_s_per_proof, r.predicted) if v is not None]
            if r.band is not None:
                ys += list(r.band)
        lo, hi = (min(ys), max(ys)) if ys else (0.0, 1.0)
        pad = (hi - lo) * 0.08 or hi * 0.1 or 1.0
        ticks = nice_ticks(max(lo - pad, 0.0), hi + pad, 6)
        self.y0, self.y1 = min(ticks[0], lo - pad), max(ticks[-1], hi + pad)
        self.y0 = max(self.y0, 0.0)
        self.yticks = [t for t in ticks if self.y0 <= t <= self.y1]
        top = max([r.memory_gib[1] for r in s.rows] + [s.ram_gib or 0.0])
        mticks = nice_ticks(0.0, top * 1.08 or 1.0)
        self.m1 = max(mticks[-1], top * 1.08) or 1.0
        self.mticks = [t for t in mticks if t <= self.m1]

    def _u(self, v: float) -> float:
        if self.log:
            return (math.log(v) - math.log(self.x0)) / (math.log(self.x1) - math.log(self.x0))
        return (v - self.x0) / (self.x1 - self.x0)

    def x(self, v: float) -> float:
        inner = self.rect.width() * 0.94
        return self.rect.left() + self.rect.width() * 0.03 + inner * self._u(v)

    def y(self, v: float) -> float:
        return self.rect.bottom() - self.rect.height() * (v - self.y0) / (self.y1 - self.y0)

    def m(self, gib: float) -> float:
        return self.rect.bottom() - self.rect.height() * gib / self.m1


def plot_rect(size: QtCore.QSizeF) -> QtCore.QRectF:
    return QtCore.QRectF(QtCore.QPointF(0, 0), size).marginsRemoved(MARGIN)


def paint_chart(p: QtGui.QPainter, size: QtCore.QSizeF, s: Sweep, theme: Theme) -> None:
    """The whole chart into ``p`` over (0, 0, size)."""
    c = Colours.of(theme)
    p.save()
    p.setRenderHint(QtGui.QPainter.RenderHint.Antialiasing, True)
    p.fillRect(QtCore.QRectF(QtCore.QPointF(0, 0), size), c.bg)
    rect = plot_rect(size)
    if rect.width() < 40 or rect.height() < 40 or not s.rows:
        p.restore()
        return
    f = Frame(s, rect)
    font = QtGui.QFont(p.font())
    font.setPointSizeF(9.0)
    p.setFont(font)
    fm = QtGui.QFontMetricsF(font)
    _grid(p, f, c, fm, s)
    _region(p, f, c, s)
    _memory(p, f, c, s, fm)
    _prediction(p, f, c, s)
    _measured(p, f, c, s)
    _best(p, f, c, s, fm)
    _title_and_legend(p, size, c, s, fm)
    p.restore()


def _pen(colour: QtGui.QColor, width: float = 1.0, style=Qt.PenStyle.SolidLine) -> QtGui.QPen:  # noqa: ANN001
    pen = QtGui.QPen(colour, width, style)
    pen.setCapStyle(Qt.PenCapStyle.FlatCap)
    return pen


def _grid(p: QtGui.QPainter, f: Frame, c: Colours, fm: QtGui.QFontMetricsF, s: Sweep) -> None:
    r = f.rect
    p.setPen(_pen(c.grid))
    for t in f.yticks:
        p.drawLine(QtCore.QLineF(r.left(), f.y(t), r.right(), f.y(t)))
    p.setPen(_pen(c.fg))
    p.drawRect(r)
    for t in f.yticks:
        text = _tick_text(t)
        p.drawText(
            QtCore.QPointF(r.left() - 6 - fm.horizontalAdvance(text), f.y(t) + fm.ascent() / 2 - 1),
            text,
        )
    p.setPen(_pen(c.memory))
    for t in f.mticks:
        text = _tick_text(t)
        p.drawLine(QtCore.QLineF(r.right(), f.m(t), r.right() + 4, f.m(t)))
        p.drawText(QtCore.QPointF(r.right() + 7, f.m(t) + fm.ascent() / 2 - 1), text)
    p.setPen(_pen(c.fg))
    shown: list[float] = []
    for v in sorted({row.value for row in s.rows}):
        x = f.x(v)
        text = _tick_text(v)
        w = fm.horizontalAdvance(text)
        if shown and x - w / 2 < shown[-1] + 4:
            continue  # too close to the last label
        p.drawLine(QtCore.QLineF(x, r.bottom(), x, r.bottom() + 4))
        p.drawText(QtCore.QPointF(x - w / 2, r.bottom() + 6 + fm.ascent()), text)
        shown.append(x + w / 2)
    label = knob_label(s.knob)
    p.drawText(
        QtCore.QPointF(
            r.center().x() - fm.horizontalAdvance(label) / 2, r.bottom() + 8 + 2 * fm.height()
        ),
        label,
    )
    _vertical(p, "s/proof", QtCore.QPointF(14, r.center().y()), c.fg, fm)
    _vertical(p, "memory held, GiB", QtCore.QPointF(size_right(r), r.center().y()), c.memory, fm)


def size_right(r: QtCore.QRectF) -> float:
    return r.right() + MARGIN.right() - 12


def _vertical(p: QtGui.QPainter, text: str, at: QtCore.QPointF, colour: QtGui.QColor, fm) -> None:  # noqa: ANN001
    p.save()
    p.setPen(_pen(colour))
    p.translate(at)
    p.rotate(-90)
    p.drawText(QtCore.QPointF(-fm.horizontalAdvance(text) / 2, fm.ascent() / 2), text)
    p.restore()


def _region(p: QtGui.QPainter, f: Frame, c: Colours, s: Sweep) -> None:
    region = s.region
    if region is None:
        return
    lo, hi = region
    half = 6.0
    a, b = f.x(lo) - half, f.x(hi) + half
    p.fillRect(QtCore.QRectF(a, f.rect.top(), b - a, f.rect.height()), with_alpha(c.best, 0.10))


def _memory(p: QtGui.QPainter, f: Frame, c: Colours, s: Sweep, fm) -> None:  # noqa: ANN001
    pts = {}
    for r in s.rows:
        pts[r.value] = r.memory_gib
    vs = sorted(pts)
    upper = [QtCore.QPointF(f.x(v), f.m(pts[v][1])) for v in vs]
    lower = [QtCore.QPointF(f.x(v), f.m(pts[v][0])) for v in vs]
    band = QtGui.QPolygonF(upper + lower[::-1])
    p.setPen(Qt.PenStyle.NoPen)
    p.setBrush(with_alpha(c.memory, 0.16))
    p.drawPolygon(band)
    p.setBrush(Qt.BrushStyle.NoBrush)
    p.setPen(_pen(c.memory, 1.2))
    p.drawPolyline(QtGui.QPolygonF(upper))
    p.setPen(_pen(c.memory, 1.0, Qt.PenStyle.DotLine))
    p.drawPolyline(QtGui.QPolygonF(lower))
    if s.ram_gib is not None:
        y = f.m(s.ram_gib)
        p.setPen(_pen(c.limit, 1.5, Qt.PenStyle.DashLine))
        p.drawLine(QtCore.QLineF(f.rect.left(), y, f.rect.right(), y))
        text = f"RAM {s.ram_gib:g} GiB"
        p.setPen(_pen(c.limit))
        p.drawText(QtCore.QPointF(f.rect.right() - fm.horizontalAdvance(text) - 4, y - 4), text)


def _prediction(p: QtGui.QPainter, f: Frame, c: Colours, s: Sweep) -> None:
    rows = {}
    for r in s.rows:
        if r.predicted is not None:
            rows[r.value] = r
    vs = sorted(rows)
    if not vs:
        return
    hi = [QtCore.QPointF(f.x(v), f.y((rows[v].band or (rows[v].predicted,) * 2)[1])) for v in vs]
    lo = [QtCore.QPointF(f.x(v), f.y((rows[v].band or (rows[v].predicted,) * 2)[0])) for v in vs]
    p.setPen(Qt.PenStyle.NoPen)
    p.setBrush(with_alpha(c.predicted, 0.18))
    p.drawPolygon(QtGui.QPolygonF(hi + lo[::-1]))
    p.setBrush(Qt.BrushStyle.NoBrush)
    for a, b in zip(vs, vs[1:], strict=False):
        beyond = rows[a].beyond or rows[b].beyond
        style = Qt.PenStyle.DashLine if beyond else Qt.PenStyle.SolidLine
        p.setPen(_pen(c.predicted, 2.0, style))
        p.drawLine(QtCore.QLineF(f.x(a), f.y(rows[a].predicted), f.x(b), f.y(rows[b].predicted)))
    p.setBrush(c.bg)
    p.setPen(_pen(c.predicted, 1.5))
    for v in vs:
        p.drawEllipse(QtCore.QPointF(f.x(v), f.y(rows[v].predicted)), 2.8, 2.8)
    p.setBrush(Qt.BrushStyle.NoBrush)


def measured_points(s: Sweep, size: QtCore.QSizeF) -> list[tuple[QtCore.QPointF, object]]:
    """Where each measured run's point is drawn, with the row."""
    f = Frame(s, plot_rect(size))
    return [
        (QtCore.QPointF(f.x(r.value), f.y(r.s_per_proof)), r)
        for r in s.rows
        if r.s_per_proof is not None
    ]


def _measured(p: QtGui.QPainter, f: Frame, c: Colours, s: Sweep) -> None:
    p.setPen(_pen(c.measured, 1.3))
    p.setBrush(Qt.BrushStyle.NoBrush)
    for r in s.rows:
        if r.wall_s_per_proof is not None:
            pt = QtCore.QPointF(f.x(r.value), f.y(r.wall_s_per_proof))
            p.drawRect(QtCore.QRectF(pt.x() - 3.5, pt.y() - 3.5, 7, 7))
    p.setBrush(c.measured)
    p.setPen(_pen(c.bg, 1.0))
    for r in s.rows:
        if r.s_per_proof is not None:
            p.drawEllipse(QtCore.QPointF(f.x(r.value), f.y(r.s_per_proof)), POINT, POINT)
    p.setBrush(Qt.BrushStyle.NoBrush)


def _best(p: QtGui.QPainter, f: Frame, c: Colours, s: Sweep, fm) -> None:  # noqa: ANN001
    best = s.best
    if best is None:
        return
    y = f.y(s.figure(best))
    x = f.x(best.value)
    p.setPen(_pen(c.best, 2.0))
    p.drawEllipse(QtCore.QPointF(x, y), POINT + 3, POINT + 3)
    text = f"best: {value_text(s.knob, best.value)}"
    w = fm.horizontalAdvance(text)
    tx = min(max(x - w / 2, f.rect.left() + 2), f.rect.right() - w - 2)
    ty = y + POINT + 6 + fm.ascent()
    if ty > f.rect.bottom() - 4:
        ty = y - POINT - 8
    p.fillRect(QtCore.QRectF(tx - 2, ty - fm.ascent(), w + 4, fm.height()), with_alpha(c.bg, 0.8))
    p.drawText(QtCore.QPointF(tx, ty), text)


def chart_title(s: Sweep) -> str:
    """The chart's title: "GPU workers per GPU sweep: 4 runs, predicted from base.log"."""
    runs = counted(len({id(r.run) for r in s.rows if r.run is not None}), "run")
    base = display_path(Path(s.base.name).name)
    return f"{knob_title(s.knob)} sweep: {runs}, predicted from {base}"


def _title_and_legend(p: QtGui.QPainter, size: QtCore.QSizeF, c: Colours, s: Sweep, fm) -> None:  # noqa: ANN001
    bold = QtGui.QFont(p.font())
    bold.setBold(True)
    bold.setPointSizeF(10.0)
    p.setFont(bold)
    p.setPen(_pen(c.fg))
    p.drawText(QtCore.QPointF(MARGIN.left(), 18), chart_title(s))
    p.setFont(QtGui.QFont(bold.family(), 9))
    x, y = MARGIN.left(), 40.0
    entries = [
        ("dot", c.measured, "measured (click: open the run)"),
        ("square", c.measured, "wall time / proofs"),
        ("line", c.predicted, "predicted, band"),
        ("band", c.memory, "memory held, GiB"),
    ]
    if s.region is not None:
        entries.append(("region", c.best, "best region"))
    if s.ram_gib is not None:
        entries.append(("dash", c.limit, "RAM limit"))
    for kind, colour, text in entries:
        w = 18 + fm.horizontalAdvance(text) + 14
        if x + w > size.width() - 8:
            x, y = MARGIN.left(), y + fm.height() + 2  # a second row, over the plot's top
            if y > MARGIN.top() - 2:
                break
        mid = QtCore.QPointF(x + 7, y - fm.ascent() / 2 + 1)
        if kind == "dot":
            p.setPen(Qt.PenStyle.NoPen)
            p.setBrush(colour)
            p.drawEllipse(mid, 4, 4)
        elif kind == "square":
            p.setPen(_pen(colour, 1.3))
            p.setBrush(Qt.BrushStyle.NoBrush)
            p.drawRect(QtCore.QRectF(mid.x() - 3.5, mid.y() - 3.5, 7, 7))
        elif kind == "region":
            p.setPen(Qt.PenStyle.NoPen)
            p.setBrush(with_alpha(colour, 0.25))
            p.drawRect(QtCore.QRectF(mid.x() - 7, mid.y() - 5, 14, 10))
        elif kind == "band":
            p.setPen(_pen(colour, 1.2))
            p.setBrush(with_alpha(colour, 0.25))
            p.drawRect(QtCore.QRectF(mid.x() - 7, mid.y() - 4, 14, 8))
        else:
            style = Qt.PenStyle.DashLine if kind == "dash" else Qt.PenStyle.SolidLine
            p.setPen(_pen(colour, 2.0, style))
            p.drawLine(QtCore.QLineF(mid.x() - 7, mid.y(), mid.x() + 7, mid.y()))
        p.setBrush(Qt.BrushStyle.NoBrush)
        p.setPen(_pen(c.fg))
        p.drawText(QtCore.QPointF(x + 18, y), text)
        x += w


class SweepChart(QtWidgets.QWidget):
    """The chart as a widget; ``runClicked(name)`` when a measured point is clicked."""

    runClicked = QtCore.Signal(str)

    def __init__(self, s: Sweep, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.sweep = s
        self.setMinimumSize(480, 320)
        self.setMouseTracking(True)

    def sizeHint(self) -> QtCore.QSize:
        return QtCore.QSize(900, 520)

    def theme(self) -> Theme:
        return Theme.from_palette(self.palette())

    def paintEvent(self, event: QtGui.QPaintEvent) -> None:
        p = QtGui.QPainter(self)
        try:
            paint_chart(p, QtCore.QSizeF(self.size()), self.sweep, self.theme())
        finally:
            p.end()

    def row_at(self, pos: QtCore.QPointF):  # noqa: ANN201
        """The measured row whose point is under ``pos`` (None: none)."""
        best, dist = None, HIT
        for pt, row in measured_points(self.sweep, QtCore.QSizeF(self.size())):
            d = math.hypot(pt.x() - pos.x(), pt.y() - pos.y())
            if d <= dist:
                best, dist = row, d
        return best

    def mousePressEvent(self, event: QtGui.QMouseEvent) -> None:
        row = self.row_at(event.position())
        if row is not None and event.button() == Qt.MouseButton.LeftButton:
            self.runClicked.emit(row.run.name)
            event.accept()
            return
        super().mousePressEvent(event)

    def mouseMoveEvent(self, event: QtGui.QMouseEvent) -> None:
        row = self.row_at(event.position())
        if row is None:
            QtWidgets.QToolTip.hideText()
            self.unsetCursor()
            return
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        pred = f"{row.predicted:.3g}" if row.predicted is not None else "-"
        wall = f"{row.wall_s_per_proof:.3g}" if row.wall_s_per_proof is not None else "-"
        text = (
            f"{display_path(row.run.name)}\n{value_text(self.sweep.knob, row.value)}: "
            f"{row.s_per_proof:.3g} s/proof measured, {wall} wall time / proofs; "
            f"predicted {pred}\nclick to open the run"
        )
        QtWidgets.QToolTip.showText(event.globalPosition().toPoint(), text, self)


def chart_bytes(
    s: Sweep,
    path: str | Path,
    *,
    width: int = 900,
    height: int = 520,
    dark: bool = False,
    palette: QtGui.QPalette | None = None,
) -> bytes:
    """The chart as PNG (2x device pixels) or SVG bytes, by ``path``'s suffix."""
    if palette is None:
        if dark:
            palette = dark_palette()
        else:
            palette = QtGui.QPalette(QtGui.QGuiApplication.palette())
            if palette.color(QtGui.QPalette.ColorRole.Base).lightnessF() < 0.5:
                palette = light_palette()
    theme = Theme.from_palette(palette)
    size = QtCore.QSizeF(width, height)
    if Path(path).suffix.lower() == ".svg":
        buf = QtCore.QBuffer()
        buf.open(QtCore.QIODevice.OpenModeFlag.WriteOnly)
        gen = QtSvg.QSvgGenerator()
        gen.setOutputDevice(buf)
        gen.setSize(QtCore.QSize(width, height))
        gen.setViewBox(QtCore.QRect(0, 0, width, height))
        gen.setTitle(f"{knob_title(s.knob)} sweep")
        p = QtGui.QPainter(gen)
        try:
            paint_chart(p, size, s, theme)
        finally:
            p.end()
        return bytes(buf.data())
    image = QtGui.QImage(width * 2, height * 2, QtGui.QImage.Format.Format_ARGB32_Premultiplied)
    image.setDevicePixelRatio(2.0)
    p = QtGui.QPainter(image)
    try:
        paint_chart(p, size, s, theme)
    finally:
        p.end()
    return png_bytes(image)


def write_chart(s: Sweep, path: str | Path, inputs, **options) -> Path:  # noqa: ANN001
    """Write the chart to ``path`` (PNG or SVG; never over an input or its notes)."""
    return write_output(path, chart_bytes(s, path, **options), inputs)

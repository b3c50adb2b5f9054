"""Axes of the timeline: time in seconds / milliseconds, and the lane headers on the left."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pyqtgraph as pg
import shiboken6
from PySide6 import QtCore, QtGui, QtWidgets

from viewer.analysis.units import DAY, MINUTE, clock_steps, clock_tick, wall_date, wall_time
from viewer.lanes.data import GROUP_HEADER, LaneGroup, Rows, SessionLanes
from viewer.ui.palette import Theme

#: Below this visible span the axis counts milliseconds instead of seconds.
MS_MODE_SPAN = 2000.0
#: Absolute millisecond labels stay short below this offset; beyond it they count from an origin.
MS_ABSOLUTE_LIMIT = 1e6
TEXT_CACHE = 512  # tick labels kept laid out
#: From this visible span on, ticks fall on a clock ("10 min", "1 h 10 min").
HUMAN_SPAN = 10 * MINUTE
#: Room per tick label, in pixels, when ticks fall on a clock.
LABEL_PX = 95.0


def _thousands(text: str) -> str:
    return text.replace(",", "\u2009")


def _decimals(spacing: float) -> int:
    return max(0, -math.floor(math.log10(spacing))) if spacing > 0 else 0


def ms_origin(start: float, span: float) -> float | None:
    """The origin of relative millisecond labels for a view, or None for seconds/absolute ms."""
    if span >= MS_MODE_SPAN or abs(start) < MS_ABSOLUTE_LIMIT:
        return None
    return math.floor(start / 1000.0) * 1000.0


def format_ms(ms: float, spacing: float, span: float, origin: float | None) -> str:
    """A tick label: "12.5 s" when zoomed out, "12 345 ms" or "+250 ms" below ~2 s."""
    if span >= MS_MODE_SPAN:
        return _thousands(f"{ms / 1000.0:,.{_decimals(spacing / 1000.0)}f}") + " s"
    if origin is None:
        return _thousands(f"{ms:,.{_decimals(spacing)}f}") + " ms"
    return _thousands(f"{ms - origin:+,.{_decimals(spacing)}f}") + " ms"


@dataclass(frozen=True)
class _AxisDrawing:
    """What the time axis draws for one range and size (pyqtgraph's draw specs, packed)."""

    axis: QtCore.QLineF
    ticks: list[tuple[QtGui.QPen, np.ndarray]]  # x1, y1, x2, y2 per tick: laid out like QLineF
    labels: list[tuple[QtCore.QPointF, QtGui.QStaticText]]


class TimeAxisItem(pg.AxisItem):
    """Bottom axis over milliseconds, labelled in units that suit the zoom: ms, s, then
    min / h once a view spans ``HUMAN_SPAN``; or the wall clock (UTC) once
    ``set_wall_start`` gives the wall time of offset 0.

    It lays out ticks and labels as pyqtgraph's ``AxisItem`` does, in fewer
    calls: tick values are computed once per range (the time grid shares them),
    a tick level's labels are measured only until they are known not to fit, and
    the result is kept until pyqtgraph invalidates its picture, then drawn directly.
    """

    def __init__(self) -> None:
        super().__init__("bottom")
        self.enableAutoSIPrefix(False)
        self._origin: float | None = None
        self._wall: float | None = None  # epoch ms of offset 0, in wall-clock mode
        self._zero: float | None = None  # offset labelled 0, in aligned mode (compare)
        self._zero_what = ""
        self._bounds: tuple[float, float] | None = None  # the session's (start, end) offsets
        self._label_key: tuple | None = None
        self._ticks: tuple[tuple[float, float, float], list[tuple[float, np.ndarray]]] | None
        self._ticks = None
        self._texts: dict[str, tuple[float, float, QtGui.QStaticText]] = {}  # w, h, laid out

    def set_wall_start(self, wall_ms: float | None) -> None:
        """Label the wall clock (UTC), offset 0 being ``wall_ms`` (epoch ms); None: the
        session's own clock."""
        if wall_ms != self._wall:
            self._wall = wall_ms
            self._relabel()

    def wall_start(self) -> float | None:
        return self._wall

    def set_bounds(self, start_ms: float, end_ms: float) -> None:
        """The session's first and last offsets: the title's dates are those of the part
        of the view the session covers (the fit's margin before a run that starts just
        after midnight is not the run's day)."""
        if (start_ms, end_ms) != self._bounds:
            self._bounds = (start_ms, end_ms)
            if self._wall is not None:
                self._relabel()

    def _dates(self, lo: float, hi: float) -> tuple[str, str]:
        """The UTC dates of the view's ends, clamped to the session's bounds."""
        if self._bounds is not None:
            a, b = self._bounds
            lo, hi = min(max(lo, a), b), max(min(hi, b), a)
        return wall_date(self._wall + lo), wall_date(self._wall + hi)

    def set_zero(self, zero_ms: float | None, what: str = "") -> None:
        """Label times from ``zero_ms`` of the session's clock ("aligned time", as the compare
        window aligns two runs): ticks fall on round aligned times and the title says what
        0 is (``what``); None: the session's own clock."""
        if (zero_ms, what) != (self._zero, self._zero_what):
            self._zero, self._zero_what = zero_ms, what
            self._relabel()

    def zero(self) -> float | None:
        return self._zero

    def _relabel(self) -> None:
        """The clock changed: ticks, labels and the title are laid out anew."""
        self._ticks = None
        self.picture = None
        self._label_key = None
        self.update_label()
        self.update()

    def update_label(self) -> None:
        lo, hi = self.range
        if self._wall is not None:
            first, last = self._dates(lo, hi)
            key: tuple = ("wall", first, last)
            text = f"wall clock (UTC), {first}" + ("" if first == last else f" → {last}")
        elif self._zero is not None:
            origin = ms_origin(lo - self._zero, hi - lo)
            key = ("zero", self._zero, origin)
            text = f"aligned time (0 = {self._zero_what})" if self._zero_what else "aligned time"
            if origin is not None:
                text = f"ms after {format_ms(origin, 1000.0, MS_MODE_SPAN, None)}, {text}"
        else:
            origin = ms_origin(lo, hi - lo)
            key = ("offset", origin)
            text = (
                "time since daemon start"
                if origin is None
                else "ms after " + format_ms(origin, 1000.0, MS_MODE_SPAN, None)
            )
        if key != self._label_key or not self.labelText:
            self._label_key = key
            self.setLabel(text)

    def tickSpacing(self, minVal: float, maxVal: float, size: float) -> list:
        """Clock steps (1, 2, 5, 10, 15, 30 s, min, ...; whole hours and days) for wide views
        and on the wall clock, else pyqtgraph's 1-2-5 steps; on the wall clock every step
        falls on a round wall time."""
        span = abs(maxVal - minVal)
        labels = max(size / LABEL_PX, 1.0)
        if span >= HUMAN_SPAN or (self._wall is not None and span / labels >= 500.0):
            steps = list(clock_steps(span, labels))
        else:
            steps = [spacing for spacing, _ in super().tickSpacing(minVal, maxVal, size)]
        if self._wall is not None:
            return [(s, -self._wall % s) for s in steps]
        return [(s, 0.0 if self._zero is None else self._zero % s) for s in steps]

    def tickStrings(self, values: list[float], scale: float, spacing: float) -> list[str]:
        lo, hi = self.range
        span = hi - lo
        if self._wall is not None:
            texts = [wall_time(self._wall + v, spacing) for v in values]
            first, last = self._dates(lo, hi)
            if first != last and spacing < DAY:  # the view crosses midnight: date its ticks there
                return [
                    wall_time(self._wall + v, DAY) if (self._wall + v) % DAY == 0 else t
                    for v, t in zip(values, texts, strict=True)
                ]
            return texts
        if self._zero is not None:
            values = [v - self._zero for v in values]
            lo -= self._zero
        if span >= HUMAN_SPAN:
            return [clock_tick(v, spacing) for v in values]
        origin = ms_origin(lo, span)
        return [format_ms(v, spacing, span, origin) for v in values]

    def tick_levels(self, lo: float, hi: float, size: float) -> list[tuple[float, np.ndarray]]:
        """(spacing, values) per tick level, coarsest first, each without the coarser
        levels' ticks: pyqtgraph's ``tickValues`` (linear axis), computed once per range."""
        key = (lo, hi, size)
        if self._ticks is None or self._ticks[0] != key:
            lo, hi = min(lo, hi), max(lo, hi)
            levels = []
            seen = np.zeros(0)
            for spacing, offset in self.tickSpacing(lo, hi, size):
                first = math.ceil((lo - offset) / spacing) * spacing + offset
                values = np.arange(int((hi - first) / spacing) + 1) * spacing + first
                if len(seen):
                    at = np.searchsorted(seen, values)
                    left = seen[np.maximum(at - 1, 0)]
                    right = seen[np.minimum(at, len(seen) - 1)]
                    near = np.minimum(abs(values - left), abs(values - right))
                    values = values[near > spacing * 0.01]
                levels.append((spacing, values))
                seen = np.sort(np.concatenate([seen, values]))
            self._ticks = (key, levels)
        return self._ticks[1]

    def current_ticks(self) -> list[tuple[float, np.ndarray]]:
        """The tick levels the axis draws now (the time grid draws the same)."""
        lo, hi = self.range
        return self.tick_levels(lo, hi, self._length())

    def _length(self) -> float:
        """The axis line's length in pixels, as pyqtgraph measures it for tick spacing."""
        return self.mapRectFromParent(self.geometry()).width() + 2.0

    def tickValues(self, minVal: float, maxVal: float, size: float) -> list:
        return [(s, v.tolist()) for s, v in self.tick_levels(minVal, maxVal, size)]

    def paint(self, painter: QtGui.QPainter, *args) -> None:
        # pyqtgraph clears ``picture`` whenever the axis must be laid out again.
        if not isinstance(self.picture, _AxisDrawing):
            self.picture = self._layout()
        drawing: _AxisDrawing = self.picture
        painter.setRenderHint(QtGui.QPainter.RenderHint.Antialiasing, False)
        painter.setRenderHint(QtGui.QPainter.RenderHint.TextAntialiasing, True)
        painter.setPen(self.pen())
        painter.drawLine(drawing.axis)
        for pen, lines in drawing.ticks:
            painter.setPen(pen)
            painter.drawLines(shiboken6.wrapInstance(lines.ctypes.data, QtCore.QLineF), len(lines))
        painter.setFont(self._font())
        painter.setPen(self.textPen())
        painter.setClipRect(self.boundingRect().toAlignedRect())
        for at, text in drawing.labels:
            painter.drawStaticText(at, text)

    def _font(self) -> QtGui.QFont:
        return self.style["tickFont"] or QtGui.QFont()

    def _layout(self) -> _AxisDrawing:
        """Ticks and labels as ``AxisItem.generateDrawSpecs`` places them (bottom axis)."""
        bounds = self.mapRectFromParent(self.geometry())
        top, width = bounds.top(), bounds.width()
        axis = QtCore.QLineF(bounds.left() - 1.0, top + 1.0, bounds.right() + 1.0, top + 1.0)
        lo, hi = self.range
        if width <= 0 or hi == lo:
            return _AxisDrawing(axis, [], [])
        scale = width / (hi - lo)
        levels = [
            (spacing, values, (values - lo) * scale)
            for spacing, values in self.tick_levels(lo, hi, self._length())
        ]
        ticks = []
        for i, (_, _, xs) in enumerate(levels):
            pen = QtGui.QPen(self.tickPen())
            if pen.brush().style() == QtCore.Qt.BrushStyle.SolidPattern:
                color = QtGui.QColor(pen.color())
                color.setAlpha(int(255 / (i + 1)))
                pen.setColor(color)
            xs = xs[(xs >= 0) & (xs <= width)]
            lines = np.empty((len(xs), 4))
            lines[:, 0] = lines[:, 2] = xs
            lines[:, 1], lines[:, 3] = top, top + self.style["tickLength"] / (i * 0.5 + 1.0)
            ticks.append((pen, lines))
        return _AxisDrawing(axis, ticks, self._labels(levels, top, width))

    def _text(self, text: str) -> tuple[float, float, QtGui.QStaticText]:
        """Width and height of a label as pyqtgraph measures it, and the label laid out."""
        cached = self._texts.get(text)
        if cached is None:
            if len(self._texts) >= TEXT_CACHE:
                self._texts.clear()
            font = self._font()
            box = QtGui.QFontMetricsF(font).boundingRect(
                QtCore.QRectF(0, 0, 100, 100), QtCore.Qt.AlignmentFlag.AlignCenter, text
            )
            static = QtGui.QStaticText(text)
            static.setTextFormat(QtCore.Qt.TextFormat.PlainText)
            static.prepare(QtGui.QTransform(), font)
            cached = self._texts[text] = (box.width(), box.height() * 0.8, static)
        return cached

    def _labels(
        self, levels: list[tuple[float, np.ndarray, np.ndarray]], top: float, width: float
    ) -> list[tuple[QtCore.QPointF, QtGui.QStaticText]]:
        if not self.style["showValues"]:
            return []
        length = self._length()
        offset = max(0, self.style["tickLength"]) + self.style["tickTextOffset"][1]
        clip = self.boundingRect()
        labels: list[tuple[QtCore.QPointF, QtGui.QStaticText]] = []
        filled = 0.0  # width of every label measured so far, as pyqtgraph counts it
        tallest = 0.0
        for i, (spacing, values, xs) in enumerate(levels[: self.style["maxTextLevel"] + 1]):
            inside = (xs >= 0) & (xs <= width)
            if not inside.any():
                continue
            # Crowded levels stop the labelling: measure only until this one is known not to fit.
            limit = min(
                (f for n, f in self.style["textFillLimits"] if len(labels) >= n),
                default=math.inf,
            )
            placed = []
            for x, value in zip(xs[inside].tolist(), values[inside].tolist(), strict=True):
                w, h, static = self._text(self.tickStrings([value], 1.0, spacing)[0])
                placed.append((x, w, h, static))
                filled += w
                if i > 0 and filled / length >= limit:
                    break
            if i > 0 and filled / length >= limit:
                break
            tallest = max(tallest, *(h for _, _, h, _ in placed))
            for x, w, h, static in placed:
                rect = QtCore.QRectF(x - w / 2.0, top + offset, w, h)
                if clip & rect == rect:
                    labels.append((rect.topLeft(), static))
        self._updateMaxTextSize(tallest)
        return labels


class LaneHeaderAxis(pg.AxisItem):
    """Lane names on the left, aligned with the lanes; clicking a group header collapses it."""

    WIDTH = 150

    def __init__(
        self, on_toggle: Callable[[LaneGroup], None], on_scroll: Callable[[float], None]
    ) -> None:
        super().__init__("left")
        self.enableAutoSIPrefix(False)  # no values to scale: spare a label relayout per pan
        self.setWidth(self.WIDTH)
        # The names change only with the lanes or a vertical scroll (both call update()): a
        # horizontal pan blits the cached pixmap instead of drawing every name (0.4 ms of a
        # 6 ms frame).
        self.setCacheMode(QtWidgets.QGraphicsItem.CacheMode.DeviceCoordinateCache)
        self.lanes: SessionLanes | None = None
        self.theme: Theme | None = None
        self._on_toggle = on_toggle
        self._on_scroll = on_scroll

    def set_lanes(self, lanes: SessionLanes | None, theme: Theme) -> None:
        self.lanes, self.theme = lanes, theme
        self.update()

    def tickValues(self, minVal: float, maxVal: float, size: float) -> list:
        return []

    def _y_map(self) -> Callable[[float], float]:
        """View y -> item y (an offset and a scale: lanes keep their pixel height)."""
        view = self.linkedView()
        y0, y1 = (
            self.mapFromScene(view.mapViewToScene(QtCore.QPointF(0.0, y))).y() for y in (0.0, 1.0)
        )
        return lambda y_view: y0 + (y1 - y0) * y_view

    def _y_view(self, y_item: float) -> float:
        view = self.linkedView()
        return view.mapSceneToView(self.mapToScene(QtCore.QPointF(0.0, y_item))).y()

    def paint(self, painter: QtGui.QPainter, *args) -> None:
        if self.lanes is None or self.theme is None or self.linkedView() is None:
            return
        theme = self.theme
        width = self.width()
        y_of = self._y_map()
        painter.setClipRect(self.boundingRect())
        font = painter.font()
        bold = QtGui.QFont(font)
        bold.setBold(True)
        for group in self.lanes.groups:
            top = y_of(group.top)
            painter.fillRect(QtCore.QRectF(0, top, width, GROUP_HEADER), theme.band)
            painter.setFont(bold)
            painter.setPen(theme.foreground)
            arrow = "\u25b8" if group.collapsed else "\u25be"
            painter.drawText(
                QtCore.QRectF(4, top, width - 8, GROUP_HEADER),
                QtCore.Qt.AlignmentFlag.AlignVCenter,
                f"{arrow} {group.name}",
            )
            painter.setFont(font)
            if group.collapsed:
                continue
            if isinstance(group.lanes, Rows):  # rows of one kind: one label for them all
                rows = group.lanes
                top, bottom = y_of(rows.top), y_of(rows.bottom)
                text = f"{rows.name} ({len(rows)} rows)" if len(rows) > 1 else rows.name
                painter.drawText(
                    QtCore.QRectF(14, top, width - 18, max(bottom - top, 14)),
                    QtCore.Qt.AlignmentFlag.AlignVCenter,
                    text,
                )
                continue
            for lane in group.lanes:
                rect = QtCore.QRectF(14, y_of(lane.top), width - 18, lane.height)
                painter.drawText(rect, QtCore.Qt.AlignmentFlag.AlignVCenter, lane.name)
        painter.setPen(theme.separator)
        painter.drawLine(QtCore.QPointF(width - 1, 0), QtCore.QPointF(width - 1, self.height()))

    def mouseClickEvent(self, ev) -> None:
        if self.lanes is None or ev.button() != QtCore.Qt.MouseButton.LeftButton:
            return
        group = self.lanes.group_at(self._y_view(ev.pos().y()))
        if group is not None:
            ev.accept()
            self._on_toggle(group)

    def mouseDragEvent(self, ev) -> None:
        ev.ignore()

    def wheelEvent(self, ev) -> None:
        self._on_scroll(-ev.delta() / 4.0)
        ev.accept()

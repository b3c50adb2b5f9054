"""Axes of the timeline: time in seconds / milliseconds, and the lane headers on the left."""

from __future__ import annotations

import math
from collections.abc import Callable

import pyqtgraph as pg
from PySide6 import QtCore, QtGui

from viewer.ui.lane_data import GROUP_HEADER, LaneGroup, SessionLanes
from viewer.ui.palette import Theme

#: Below this visible span the axis counts milliseconds instead of seconds.
MS_MODE_SPAN = 2000.0
#: Absolute millisecond labels stay short below this offset; beyond it they count from an origin.
MS_ABSOLUTE_LIMIT = 1e6


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


class TimeAxisItem(pg.AxisItem):
    """Bottom axis over milliseconds, labelled in units that suit the zoom."""

    def __init__(self) -> None:
        super().__init__("bottom")
        self.enableAutoSIPrefix(False)
        self._origin: float | None = None

    def update_label(self) -> None:
        lo, hi = self.range
        origin = ms_origin(lo, hi - lo)
        if origin != self._origin or not self.labelText:
            self._origin = origin
            if origin is None:
                self.setLabel("time since daemon start")
            else:
                self.setLabel("ms after " + format_ms(origin, 1000.0, MS_MODE_SPAN, None))

    def tickStrings(self, values: list[float], scale: float, spacing: float) -> list[str]:
        lo, hi = self.range
        span = hi - lo
        origin = ms_origin(lo, span)
        return [format_ms(v, spacing, span, origin) for v in values]


class LaneHeaderAxis(pg.AxisItem):
    """Lane names on the left, aligned with the lanes; clicking a group header collapses it."""

    WIDTH = 150

    def __init__(
        self, on_toggle: Callable[[LaneGroup], None], on_scroll: Callable[[float], None]
    ) -> None:
        super().__init__("left")
        self.setWidth(self.WIDTH)
        self.lanes: SessionLanes | None = None
        self.theme: Theme | None = None
        self._on_toggle = on_toggle
        self._on_scroll = on_scroll

    def set_lanes(self, lanes: SessionLanes | None, theme: Theme) -> None:
        self.lanes, self.theme = lanes, theme
        self.update()

    def tickValues(self, minVal: float, maxVal: float, size: float) -> list:
        return []

    def _y(self, y_view: float) -> float:
        view = self.linkedView()
        return self.mapFromScene(view.mapViewToScene(QtCore.QPointF(0.0, y_view))).y()

    def _y_view(self, y_item: float) -> float:
        view = self.linkedView()
        return view.mapSceneToView(self.mapToScene(QtCore.QPointF(0.0, y_item))).y()

    def paint(self, painter: QtGui.QPainter, *args) -> None:
        if self.lanes is None or self.theme is None or self.linkedView() is None:
            return
        theme = self.theme
        width = self.width()
        painter.setClipRect(self.boundingRect())
        font = painter.font()
        bold = QtGui.QFont(font)
        bold.setBold(True)
        for group in self.lanes.groups:
            top = self._y(group.top)
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
            synth = [lane for lane in group.lanes if lane.kind == "synth"]
            for lane in group.lanes:
                if lane.kind == "synth":
                    continue
                rect = QtCore.QRectF(14, self._y(lane.top), width - 18, lane.height)
                painter.drawText(rect, QtCore.Qt.AlignmentFlag.AlignVCenter, lane.name)
            if synth:
                top, bottom = self._y(synth[0].top), self._y(synth[-1].top + synth[-1].height)
                text = f"synthesis ({len(synth)} rows)" if len(synth) > 1 else "synthesis"
                painter.drawText(
                    QtCore.QRectF(14, top, width - 18, max(bottom - top, 14)),
                    QtCore.Qt.AlignmentFlag.AlignVCenter,
                    text,
                )
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

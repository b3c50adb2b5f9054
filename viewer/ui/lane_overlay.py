"""Highlights over the lanes: cold-start regions and sector-transition markers with labels.

Markers are thinned to at most one per pixel and labels are placed greedily
left to right so they never overlap; both are prepared with the view range,
and ``paint`` only draws.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui

from viewer.ui.lane_data import SessionLanes
from viewer.ui.palette import Theme

LABEL_GAP_PX = 10.0


def transition_label(gap_ms: float, overlap_ms: float) -> str:
    return f"gap {gap_ms:.0f} ms \u00b7 overlap {overlap_ms:.0f} ms"


class OverlayItem(pg.GraphicsObject):
    """Cold-start shading and transition markers of one session, above the lanes."""

    def __init__(self, lanes: SessionLanes, theme: Theme) -> None:
        super().__init__()
        self.lanes = lanes
        self.theme = theme
        self._times = lanes.transitions["time"].to_numpy(dtype=np.float64, copy=True)
        self._texts = [
            transition_label(g, o)
            for g, o in zip(
                lanes.transitions["gap_ms"], lanes.transitions["overlap_ms"], strict=True
            )
        ]
        self._shades: list[QtCore.QRectF] = []
        self._lines: list[QtCore.QLineF] = []
        self._labels: list[tuple[QtCore.QPointF, str, bool]] = []  # anchor, text, cold
        self._bounds = QtCore.QRectF()
        self._font = QtGui.QFont()
        self._metrics = QtGui.QFontMetricsF(self._font)

    def set_theme(self, theme: Theme) -> None:
        self.theme = theme
        self.update()

    def _gpu_span(self, gpu: int) -> tuple[float, float]:
        for group in self.lanes.groups:
            lanes = [lane for lane in group.lanes if lane.gpu == gpu]
            if lanes:
                return group.top, group.bottom
        return 0.0, self.lanes.height

    def prepare(self, x0: float, x1: float, px: float, y_top: float) -> None:
        """Shapes for the view [x0, x1] ms (``px`` ms per pixel) whose top edge is ``y_top``."""
        height = self.lanes.height
        cold = self.lanes.cold
        self._shades = []
        candidates: list[tuple[float, float, str, bool]] = []  # x, width ms, text, cold
        for gpu, s, e, label in zip(
            cold["gpu"], cold["start"], cold["end"], cold["label"], strict=True
        ):
            if e <= x0 or s >= x1 or e <= s:
                continue
            top, bottom = self._gpu_span(int(gpu))
            self._shades.append(QtCore.QRectF(s, top, e - s, bottom - top))
            text = str(label)
            width = (self._metrics.horizontalAdvance(text) + 8) * px
            if e - max(s, x0) >= width:
                candidates.append((max(s, x0), width, text, True))
        lo, hi = np.searchsorted(self._times, [x0, x1])
        idx = np.arange(lo, hi)
        if len(idx) and px > 0:
            # One marker per pixel column: keep the first transition in each.
            column = np.floor((self._times[idx] - x0) / px)
            idx = idx[np.r_[True, column[1:] != column[:-1]]]
        self._lines = [QtCore.QLineF(t, y_top, t, height) for t in self._times[idx].tolist()]
        # Labels only where they can be read: thin to one candidate per ~60 px first.
        if len(idx) and px > 0:
            column = np.floor((self._times[idx] - x0) / (60.0 * px))
            idx = idx[np.r_[True, column[1:] != column[:-1]]]
        for i in idx.tolist():
            text = self._texts[i]
            candidates.append(
                (self._times[i], (self._metrics.horizontalAdvance(text) + 8) * px, text, False)
            )
        candidates.sort(key=lambda c: c[0])
        self._labels = []
        right = -np.inf
        for x, width, text, is_cold in candidates:
            if x < right:
                continue
            self._labels.append((QtCore.QPointF(x, y_top), text, is_cold))
            right = x + width + LABEL_GAP_PX * px
        rect = QtCore.QRectF(
            min(self.lanes.x_min, x0),
            0.0,
            max(self.lanes.x_max, x1) - min(self.lanes.x_min, x0),
            height,
        )
        if rect != self._bounds:
            self.prepareGeometryChange()
            self._bounds = rect
        self.update()

    def boundingRect(self) -> QtCore.QRectF:
        return QtCore.QRectF(self._bounds)

    def paint(self, painter: QtGui.QPainter, *args) -> None:
        theme = self.theme
        painter.setRenderHint(QtGui.QPainter.RenderHint.Antialiasing, False)
        painter.setPen(QtCore.Qt.PenStyle.NoPen)
        painter.setBrush(theme.cold)
        painter.drawRects(self._shades)
        pen = QtGui.QPen(theme.marker, 1.0, QtCore.Qt.PenStyle.DashLine)
        pen.setCosmetic(True)
        painter.setPen(pen)
        painter.drawLines(self._lines)
        if not self._labels:
            return
        transform = painter.transform()
        painter.save()
        painter.resetTransform()
        painter.setFont(self._font)
        height = self._metrics.height()
        for anchor, text, is_cold in self._labels:
            at = transform.map(anchor)
            width = self._metrics.horizontalAdvance(text) + 6
            box = QtCore.QRectF(at.x() + (2 if is_cold else 3), at.y() + 2, width, height + 2)
            painter.fillRect(box, theme.label_bg)
            painter.setPen(theme.foreground)
            painter.drawText(box, QtCore.Qt.AlignmentFlag.AlignCenter, text)
        painter.restore()

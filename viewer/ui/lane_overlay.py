"""Highlights over the lanes: cold-start regions and sector-transition markers with labels.

Markers are thinned to at most one per pixel and labels are placed greedily
left to right so they never overlap; both are prepared with the view range,
and ``paint`` only draws.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
import shiboken6
from PySide6 import QtCore, QtGui

from viewer.ui.lane_data import SessionLanes
from viewer.ui.palette import Theme, with_alpha

LABEL_GAP_PX = 10.0
LABEL_ROWS = 2  # labels too close for one row go to the second
MARKER_SPACING_PX = 4.0
DASHED_MAX = 200  # beyond this many markers, solid faint lines (dashes are slow)


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
        self._lines = np.zeros((0, 4))  # x1, y1, x2, y2 per marker, laid out like QLineF
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
            same = any(c[2] == text and abs(c[0] - max(s, x0)) < width for c in candidates)
            if e - max(s, x0) >= width and not same:
                candidates.append((max(s, x0), width, text, True))
        lo, hi = np.searchsorted(self._times, [x0, x1])
        idx = np.arange(lo, hi)
        if len(idx) and px > 0:
            # At most one marker per few pixels: denser ones would only grey the view out.
            column = np.floor((self._times[idx] - x0) / (MARKER_SPACING_PX * px))
            idx = idx[np.r_[True, column[1:] != column[:-1]]]
        lines = np.empty((len(idx), 4))
        lines[:, 0] = lines[:, 2] = self._times[idx]
        lines[:, 1], lines[:, 3] = y_top, height
        self._lines = lines
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
        right = [-np.inf] * LABEL_ROWS
        line = self._metrics.height() + 1
        for x, width, text, is_cold in candidates:
            row = next((r for r in range(LABEL_ROWS) if x >= right[r]), None)
            if row is None:
                continue
            self._labels.append((QtCore.QPointF(x, y_top + row * line), text, is_cold))
            right[row] = x + width + LABEL_GAP_PX * px
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

    def _paint_cold(self, painter: QtGui.QPainter) -> None:
        """Cold-start regions: a light wash with a hatch, in device space so the hatch stays put."""
        transform = painter.transform()
        painter.save()
        painter.resetTransform()
        hatch = QtGui.QBrush(self.theme.cold_hatch, QtCore.Qt.BrushStyle.FDiagPattern)
        for rect in self._shades:
            dev = transform.mapRect(rect)
            painter.fillRect(dev, self.theme.cold)
            painter.fillRect(dev, hatch)
        painter.restore()

    def boundingRect(self) -> QtCore.QRectF:
        return QtCore.QRectF(self._bounds)

    def paint(self, painter: QtGui.QPainter, *args) -> None:
        theme = self.theme
        painter.setRenderHint(QtGui.QPainter.RenderHint.Antialiasing, False)
        painter.setPen(QtCore.Qt.PenStyle.NoPen)
        if self._shades:
            self._paint_cold(painter)
        dense = len(self._lines) > DASHED_MAX
        pen = QtGui.QPen(
            with_alpha(theme.marker, 0.35) if dense else theme.marker,
            1.0,
            QtCore.Qt.PenStyle.SolidLine if dense else QtCore.Qt.PenStyle.DashLine,
        )
        pen.setCosmetic(True)
        painter.setPen(pen)
        if len(self._lines):
            first = shiboken6.wrapInstance(self._lines.ctypes.data, QtCore.QLineF)
            painter.drawLines(first, len(self._lines))
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
            box = QtCore.QRectF(at.x() + (2 if is_cold else 3), at.y() + 1, width, height)
            painter.fillRect(box, theme.label_bg)
            painter.setPen(theme.foreground)
            painter.drawText(box, QtCore.Qt.AlignmentFlag.AlignCenter, text)
        painter.restore()

"""Highlights over the lanes: cold-start regions and sector-transition markers with labels.

Markers are thinned to at most one per pixel and labels are placed greedily
left to right so they never overlap; both are prepared with the view range,
and ``paint`` only draws.
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
import shiboken6
from PySide6 import QtCore, QtGui

from viewer.analysis.transitions import is_interleaved
from viewer.lanes.data import Rows, SessionLanes
from viewer.ui.palette import Theme, with_alpha

LABEL_GAP_PX = 10.0
LABEL_ROWS = 2  # labels too close for one row go to the second
MARKER_SPACING_PX = 4.0
DASHED_MAX = 200  # beyond this many markers, solid faint lines (dashes are slow)
TEXT_CACHE = 4096  # labels kept laid out
MAX_COLUMNS = 1 << 16  # marker columns per view, at most (views are a few thousand px wide)
LABEL_SPACING_PX = 60.0  # one label candidate per this many pixels


def transition_label(gap_ms: float, overlap_ms: float, idle_ms: float | None = None) -> str:
    """ "gap 4490 ms · overlap 761 ms"; for an interleaved transition (``idle_ms``: the
    worker's own idle, ``transitions.interleaved``) "interleaved · idle 12 ms · overlap
    761 ms": a "gap" over a busy worker read as idle time."""
    if idle_ms is not None:
        return f"interleaved \u00b7 idle {idle_ms:.0f} ms \u00b7 overlap {overlap_ms:.0f} ms"
    return f"gap {gap_ms:.0f} ms \u00b7 overlap {overlap_ms:.0f} ms"


def first_per_column(times: np.ndarray, x0: float, x1: float, step: float) -> np.ndarray:
    """Positions in sorted ``times`` of the first time in [x0, x1) of each column
    [k * step, (k + 1) * step): one binary search per column, however many times the
    view holds.  Columns are fixed in time, so a pan keeps the same picks."""
    if x1 <= x0 or step <= 0:
        return np.zeros(0, np.int64)
    step = max(step, (x1 - x0) / MAX_COLUMNS)
    k0 = math.floor(x0 / step)
    columns = max(math.ceil(x1 / step) - k0, 1)
    edges = times.searchsorted((k0 + np.arange(columns + 1)) * step)
    edges[0], edges[-1] = times.searchsorted([x0, x1])
    first = edges[:-1]
    return first[first < edges[1:]]


def device_lines(transform: QtGui.QTransform, lines: np.ndarray) -> np.ndarray:
    """``lines`` (x1, y1, x2, y2 rows, laid out like QLineF) mapped by the affine
    ``transform`` to device pixels, as a new contiguous array."""
    out = np.empty_like(lines, dtype=np.float64)
    m11, m12, m21, m22 = transform.m11(), transform.m12(), transform.m21(), transform.m22()
    dx, dy = transform.dx(), transform.dy()
    for x, y in ((0, 1), (2, 3)):
        out[:, x] = lines[:, x] * m11 + lines[:, y] * m21 + dx
        out[:, y] = lines[:, x] * m12 + lines[:, y] * m22 + dy
    return out


class OverlayItem(pg.GraphicsObject):
    """Cold-start shading and transition markers of one session, above the lanes."""

    def __init__(self, lanes: SessionLanes, theme: Theme) -> None:
        super().__init__()
        self.lanes = lanes
        self.theme = theme
        trans = lanes.transitions
        self._times = trans["time"].astype(np.float64, copy=False)
        self._gap_ms = trans["gap_ms"].astype(np.float64, copy=False)
        self._overlap_ms = trans["overlap_ms"].astype(np.float64, copy=False)
        self._idle_ms = trans["worker_idle_ms"].astype(np.float64, copy=False)
        cold = lanes.cold
        self._cold = list(
            zip(
                cold["gpu"].astype(int).tolist(),
                cold["start"].tolist(),
                cold["end"].tolist(),
                [str(label) for label in cold["label"]],
                strict=True,
            )
        )
        self._shades: list[QtCore.QRectF] = []
        self._lines = np.zeros((0, 4))  # x1, y1, x2, y2 per marker, laid out like QLineF
        # anchor, text laid out, its width in pixels, cold
        self._labels: list[tuple[QtCore.QPointF, QtGui.QStaticText, float, bool]] = []
        self._widths: dict[str, float] = {}
        self._texts: dict[str, QtGui.QStaticText] = {}
        self._bounds = QtCore.QRectF()
        self._font = QtGui.QFont()
        self._metrics = QtGui.QFontMetricsF(self._font)

    def set_theme(self, theme: Theme) -> None:
        self.theme = theme
        self.update()

    def _gpu_span(self, gpu: int) -> tuple[float, float]:
        for group in self.lanes.groups:
            if isinstance(group.lanes, Rows):
                continue  # rows of synthesis: no GPU's
            if any(lane.gpu == gpu for lane in group.lanes):
                return group.top, group.bottom
        return 0.0, self.lanes.height

    def _width(self, text: str) -> float:
        """Width of ``text`` in pixels (measured once)."""
        width = self._widths.get(text)
        if width is None:
            if len(self._widths) >= TEXT_CACHE:
                self._widths.clear()
                self._texts.clear()
            width = self._widths[text] = self._metrics.horizontalAdvance(text)
        return width

    def _static(self, text: str) -> QtGui.QStaticText:
        """``text`` laid out once, for labels that are drawn (drawStaticText is fast)."""
        static = self._texts.get(text)
        if static is None:
            static = self._texts[text] = QtGui.QStaticText(text)
            static.setTextFormat(QtCore.Qt.TextFormat.PlainText)
            static.prepare(QtGui.QTransform(), self._font)
        return static

    def prepare(self, x0: float, x1: float, px: float, y_top: float) -> None:
        """Shapes for the view [x0, x1] ms (``px`` ms per pixel) whose top edge is ``y_top``."""
        height = self.lanes.height
        self._shades = []
        candidates: list[tuple[float, float, str, bool]] = []  # x, width ms, text, cold
        for gpu, s, e, text in self._cold:
            if e <= x0 or s >= x1 or e <= s:
                continue
            top, bottom = self._gpu_span(gpu)
            self._shades.append(QtCore.QRectF(s, top, e - s, bottom - top))
            width = (self._width(text) + 8) * px
            same = any(c[2] == text and abs(c[0] - max(s, x0)) < width for c in candidates)
            if e - max(s, x0) >= width and not same:
                candidates.append((max(s, x0), width, text, True))
        if px > 0:
            # At most one marker per few pixels: denser ones would only grey the view out.
            idx = first_per_column(self._times, x0, x1, MARKER_SPACING_PX * px)
        else:
            lo, hi = np.searchsorted(self._times, [x0, x1])
            idx = np.arange(lo, hi)
        xs = self._times[idx]
        lines = np.empty((len(idx), 4))
        lines[:, 0] = lines[:, 2] = xs
        lines[:, 1], lines[:, 3] = y_top, height
        self._lines = lines
        # Labels only where they can be read: thin to one candidate per ~60 px first.
        if len(idx) and px > 0:
            column = np.floor(xs / (LABEL_SPACING_PX * px))
            idx = idx[np.r_[True, column[1:] != column[:-1]]]
        for i in idx.tolist():
            gap, idle = self._gap_ms[i], self._idle_ms[i]
            # The worker's own idle where the gap is none (sectors interleave).
            shown = idle if is_interleaved(gap, idle) else None
            text = transition_label(gap, self._overlap_ms[i], shown)
            width = (self._width(text) + 8) * px
            x = float(self._times[i])
            if x + width > x1:  # cut by the right edge: written to the left of its marker
                x = max(x - width, x0)
            candidates.append((x, width, text, False))
        candidates.sort(key=lambda c: c[0])
        self._labels = []
        right = [-np.inf] * LABEL_ROWS
        line = self._metrics.height() + 1
        for x, width, text, is_cold in candidates:
            row = next((r for r in range(LABEL_ROWS) if x >= right[r]), None)
            if row is None:
                continue
            anchor = QtCore.QPointF(x, y_top + row * line)
            self._labels.append((anchor, self._static(text), self._width(text), is_cold))
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
        transform = painter.transform()
        if len(self._lines):
            # Drawn in device pixels with a plain 1 px pen, not as a cosmetic pen in
            # ms-scaled coordinates: an SVG viewer without non-scaling strokes (librsvg)
            # scaled that pen by the ms-to-pixel factor, to nothing.
            lines = device_lines(transform, self._lines)
            painter.save()
            painter.resetTransform()
            painter.setPen(pen)
            first = shiboken6.wrapInstance(lines.ctypes.data, QtCore.QLineF)
            painter.drawLines(first, len(lines))
            painter.restore()
        if not self._labels:
            return
        painter.save()
        painter.resetTransform()
        painter.setFont(self._font)
        painter.setPen(theme.foreground)
        height = self._metrics.height()
        for anchor, text, width, is_cold in self._labels:
            at = transform.map(anchor)
            box = QtCore.QRectF(at.x() + (2 if is_cold else 3), at.y() + 1, width + 6, height)
            painter.fillRect(box, theme.label_bg)
            painter.drawStaticText(box.topLeft() + QtCore.QPointF(3, 0), text)
        painter.restore()

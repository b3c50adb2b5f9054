"""The drawing item of one lane group: every bar of every lane in one ``pg.GraphicsObject``.

``prepare`` (on data, range or size changes) cuts each lane's sorted intervals
to the view, merges what is narrower than a pixel and packs the rectangles,
grouped by colour, into one float64 (n, 4) buffer laid out like ``QRectF``;
``paint`` then issues one ``QPainter.drawRects`` per colour straight from that
buffer.  The few open intervals are hatched in device space.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pyqtgraph as pg
import shiboken6
from PySide6 import QtCore, QtGui

from viewer.ui.lane_data import GAP_DISPATCH_CROSS, Lane, LaneGroup
from viewer.ui.lane_lod import coalesce
from viewer.ui.palette import JOB_COLORS, Theme, with_alpha


@dataclass(frozen=True)
class LayerStyle:
    """How one layer of a lane is drawn: vertical band (fractions of the lane) and colour."""

    layer: str
    y0: float
    y1: float
    color: Callable[[Theme, int], QtGui.QColor]
    mixed_max: bool = False
    separate: bool = False  # leave a pixel between wide neighbours (partition boundaries)
    by_job: bool = True  # keys are jobs: colours cycle through the job palette
    narrow_px: float = 1.0  # narrower pieces merge with their neighbours
    detail: bool = False  # drawn only where its typical interval spans DETAIL_PX pixels

    def colour_slots(self, key: np.ndarray) -> np.ndarray:
        """Keys that share a colour map to one slot, so each colour is one drawRects call."""
        if not self.by_job:
            return key
        return np.where(key < 0, key, key % len(JOB_COLORS))


def _job(theme: Theme, key: int) -> QtGui.QColor:
    return theme.job(key)


def _wait(theme: Theme, key: int) -> QtGui.QColor:
    return theme.wait


def _queue(theme: Theme, key: int) -> QtGui.QColor:
    return with_alpha(theme.job(key), 0.75)


#: Bars of sectors narrower than this many pixels merge (one sliver of colour says little).
BAR_NARROW_PX = 3.0
DETAIL_PX = 3.0

#: Layers per lane kind, in drawing order.
STYLES: dict[str, tuple[LayerStyle, ...]] = {
    "worker": (
        LayerStyle("pickup", 0.42, 0.58, _wait, by_job=False, detail=True),
        LayerStyle("bar", 0.0, 1.0, _job, separate=True, narrow_px=BAR_NARROW_PX),
        LayerStyle("kernel", 0.22, 0.78, Theme.kernel, narrow_px=BAR_NARROW_PX, detail=True),
    ),
    "busy": (
        LayerStyle("busy", 0.15, 0.85, lambda t, k: t.busy, by_job=False),
        LayerStyle("gap", 0.0, 1.0, lambda t, k: t.gap[k], mixed_max=True, by_job=False),
    ),
    "synth": (
        LayerStyle("queue", 0.35, 0.65, _queue, narrow_px=BAR_NARROW_PX, detail=True),
        LayerStyle("synth", 0.0, 1.0, _job, separate=True, narrow_px=BAR_NARROW_PX),
    ),
}
OPEN_LAYER = "open"


class RectBatch:
    """Rectangles grouped by colour in one contiguous (n, 4) x, y, w, h buffer."""

    def __init__(self) -> None:
        self.buffer = np.zeros((0, 4))
        self.runs: list[tuple[QtGui.QBrush, int, int]] = []  # brush, first, count
        self._parts: list[np.ndarray] = []
        self._size = 0

    def add(
        self,
        x: np.ndarray,
        w: np.ndarray,
        y: float | np.ndarray,
        h: float | np.ndarray,
        brush: QtGui.QBrush,
    ) -> None:
        if not len(x):
            return
        part = np.empty((len(x), 4))
        part[:, 0], part[:, 1], part[:, 2], part[:, 3] = x, y, w, h
        self._parts.append(part)
        self.runs.append((brush, self._size, len(x)))
        self._size += len(x)

    def finish(self) -> None:
        self.buffer = (
            np.ascontiguousarray(np.concatenate(self._parts)) if self._parts else (np.zeros((0, 4)))
        )
        self._parts = []

    def __len__(self) -> int:
        return self._size

    def draw(self, painter: QtGui.QPainter) -> None:
        base = self.buffer.ctypes.data
        stride = self.buffer.strides[0]
        for brush, first, count in self.runs:
            painter.setBrush(brush)
            painter.drawRects(shiboken6.wrapInstance(base + first * stride, QtCore.QRectF), count)


class LaneGroupItem(pg.GraphicsObject):
    """All lanes of one group (a GPU's workers and busy lane, or the synthesis rows)."""

    def __init__(self, group: LaneGroup, x_min: float, x_max: float, theme: Theme) -> None:
        super().__init__()
        self.group = group
        self.theme = theme
        self._x_min, self._x_max = x_min, x_max
        self._bounds = QtCore.QRectF()
        self._batch = RectBatch()
        self._open: list[tuple[QtCore.QRectF, QtGui.QColor]] = []
        self._outline: list[QtCore.QRectF] = []
        self._job: int | None = None
        self._view: tuple[float, float, float] | None = None
        self._brushes: dict[tuple[str, int], QtGui.QBrush] = {}
        self._update_bounds(0.0)

    # ------------------------------------------------------------- data
    def set_theme(self, theme: Theme) -> None:
        self.theme = theme
        self._brushes.clear()
        self._reprepare()

    def set_selected_job(self, job: int | None) -> None:
        self._job = job
        self._outline = []
        if job is not None:
            for lane in self._lanes():
                for layer in ("bar", "synth", OPEN_LAYER):
                    iv = lane.layers.get(layer)
                    if iv is None or not len(iv):
                        continue
                    hit = np.flatnonzero(iv.key == job)
                    for s, e in zip(iv.start[hit].tolist(), iv.end[hit].tolist(), strict=True):
                        self._outline.append(QtCore.QRectF(s, lane.top, e - s, lane.height))
        self.update()

    def relayout(self) -> None:
        """Lane positions changed (a group was collapsed)."""
        self._update_bounds(self._view[2] if self._view else 0.0)
        self.set_selected_job(self._job)
        self._reprepare()

    def _lanes(self) -> list[Lane]:
        return [] if self.group.collapsed else self.group.lanes

    def _brush(self, style: LayerStyle, key: int) -> QtGui.QBrush:
        brush = self._brushes.get((style.layer, key))
        if brush is None:
            brush = QtGui.QBrush(style.color(self.theme, key))
            self._brushes[(style.layer, key)] = brush
        return brush

    # ---------------------------------------------------------- prepare
    def _reprepare(self) -> None:
        if self._view is not None:
            self.prepare(*self._view)

    def prepare(self, x0: float, x1: float, px: float) -> None:
        """Rectangles for the view [x0, x1] ms where one pixel is ``px`` ms."""
        self._view = (x0, x1, px)
        batch = RectBatch()
        self._open = []
        lanes = self._lanes()
        if lanes:
            self._prepare_cross_bands(batch, lanes, x0, x1, px)
        for kind, styles in STYLES.items():
            kind_lanes = [lane for lane in lanes if lane.kind == kind]
            for style in styles:
                self._prepare_layer(batch, kind_lanes, style, x0, x1, px)
        for lane in lanes:
            iv = lane.layers.get(OPEN_LAYER)
            if iv is None or not len(iv):
                continue
            sl = iv.visible(x0, x1)
            for s, e, k in zip(iv.start[sl], iv.end[sl], iv.key[sl], strict=True):
                rect = QtCore.QRectF(float(s), lane.top, max(float(e - s), px), lane.height)
                self._open.append((rect, self.theme.job(int(k))))
        batch.finish()
        self._batch = batch
        self._update_bounds(px)
        self.update()

    def _prepare_layer(
        self,
        batch: RectBatch,
        lanes: list[Lane],
        style: LayerStyle,
        x0: float,
        x1: float,
        px: float,
    ) -> None:
        xs, ws, ys, hs, ks = [], [], [], [], []
        for lane in lanes:
            iv = lane.layers.get(style.layer)
            if iv is None or not len(iv) or (style.detail and iv.typical_length() < DETAIL_PX * px):
                continue
            s, e, k = iv.drawable(x0, x1, px, style.mixed_max, style.narrow_px)
            y = lane.top + style.y0 * lane.height
            w = e - s
            if style.separate:
                w = np.where(w >= 3 * px, w - px, w)
            xs.append(s)
            ws.append(w)
            ys.append(np.full(len(s), y))
            hs.append(np.full(len(s), (style.y1 - style.y0) * lane.height))
            ks.append(k)
        if not xs:
            return
        x, w, y, h, k = (np.concatenate(a) for a in (xs, ws, ys, hs, ks))
        keys, inverse = np.unique(style.colour_slots(k), return_inverse=True)
        order = np.argsort(inverse, kind="stable")
        bounds = np.searchsorted(inverse[order], np.arange(len(keys) + 1))
        for i, key in enumerate(keys.tolist()):
            part = order[bounds[i] : bounds[i + 1]]
            batch.add(x[part], w[part], y[part], h[part], self._brush(style, key))

    def _prepare_cross_bands(
        self, batch: RectBatch, lanes: list[Lane], x0: float, x1: float, px: float
    ) -> None:
        """Cross-sector gaps seen through the worker lanes above the busy lane."""
        busy = [lane for lane in lanes if lane.kind == "busy"]
        if not busy:
            return
        iv = busy[0].layers["gap"]
        sl = iv.visible(x0, x1)
        cross = iv.key[sl] >= GAP_DISPATCH_CROSS
        s, e, _ = coalesce(iv.start[sl][cross], iv.end[sl][cross], iv.key[sl][cross], px)
        top = lanes[0].top
        batch.add(s, e - s, top, busy[0].top - top, QtGui.QBrush(self.theme.cross_band))

    def _update_bounds(self, px: float) -> None:
        pad = max(px, 0.0)
        rect = QtCore.QRectF(
            self._x_min - pad,
            self.group.top,
            self._x_max - self._x_min + 2 * pad,
            max(self.group.bottom - self.group.top, 1.0),
        )
        if rect != self._bounds:
            self.prepareGeometryChange()
            self._bounds = rect

    # ------------------------------------------------------------ paint
    def boundingRect(self) -> QtCore.QRectF:
        return QtCore.QRectF(self._bounds)

    def rect_count(self) -> int:
        return len(self._batch)

    def paint(self, painter: QtGui.QPainter, *args) -> None:
        painter.setRenderHint(QtGui.QPainter.RenderHint.Antialiasing, False)
        painter.setPen(QtCore.Qt.PenStyle.NoPen)
        self._batch.draw(painter)
        if self._open:
            self._paint_open(painter)
        if self._outline:
            pen = QtGui.QPen(self.theme.highlight, 2.0)
            pen.setCosmetic(True)
            painter.setPen(pen)
            painter.setBrush(QtCore.Qt.BrushStyle.NoBrush)
            painter.drawRects(self._outline)

    def _paint_open(self, painter: QtGui.QPainter) -> None:
        """Open intervals (no GPU_END / SYNTH_END): fading to the session end, hatched."""
        transform = painter.transform()
        painter.save()
        painter.resetTransform()
        for rect, color in self._open:
            dev = transform.mapRect(rect)
            fade = QtGui.QLinearGradient(dev.left(), 0, dev.right(), 0)
            fade.setColorAt(0.0, color)
            fade.setColorAt(1.0, with_alpha(color, 0.1))
            painter.fillRect(dev, QtGui.QBrush(fade))
            painter.fillRect(
                dev, QtGui.QBrush(self.theme.foreground, QtCore.Qt.BrushStyle.BDiagPattern)
            )
        painter.restore()

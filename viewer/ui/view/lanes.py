"""The drawing item of one lane group: every bar of every lane in one ``pg.GraphicsObject``.

``prepare`` (on data, range or size changes) takes each layer of all lanes at
once from its ``Stack`` (cut to the view, merged below a pixel, from the merged
copy of the zoom level) and packs the rectangles, grouped by colour, into one
float64 (n, 4) buffer laid out like ``QRectF``; ``paint`` then issues one
``QPainter.drawRects`` per colour straight from that buffer.  The few open
intervals are hatched in device space.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pyqtgraph as pg
import shiboken6
from PySide6 import QtCore, QtGui

from viewer.analysis.units import duration
from viewer.lanes.data import (
    KERNEL_PARTS,
    KernelParts,
    Lane,
    LaneGroup,
    LayerStack,
    Rows,
    bands,
)
from viewer.lanes.lod import drawable, positions
from viewer.ui.palette import JOB_COLORS, Theme, with_alpha


@dataclass(frozen=True)
class LayerStyle:
    """How one layer of a lane is drawn: vertical band (fractions of the lane) and colour."""

    layer: str
    y0: float
    y1: float
    color: Callable[[Theme, int], QtGui.QColor]
    separate: bool = False  # leave a pixel between wide neighbours (partition boundaries)
    slots: str = "job"  # colour by "job" (cycling palette), by "key" (gap kind) or "one"
    narrow_px: float = 1.0  # narrower pieces merge with their neighbours
    detail: bool = False  # drawn only where its typical interval spans DETAIL_PX pixels


def _job(theme: Theme, key: int) -> QtGui.QColor:
    return theme.job(key)


def _wait(theme: Theme, key: int) -> QtGui.QColor:
    return theme.wait


def _queue(theme: Theme, key: int) -> QtGui.QColor:
    return with_alpha(theme.job(key), 0.75)


#: Bars of sectors narrower than this many pixels merge (one sliver of colour says little).
BAR_NARROW_PX = 3.0
DETAIL_PX = 3.0
#: A lane's CUDA regions show their kernels (ntt_msm_h, batch_add, tail_msm) once a typical
#: region is this many pixels wide.
KERNEL_PARTS_PX = 60.0
#: The band of a worker lane the CUDA region (and its kernels) fills.
KERNEL_BAND = (0.22, 0.78)
#: Text colour on the kernel parts (pale fills).
PART_INK = "#1a1a1a"

#: Layers per lane kind, in drawing order.
STYLES: dict[str, tuple[LayerStyle, ...]] = {
    "worker": (
        LayerStyle("pickup", 0.42, 0.58, _wait, slots="one", detail=True),
        LayerStyle("bar", 0.0, 1.0, _job, separate=True, narrow_px=BAR_NARROW_PX),
        LayerStyle("kernel", *KERNEL_BAND, Theme.kernel, narrow_px=BAR_NARROW_PX, detail=True),
    ),
    "busy": (
        LayerStyle("busy", 0.15, 0.85, lambda t, k: t.busy, slots="one"),
        LayerStyle("gap", 0.0, 1.0, lambda t, k: t.gap[k], slots="key"),
    ),
    "synth": (
        LayerStyle("queue", 0.35, 0.65, _queue, narrow_px=BAR_NARROW_PX, detail=True),
        LayerStyle("synth", 0.0, 1.0, _job, separate=True, narrow_px=BAR_NARROW_PX),
    ),
}
#: Cross-sector gaps of the busy lane, seen through the worker lanes above it (drawn first).
CROSS_STYLE = LayerStyle("cross", 0.0, 1.0, lambda t, k: t.cross_band, slots="one")
OPEN_LAYER = "open"
#: Every style in drawing order; a rectangle's draw key is its style's position here.
DRAW_ORDER: tuple[LayerStyle, ...] = (CROSS_STYLE, *(s for ss in STYLES.values() for s in ss))
SLOT_SPAN = 64  # colour slots per style in a draw key (slots run from MIXED = -1 up)
#: Keys that share a colour share a slot, so each colour is one drawRects call.
SLOT_MODES = {"job": 0, "key": 1, "one": 2}


class RectBatch:
    """Rectangles grouped by colour in one contiguous (n, 4) x, y, w, h buffer."""

    def __init__(self, buffer: np.ndarray | None = None) -> None:
        self.buffer = np.zeros((0, 4)) if buffer is None else buffer
        self.runs: list[tuple[QtGui.QBrush, int, int]] = []  # brush, first, count

    def __len__(self) -> int:
        return len(self.buffer)

    def draw(self, painter: QtGui.QPainter) -> None:
        base = self.buffer.ctypes.data
        stride = self.buffer.strides[0]
        for brush, first, count in self.runs:
            painter.setBrush(brush)
            painter.drawRects(shiboken6.wrapInstance(base + first * stride, QtCore.QRectF), count)


class GroupItem(pg.GraphicsObject):
    """An item drawing one lane group: its bounds span the group's rows, tracked as the
    scene needs them (``prepareGeometryChange`` before they move)."""

    group: LaneGroup
    _bounds: QtCore.QRectF

    def _set_bounds(self, left: float, width: float) -> None:
        """Bounds from ``left``, ``width`` ms wide, over the group's rows."""
        rect = QtCore.QRectF(
            left, self.group.top, width, max(self.group.bottom - self.group.top, 1.0)
        )
        if rect != self._bounds:
            self.prepareGeometryChange()
            self._bounds = rect

    def boundingRect(self) -> QtCore.QRectF:
        return QtCore.QRectF(self._bounds)


class LaneGroupItem(GroupItem):
    """All lanes of one group (a GPU's workers and busy lane, or the synthesis rows)."""

    def __init__(
        self,
        group: LaneGroup,
        x_min: float,
        x_max: float,
        theme: Theme,
        kernel_parts: KernelParts | None = None,
    ) -> None:
        super().__init__()
        self.group = group
        self.theme = theme
        self._kernel_parts = kernel_parts
        self._parts = RectBatch()
        self._part_labels: list[tuple[QtCore.QRectF, QtGui.QStaticText, int]] = []
        self._texts: dict[str, QtGui.QStaticText] = {}
        self._font = QtGui.QFont()
        self._font.setPointSizeF(max(self._font.pointSizeF() * 0.8, 6.5))
        self._metrics = QtGui.QFontMetricsF(self._font)
        self._x_min, self._x_max = x_min, x_max
        self._bounds = QtCore.QRectF()
        self._batch = RectBatch()
        self._open: list[tuple[QtCore.QRectF, QtGui.QColor]] = []
        self._outline: list[QtCore.QRectF] = []
        self._job: int | None = None
        self._view: tuple[float, float, float] | None = None
        self._brushes: dict[tuple[str, int], QtGui.QBrush] = {}
        self._bands: dict[int, tuple[np.ndarray, np.ndarray]] = {}  # by draw order
        self._y_view: tuple[float, float] | None = None  # the view's y band (layout px)
        self._y_prepared = (0.0, 0.0)  # the y band of the rows prepared
        self._update_bounds(0.0)

    # ------------------------------------------------------------- data
    def set_theme(self, theme: Theme) -> None:
        self.theme = theme
        self._brushes.clear()
        self._reprepare()

    def set_selected_job(self, job: int | None) -> None:
        self._job = job
        self._outline = []
        stacks = self.group.stacks() if job is not None and self._lanes() else {}
        for layer in ("bar", "synth", OPEN_LAYER):
            stack = stacks.get(layer)
            if stack is None or not len(stack.data):
                continue
            data = stack.data.level(0)
            hit = np.flatnonzero(data.key == job)
            lanes = np.searchsorted(data.bounds, hit, side="right") - 1
            starts, ends = data.starts(hit).tolist(), data.ends(hit).tolist()
            for s, e, i in zip(starts, ends, lanes.tolist(), strict=True):
                lane = stack.lanes[i]
                self._outline.append(QtCore.QRectF(s, lane.top, e - s, lane.height))
        self.update()

    def relayout(self) -> None:
        """Lane positions changed (a group was collapsed)."""
        self._bands.clear()
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

    def prepare(
        self, x0: float, x1: float, px: float, y_view: tuple[float, float] | None = None
    ) -> None:
        """Rectangles for the view [x0, x1] ms where one pixel is ``px`` ms (and, given,
        ``y_view`` its y band: the rows of a group of ``Rows`` near it; else all)."""
        self._view = (x0, x1, px)
        if y_view is not None:
            self._y_view = y_view
        self._open = []
        self._batch = RectBatch()
        self._parts, self._part_labels = RectBatch(), []
        if self._lanes():
            stacks = self.group.stacks()
            near = self._rows_near()  # (of ``Rows``: the rows near the view; else None)
            self._batch = self._prepare_layers(stacks, x0, x1, px, near)
            opened = stacks.get(OPEN_LAYER)
            if opened is not None and len(opened.data):
                self._prepare_open(opened, x0, x1, px, near)
            kernel = stacks.get("kernel")
            if kernel is not None and self._kernel_parts is not None and px > 0:
                self._prepare_parts(kernel, x0, x1, px)
        self._update_bounds(px)
        self.update()

    def _prepare_layers(
        self,
        stacks: dict[str, LayerStack],
        x0: float,
        x1: float,
        px: float,
        near: np.ndarray | None,
    ) -> RectBatch:
        """Every layer's rectangles, merged in one pass, sorted by drawing order and colour
        (of the lanes ``near`` the view, where given)."""
        wanted = []  # stack, narrow px, shown lanes
        drawn: list[tuple[int, LayerStack]] = []  # the draw order and stack of each wanted
        bases = [0]  # the first lane of each wanted stack, numbered on from one to the next
        for order, style in enumerate(DRAW_ORDER):
            stack = stacks.get(style.layer)
            if stack is None or not len(stack.data):
                continue
            shown = stack.data.typical >= DETAIL_PX * px if style.detail else None
            if near is not None:
                shown = near if shown is None else shown & near
            if shown is not None and not shown.any():
                continue
            wanted.append((stack.data, style.narrow_px, shown))
            drawn.append((order, stack))
            bases.append(bases[-1] + len(stack.lanes))
        s, e, key, lane = drawable(wanted, x0, x1, px)
        if not len(s):
            return RectBatch()
        which = np.searchsorted(bases, lane, side="right") - 1
        order = np.array([o for o, _ in drawn], np.int16)[which]
        w = e - s
        separate = np.array([style.separate for style in DRAW_ORDER])[order] & (w >= 3 * px)
        w[separate] -= px
        mode = np.array([SLOT_MODES[style.slots] for style in DRAW_ORDER], np.int8)[order]
        slot = np.where(key < 0, key, key % len(JOB_COLORS))  # by job
        slot = np.where(mode == SLOT_MODES["key"], key, slot)
        slot = np.where(mode == SLOT_MODES["one"], 0, slot)
        draw_key = order * SLOT_SPAN + (slot + 1).astype(np.int16)
        sort = np.argsort(draw_key, kind="stable")  # int16: a radix sort
        which, local = which[sort], (lane - np.array(bases)[which])[sort]
        buffer = np.empty((len(sort), 4))
        buffer[:, 0], buffer[:, 2] = s[sort], w[sort]
        for j, (o, stack) in enumerate(drawn):
            at = np.flatnonzero(which == j)
            buffer[at, 1], buffer[at, 3] = self._band(o, stack, local[at])
        batch = RectBatch(buffer)
        sorted_key = draw_key[sort]
        firsts = np.flatnonzero(np.r_[True, sorted_key[1:] != sorted_key[:-1]])
        counts = np.diff(np.append(firsts, len(sort)))
        for first, count in zip(firsts.tolist(), counts.tolist(), strict=True):
            style_at, slot_at = divmod(int(sorted_key[first]), SLOT_SPAN)
            batch.runs.append((self._brush(DRAW_ORDER[style_at], slot_at - 1), first, count))
        return batch

    def _rows_near(self) -> np.ndarray | None:
        """Of a group of ``Rows``, the rows within a view's height of the rows in view
        (the others are prepared when the view scrolls near them: 2 * 10^5 rows at once
        took 77 MB to prepare whole); None for other groups, or with no view height."""
        rows = self.group.lanes
        if not isinstance(rows, Rows) or self._y_view is None or rows.pitch <= 0:
            return None
        y0, y1 = self._y_view
        margin = y1 - y0
        # Clamped to the rows at both ends: a view far above the rows (they come after
        # every GPU group: 8 GPUs put them 1300 px down) is near none of them.
        first = min(max(int((y0 - margin - rows.top) // rows.pitch), 0), len(rows))
        last = min(max(int((y1 + margin - rows.top) // rows.pitch) + 1, first), len(rows))
        near = np.zeros(len(rows), bool)
        near[first:last] = True
        self._y_prepared = (rows.top + first * rows.pitch, rows.top + last * rows.pitch)
        return near

    def set_y_view(self, y0: float, y1: float) -> None:
        """The view shows [y0, y1] (layout px): rows are prepared anew when the view nears
        the edge of those prepared (only a group of ``Rows`` prepares part of its lanes)."""
        self._y_view = (y0, y1)
        rows = self.group.lanes
        if not isinstance(rows, Rows) or self.group.collapsed or self._view is None:
            return
        lo, hi = self._y_prepared
        first, last = rows.top, rows.top + len(rows) * rows.pitch
        if (y0 < lo and lo > first) or (y1 > hi and hi < last):
            self._reprepare()

    def _band(self, order: int, stack: LayerStack, at: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(top, height) of the band style DRAW_ORDER[``order``] fills in lanes ``at`` of
        ``stack``: rows by their pitch, other lanes' kept until they move (a pass over
        10^5 rows per frame took ~0.25 s)."""
        style = DRAW_ORDER[order]
        if isinstance(stack.lanes, Rows):
            rows = stack.lanes
            top = rows.top + at * rows.pitch + style.y0 * rows.height
            return top, np.full(len(at), (style.y1 - style.y0) * rows.height)
        band = self._bands.get(order)
        if band is None:
            top, height = bands(stack.lanes)
            if style is CROSS_STYLE:
                # From the group's first lane down to the busy lane the gap belongs to.
                first = self.group.lanes[0].top
                band = np.full(len(top), first), top - first
            else:
                band = top + style.y0 * height, (style.y1 - style.y0) * height
            self._bands[order] = band
        return band[0][at], band[1][at]

    def _prepare_parts(self, kernel: LayerStack, x0: float, x1: float, px: float) -> None:
        """The kernels inside the CUDA regions of the lanes zoomed in far enough: few
        regions are in view then, so they are taken one by one from the full data."""
        shown = kernel.data.typical >= KERNEL_PARTS_PX * px
        if not shown.any():
            return
        y0, y1 = KERNEL_BAND
        pieces: list[list[np.ndarray]] = [[] for _ in KERNEL_PARTS]
        for lane, show in zip(kernel.lanes, shown.tolist(), strict=True):
            iv = lane.layers["kernel"]
            rows = iv.row[iv.visible(x0, x1)]
            if not show or not len(rows):
                continue
            start, end = self._kernel_parts.spans(rows[rows >= 0])
            top, height = lane.top + y0 * lane.height, (y1 - y0) * lane.height
            for k, name in enumerate(KERNEL_PARTS):
                s, e = start[:, k], end[:, k]
                ok = np.isfinite(s) & np.isfinite(e) & (e > s)
                s, w = s[ok], np.maximum(e[ok] - s[ok], px)
                rects = np.empty((len(s), 4))
                rects[:, 0], rects[:, 1], rects[:, 2], rects[:, 3] = s, top, w, height
                pieces[k].append(rects)
                self._label_parts(k, name, s, w, top, height, px)
        buffers = [np.concatenate(p) if p else np.zeros((0, 4)) for p in pieces]
        batch = RectBatch(np.ascontiguousarray(np.concatenate(buffers)))
        first = 0
        for k, buffer in enumerate(buffers):
            if len(buffer):
                batch.runs.append((QtGui.QBrush(self.theme.kernel_part(k)), first, len(buffer)))
            first += len(buffer)
        self._parts = batch

    def _label_parts(
        self, k: int, name: str, s: np.ndarray, w: np.ndarray, top: float, height: float, px: float
    ) -> None:
        """Name (and length) inside the kernel parts wide enough to hold them."""
        room = w / px - 6
        for x, width_px, ms in zip(s.tolist(), room.tolist(), (w).tolist(), strict=True):
            for text in (f"{name} {duration(ms)}", name):
                if self._metrics.horizontalAdvance(text) <= width_px:
                    rect = QtCore.QRectF(x, top, ms, height)
                    self._part_labels.append((rect, self._static(text), k))
                    break

    def _static(self, text: str) -> QtGui.QStaticText:
        static = self._texts.get(text)
        if static is None:
            if len(self._texts) > 4096:
                self._texts.clear()
            static = self._texts[text] = QtGui.QStaticText(text)
            static.setTextFormat(QtCore.Qt.TextFormat.PlainText)
            static.prepare(QtGui.QTransform(), self._font)
        return static

    def part_count(self) -> int:
        """Kernel parts prepared for the view (0 when zoomed out)."""
        return len(self._parts)

    def _prepare_open(
        self, stack: LayerStack, x0: float, x1: float, px: float, near: np.ndarray | None
    ) -> None:
        data = stack.data.level(0)
        # No pass over the lanes with none in view (nor, of rows, far from it).
        lanes, at = positions(*data.cut(x0, x1, near))
        s, e, key = data.starts(at), data.ends(at), data.key[at]
        for i, a, b, k in zip(*(v.tolist() for v in (lanes, s, e, key)), strict=True):
            lane = stack.lanes[i]
            rect = QtCore.QRectF(a, lane.top, max(b - a, px), lane.height)
            self._open.append((rect, self.theme.job(k)))

    def _update_bounds(self, px: float) -> None:
        pad = max(px, 0.0)
        self._set_bounds(self._x_min - pad, self._x_max - self._x_min + 2 * pad)

    # ------------------------------------------------------------ paint

    def rect_count(self) -> int:
        return len(self._batch)

    def paint(self, painter: QtGui.QPainter, *args) -> None:
        painter.setRenderHint(QtGui.QPainter.RenderHint.Antialiasing, False)
        painter.setPen(QtCore.Qt.PenStyle.NoPen)
        self._batch.draw(painter)
        if len(self._parts):
            self._parts.draw(painter)
            if self._part_labels:
                self._paint_part_labels(painter)
        if self._open:
            self._paint_open(painter)
        if self._outline:
            pen = QtGui.QPen(self.theme.highlight, 2.0)
            pen.setCosmetic(True)
            painter.setPen(pen)
            painter.setBrush(QtCore.Qt.BrushStyle.NoBrush)
            painter.drawRects(self._outline)

    def _paint_part_labels(self, painter: QtGui.QPainter) -> None:
        transform = painter.transform()
        painter.save()
        painter.resetTransform()
        painter.setFont(self._font)
        ink = QtGui.QColor(PART_INK)
        height = self._metrics.height()
        for rect, text, _ in self._part_labels:
            dev = transform.mapRect(rect)
            painter.setPen(ink)
            at = QtCore.QPointF(dev.left() + 3, dev.center().y() - height / 2)
            painter.drawStaticText(at, text)
        painter.restore()

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

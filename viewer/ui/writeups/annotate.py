"""Annotations drawn on the swimlanes: notes, range highlights, arrows and rulers.

``AnnotationOverlay`` is one GraphicsObject in the view's ViewBox that draws
every annotation of the shown session (plain text only, never HTML) and turns
mouse drags into moves, resizes and new annotations.  ``AnnotationController``
owns the ``viewer.annotations.AnnotationSet`` (undo / redo), the current tool,
the context menu and the debounced, atomic sidecar save.
"""

from __future__ import annotations

import bisect
import math
import weakref
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from viewer.analysis.units import plain_duration
from viewer.annotations import (
    Annotation,
    AnnotationSet,
    UnusableSidecar,
    load,
    save,
    sidecar_candidates,
)
from viewer.export.format import display_path
from viewer.lanes.data import MARKER_STRIP
from viewer.ui.dialogs import ask_note_text
from viewer.ui.palette import Theme, with_alpha
from viewer.ui.view.timeline_view import TimelineView

Qt = QtCore.Qt
SAVE_DEBOUNCE_MS = 400
SNAP_PX = 6.0
HIT_PX = 5.0
#: Around a note's pin, an arrow's tail and a ruler's ends, no label (px, each side).
MARK_PX = 6.0
#: Around an arrow's head (its 10 px point and some air), no label (px, each side).
HEAD_PX = 12.0
LABEL_MAX_W = 300.0
#: Notes within this many pixels of each other make a cluster; of a cluster of CLUSTER_MIN or
#: more, only the first is labelled, with how many more there are to zoom in to.
CLUSTER_PX = 24.0
#: Labels placed in one view at most: more do not read, and each is placed against those
#: before it (5000 overlapping ranges stalled the window 32.6 s, issue 27 item 12).
MAX_LABELS = 120
#: Labels that found no room in a column of BOX_CELL_PX before a label there is not tried:
#: the column is full, and each try costs a search of it (5000 overlapping ranges: 4280
#: tries, 1.1 s a zoom). A label elsewhere in the view is still tried.
FULL_AFTER = 16
#: Width of the columns ``_Boxes`` files boxes by (px).
BOX_CELL_PX = 64.0
CLUSTER_MIN = 4
PREVIEW_ID = "__preview__"
WAITS = ("pickup", "queue")  # wait layers: their ends sit a few ms off the calls
TOOLS = ("note", "range", "arrow", "ruler")
#: The tools a drag draws with (a note is a click).
DRAWN_BY_DRAG = ("range", "arrow", "ruler")
TOOL_NAMES = {"note": "Add note", "range": "Highlight range", "arrow": "Arrow", "ruler": "Ruler"}


@dataclass(frozen=True)
class Ink:
    """Annotation colours for one theme: dark ink on pale paper, or the reverse."""

    ink: QtGui.QColor
    paper: QtGui.QColor
    band: QtGui.QColor
    band_edge: QtGui.QColor
    selected: QtGui.QColor

    @classmethod
    def of(cls, theme: Theme) -> Ink:
        yellow = QtGui.QColor("#ffd400")
        return cls(
            ink=QtGui.QColor(theme.foreground),
            paper=QtGui.QColor("#4a4020" if theme.dark else "#fff4b0"),
            band=with_alpha(yellow, 0.20 if theme.dark else 0.26),
            band_edge=QtGui.QColor("#ffd400" if theme.dark else "#a88a00"),
            selected=QtGui.QColor("#4fc3f7" if theme.dark else "#0064c8"),
        )


def label_of(a: Annotation) -> str:
    """The text drawn for ``a``: a ruler always states its length."""
    if a.kind == "ruler":
        delta = "\u0394 " + plain_duration(float(a.t1_ms) - a.t0_ms)
        return f"{delta} \u00b7 {a.text}" if a.text else delta
    return a.text


@dataclass
class _Shape:
    """Where one annotation is drawn, in pixels from the view's top-left corner."""

    ann: Annotation
    x0: float
    x1: float
    y: float  # the line / pin height
    top: float  # band or lane extent
    bottom: float
    label: QtCore.QRectF | None = None
    y1: float | None = None  # an arrow's head height, when it points into another lane
    text: str = ""
    moved: bool = False  # the label was moved off its place: a leader line ties it back

    @property
    def head_y(self) -> float:
        """Where the line ends: an arrow's head lane, else the line's own height."""
        return self.y if self.y1 is None else self.y1


def _to_segment(x: float, y: float, ax: float, ay: float, bx: float, by: float) -> float:
    """Distance in pixels from (x, y) to the segment a-b."""
    dx, dy = bx - ax, by - ay
    t = ((x - ax) * dx + (y - ay) * dy) / (dx * dx + dy * dy or 1.0)
    t = min(max(t, 0.0), 1.0)
    return math.hypot(x - (ax + t * dx), y - (ay + t * dy))


def _span(a: Annotation) -> tuple[float, float]:
    """The times an annotation covers, in order (a note: one instant)."""
    return tuple(sorted((a.t0_ms, a.t0_ms if a.t1_ms is None else a.t1_ms)))


def _marks(s: _Shape) -> list[QtCore.QRectF]:
    """The points of ``s`` that a label must leave in sight (pixels): a note's pin, an
    arrow's head and tail, a ruler's ends."""
    kind = s.ann.kind

    def box(x: float, y: float, r: float) -> QtCore.QRectF:
        return QtCore.QRectF(x - r, y - r, 2 * r, 2 * r)

    if kind == "note" and s.ann.lane is not None:
        return [box(s.x0, s.y, MARK_PX)]
    if kind == "arrow":
        return [box(s.x1, s.head_y, HEAD_PX), box(s.x0, s.y, MARK_PX)]
    if kind == "ruler":
        return [box(s.x0, s.y, MARK_PX + 2), box(s.x1, s.y, MARK_PX + 2)]
    return []


def _clusters(shown: list[Annotation], mpp: float) -> dict[str, int]:
    """Notes only (a range, ruler or arrow keeps its own label: it measures something):
    id -> how many more of its cluster it labels (first of a cluster), or -1 (labelled by
    the first); notes in no cluster of ``CLUSTER_MIN`` are left out."""
    order = sorted((a for a in shown if a.kind == "note"), key=lambda a: (a.t0_ms, a.id))
    out: dict[str, int] = {}
    i = 0
    while i < len(order):
        j = i + 1
        while j < len(order):
            if (order[j].t0_ms - order[i].t0_ms) / mpp > CLUSTER_PX:
                break
            j += 1
        if j - i >= CLUSTER_MIN:
            out[order[i].id] = j - i - 1
            out.update({a.id: -1 for a in order[i + 1 : j]})
        i = j
    return out


class _Boxes:
    """The boxes a label must not cover, filed by columns of BOX_CELL_PX: a box is checked
    against those of its own columns, not against every pin, arrowhead and label of the
    view (10^4 of them on a crowded one)."""

    def __init__(self, boxes: list[QtCore.QRectF] = ()) -> None:
        self._boxes: list[QtCore.QRectF] = []
        self._cells: dict[int, list[int]] = {}
        self._full: dict[int, int] = {}  # column -> labels it had no room for
        for box in boxes:
            self.add(box)

    def _span(self, left: float, right: float) -> range:
        return range(math.floor(left / BOX_CELL_PX), math.floor(right / BOX_CELL_PX) + 1)

    def add(self, box: QtCore.QRectF) -> None:
        i = len(self._boxes)
        self._boxes.append(box)
        for c in self._span(box.left(), box.right()):
            self._cells.setdefault(c, []).append(i)

    def column(self, left: float, right: float) -> list[QtCore.QRectF]:
        """The boxes that overlap [left, right] in x, in the order they were added."""
        found = {i for c in self._span(left, right) for i in self._cells.get(c, ())}
        boxes = (self._boxes[i] for i in sorted(found))
        return [b for b in boxes if b.left() < right and b.right() > left]

    def no_room(self, left: float, right: float) -> None:
        """A label over [left, right] found no room: count it in each of its columns."""
        for c in self._span(left, right):
            self._full[c] = self._full.get(c, 0) + 1

    def full(self, left: float, right: float) -> bool:
        """Whether every column over [left, right] turned away FULL_AFTER labels."""
        return all(self._full.get(c, 0) >= FULL_AFTER for c in self._span(left, right))


def _free_top(
    column: list[QtCore.QRectF], want: float, h: float, low: float, high: float
) -> float | None:
    """The top nearest ``want`` of a box of height ``h`` between ``low`` and ``high`` that
    meets no box of ``column`` (boxes that share its x span), 2 px from its neighbours: just
    under or just over one of them. None: the column is full."""
    taken = sorted((r.top(), r.bottom()) for r in column)
    spans: list[list[float]] = []  # the boxes' y spans, merged where they overlap
    for top, bottom in taken:
        if spans and top < spans[-1][1]:
            spans[-1][1] = max(spans[-1][1], bottom)
        else:
            spans.append([top, bottom])
    starts = [s for s, _ in spans]

    def free(top: float) -> bool:
        i = bisect.bisect_left(starts, top + h) - 1  # the last span starting above its end
        return i < 0 or spans[i][1] <= top

    # Ties go to the one nearer the top of the column, as they always did.
    tops = [b + 2 for _, b in taken] + [t - h - 2 for t, _ in taken]
    for top in sorted(tops, key=lambda t: abs(t - want)):
        if low <= top and top + h <= high and free(top):
            return top
    return None


class AnnotationOverlay(pg.GraphicsObject):
    """Every annotation of the shown session, above the lanes (z 40)."""

    def __init__(self, controller: AnnotationController) -> None:
        super().__init__()
        self.ctl = controller
        self.setZValue(40)
        self.setAcceptHoverEvents(True)
        self._font = QtGui.QFont()
        self._metrics = QtGui.QFontMetricsF(self._font)
        self._shapes: list[_Shape] = []
        self.hidden_labels = 0  # labels with no free place in view (the marks stay)
        self._frame = (0.0, 1.0, 0.0, 1.0, 1.0)  # x0 ms, ms per px, y0, width px, height px
        self._bounds = QtCore.QRectF()
        self._drag: tuple | None = None
        self._exporting = False

    def set_exporting(self, exporting: bool) -> None:
        """While an image is rendered the selected annotation is drawn like the others."""
        self._exporting = exporting
        self.update()

    # ---------------------------------------------------------- geometry
    def to_px(self, p: QtCore.QPointF) -> QtCore.QPointF:
        x0, mpp, y0, _, _ = self._frame
        return QtCore.QPointF((p.x() - x0) / mpp, p.y() - y0)

    def prepare(self) -> None:
        """Lay out the annotations for the current view range (cheap: a few dozen items)."""
        vb = self.ctl.view.view_box()
        (x0, x1), (y0, y1) = vb.viewRange()
        width = max(vb.width(), 1.0)
        mpp = max(self.ctl.view.ms_per_px(), 1e-9)
        self._frame = (x0, mpp, y0, width, y1 - y0)
        rect = QtCore.QRectF(x0, y0, x1 - x0, y1 - y0)
        if rect != self._bounds:
            self.prepareGeometryChange()
            self._bounds = rect
        self._shapes = []
        self.hidden_labels = 0
        line = self._metrics.height()
        strip = MARKER_STRIP + 4  # below the two rows of transition labels
        lanes = self.ctl.view.lanes()
        content_bottom = (lanes.height if lanes is not None else y1) - y0
        shown = [
            a
            for a in self.ctl.drawn()
            if _span(a)[1] >= x0 - 400 * mpp and _span(a)[0] <= x1 + 400 * mpp
        ]
        more = _clusters(shown, mpp)
        label_room = min(content_bottom, y1 - y0)
        for a in shown:
            px0 = (a.t0_ms - x0) / mpp
            px1 = px0 if a.t1_ms is None else (a.t1_ms - x0) / mpp
            extent = self.ctl.lane_extent(a.lane)
            if extent is None:
                top, bottom = strip - 4, content_bottom
                y = strip + line / 2 if a.kind == "note" else strip + line + 10
            else:
                top, bottom = extent[0] - y0, extent[1] - y0
                y = (top + bottom) / 2
            shape = _Shape(a, px0, px1, y, top, bottom)
            head = self.ctl.lane_extent(a.head_lane) if a.kind == "arrow" else None
            if head is not None:
                shape.y1 = (head[0] + head[1]) / 2 - y0
            text = label_of(a)
            if a.id in more:
                n = more[a.id]
                if n < 0:  # labelled by the first of its cluster
                    self.hidden_labels += 1
                    self._shapes.append(shape)
                    continue
                text = f"{text} (+{n} more: zoom in)" if text else f"{n + 1} annotations"
            shape.text = text
            self._shapes.append(shape)
        # What a label must never cover: every note's pin, every arrow's head and tail and
        # every ruler's ends (a label on its own arrowhead hid what it points at).
        placed = _Boxes([m for s in self._shapes for m in _marks(s)])
        labels = 0
        for shape in self._shapes:
            a, text = shape.ann, shape.text
            if not (text or a.kind == "range") or (a.id in more and more[a.id] < 0):
                continue
            if labels >= MAX_LABELS:
                self.hidden_labels += 1  # no room to read more at this zoom
                continue
            free = self.ctl.lane_extent(a.lane) is None
            shape.label = self._place_label(shape, text, free, strip, placed, label_room)
            if shape.label is None:
                self.hidden_labels += 1
            else:
                placed.add(shape.label)
                labels += 1
        self.update()

    def _place_label(
        self,
        s: _Shape,
        text: str,
        free: bool,
        strip: float,
        placed: _Boxes,
        height: float,
    ) -> QtCore.QRectF | None:
        """The label's box: at its place, else the nearest free place below or above it in
        view (``s.moved``, tied back by a leader line), else None: no room at this zoom."""
        flags = int(Qt.TextFlag.TextWordWrap)
        size = self._metrics.boundingRect(QtCore.QRectF(0, 0, LABEL_MAX_W, 1e4), flags, text).size()
        w, h = max(size.width(), 8.0) + 12, size.height() + 6  # slack: no re-wrap
        left, right = sorted((s.x0, s.x1))
        if s.ann.kind == "note":
            x = s.x0 + (6 if free else 10)
            y = strip if free else s.top - h - 3
            if y < 0:
                y = s.bottom + 3
        elif s.ann.kind == "range":
            x, y = left + 3, (strip if free else s.top - h - 2)
        else:
            # above the shaft (its higher end for a slanted arrow), never on it
            x, y = (left + right - w) / 2, min(s.y, s.head_y) - h - 5
        # Never over the strip of transition labels at the top of the lanes.
        rect = QtCore.QRectF(x, max(y, strip), w, h)
        if placed.full(x, x + w):
            return None  # its columns turned away FULL_AFTER labels already
        # Only the boxes of the label's column can meet it, where it is or moved up or down.
        column = placed.column(x, x + w)
        if not any(r.intersects(rect) for r in column):
            return rect
        top = _free_top(column, rect.top(), h, strip, max(height, strip + h))
        if top is None:
            placed.no_room(x, x + w)
            return None
        s.moved = True
        return QtCore.QRectF(x, top, w, h)

    def hit(self, view_point: QtCore.QPointF) -> tuple[str, str] | None:
        """(annotation id, part) under a view point; part is "body", "t0" or "t1"."""
        p = self.to_px(view_point)
        for s in reversed(self._shapes):
            if s.label is not None and s.label.adjusted(-2, -2, 2, 2).contains(p):
                return s.ann.id, "body"
        for s in reversed(self._shapes):
            kind, x, y = s.ann.kind, p.x(), p.y()
            if kind == "arrow" and s.y1 is not None:  # slanted: its ends, then its shaft
                if math.hypot(x - s.x0, y - s.y) <= HIT_PX + 2:
                    return s.ann.id, "t0"
                if math.hypot(x - s.x1, y - s.y1) <= HIT_PX + 2:
                    return s.ann.id, "t1"
                if _to_segment(x, y, s.x0, s.y, s.x1, s.y1) <= HIT_PX:
                    return s.ann.id, "body"
                continue
            if kind in ("range", "ruler", "arrow"):
                on_row = kind == "range" and s.top <= y <= s.bottom
                on_row = on_row or abs(y - s.y) <= HIT_PX + 2
                if on_row and abs(x - s.x0) <= HIT_PX:
                    return s.ann.id, "t0"
                if on_row and abs(x - s.x1) <= HIT_PX:
                    return s.ann.id, "t1"
                if kind != "range" and min(s.x0, s.x1) <= x <= max(s.x0, s.x1) and on_row:
                    return s.ann.id, "body"
            elif abs(x - s.x0) <= HIT_PX and (
                s.ann.lane is None or abs(y - s.y) <= HIT_PX + 2 or s.label is None
            ):
                return s.ann.id, "body"
        return None

    def boundingRect(self) -> QtCore.QRectF:
        return QtCore.QRectF(self._bounds)

    # ------------------------------------------------------------ paint
    def paint(self, painter: QtGui.QPainter, *args) -> None:
        if not self._shapes:
            return
        x0, mpp, y0, _, _ = self._frame
        t = painter.transform()
        origin = t.map(QtCore.QPointF(x0, y0))
        painter.save()
        # Draw in view pixels (fonts and pens stay crisp at any export scale).
        painter.setTransform(QtGui.QTransform(t.m11() * mpp, 0, 0, t.m22(), origin.x(), origin.y()))
        painter.setRenderHint(QtGui.QPainter.RenderHint.Antialiasing, True)
        painter.setFont(self._font)
        ink = Ink.of(self.ctl.view.theme)
        self._paint_bands(painter, [s for s in self._shapes if s.ann.kind == "range"], ink)
        for s in self._shapes:
            getattr(self, f"_paint_{s.ann.kind}")(painter, s, ink)
            if s.label is not None and s.moved and s.ann.kind != "note":  # a note: its pin
                self._paint_leader(painter, s, ink)
        # Labels last, over every line: a pin or leader never runs through a label's text.
        for s in self._shapes:
            if s.label is not None:
                self._paint_label(painter, s, ink)
        painter.restore()

    def _pen(self, color: QtGui.QColor, width: float = 1.5, dash: bool = False) -> QtGui.QPen:
        pen = QtGui.QPen(color, width)
        if dash:
            pen.setStyle(Qt.PenStyle.DashLine)
        return pen

    def _paint_note(self, p: QtGui.QPainter, s: _Shape, ink: Ink) -> None:
        if s.ann.lane is None or self.ctl.lane_extent(s.ann.lane) is None:
            p.setPen(self._pen(ink.ink, 1.2, dash=True))
            p.drawLine(QtCore.QPointF(s.x0, s.top), QtCore.QPointF(s.x0, s.bottom))
            return
        if s.label is not None:
            corner = s.label.bottomLeft() if s.label.top() < s.y else s.label.topLeft()
            p.setPen(self._pen(ink.ink, 1.2))
            p.drawLine(QtCore.QPointF(s.x0, s.y), corner)
        p.setPen(self._pen(ink.ink, 1.5))
        p.setBrush(ink.paper)
        p.drawEllipse(QtCore.QPointF(s.x0, s.y), 4.0, 4.0)

    def _paint_bands(self, p: QtGui.QPainter, ranges: list[_Shape], ink: Ink) -> None:
        """The ranges' shading, under every line: where d ranges of one height overlap, one
        fill of the colour d fills would give (5000 overlapping ranges were 5000 fills of
        the whole plot, 0.5 s a frame)."""
        alpha = ink.band.alphaF()
        by_height: dict[tuple[float, float], list[tuple[float, int]]] = {}
        for s in ranges:
            left, right = sorted((s.x0, s.x1))
            edges = by_height.setdefault((s.top, s.bottom), [])
            edges += [(left, 1), (max(right, left + 1.0), -1)]
        for (top, bottom), edges in by_height.items():
            edges.sort()
            depth, x = 0, edges[0][0]
            for at, step in edges:
                if depth and at > x:
                    color = QtGui.QColor(ink.band)
                    color.setAlphaF(1.0 - (1.0 - alpha) ** depth)
                    p.fillRect(QtCore.QRectF(x, top, at - x, bottom - top), color)
                depth, x = depth + step, at

    def _paint_range(self, p: QtGui.QPainter, s: _Shape, ink: Ink) -> None:
        """A range's edges (``_paint_bands`` shades it)."""
        left, right = sorted((s.x0, s.x1))
        p.setPen(self._pen(ink.band_edge, 1.5))
        for x in (left, right):
            p.drawLine(QtCore.QPointF(x, s.top), QtCore.QPointF(x, s.bottom))

    def _paint_ruler(self, p: QtGui.QPainter, s: _Shape, ink: Ink) -> None:
        p.setPen(self._pen(with_alpha(ink.ink, 0.55), 1.0, dash=True))
        for x in (s.x0, s.x1):
            p.drawLine(QtCore.QPointF(x, s.top), QtCore.QPointF(x, s.bottom))
        p.setPen(self._pen(ink.ink, 1.8))
        p.drawLine(QtCore.QPointF(s.x0, s.y), QtCore.QPointF(s.x1, s.y))
        for x in (s.x0, s.x1):
            p.drawLine(QtCore.QPointF(x, s.y - 7), QtCore.QPointF(x, s.y + 7))

    def _paint_arrow(self, p: QtGui.QPainter, s: _Shape, ink: Ink) -> None:
        tail, tip = QtCore.QPointF(s.x0, s.y), QtCore.QPointF(s.x1, s.head_y)
        p.setPen(self._pen(ink.ink, 1.8))
        p.drawLine(tail, tip)
        dx, dy = tip.x() - tail.x(), tip.y() - tail.y()
        length = math.hypot(dx, dy) or 1.0
        ux, uy = dx / length, dy / length  # along the shaft, in pixels: any angle
        back = QtCore.QPointF(tip.x() - 10 * ux, tip.y() - 10 * uy)
        head = QtGui.QPolygonF(
            [
                tip,
                QtCore.QPointF(back.x() - 5 * uy, back.y() + 5 * ux),
                QtCore.QPointF(back.x() + 5 * uy, back.y() - 5 * ux),
            ]
        )
        p.setBrush(ink.ink)
        p.drawPolygon(head)

    def _paint_leader(self, p: QtGui.QPainter, s: _Shape, ink: Ink) -> None:
        """A thin line from where the label belongs to where it had room."""
        left, right = sorted((s.x0, s.x1))
        # A range's corner; an arrow's or a ruler's middle, on the line (a slanted arrow's
        # middle is half-way down its shaft, not at its tail's height).
        anchor = (
            QtCore.QPointF(left, s.top)
            if s.ann.kind == "range"
            else QtCore.QPointF((s.x0 + s.x1) / 2, (s.y + s.head_y) / 2)
        )
        box = s.label
        end = QtCore.QPointF(
            min(max(anchor.x(), box.left()), box.right()),
            box.bottom() if box.center().y() < anchor.y() else box.top(),
        )
        p.setPen(self._pen(with_alpha(ink.ink, 0.6), 1.0))
        p.drawLine(anchor, end)

    def _paint_label(self, p: QtGui.QPainter, s: _Shape, ink: Ink) -> None:
        selected = s.ann.id == self.ctl.selected and not self._exporting
        p.setPen(self._pen(ink.selected if selected else ink.ink, 2.0 if selected else 1.0))
        p.setBrush(ink.paper)
        p.drawRoundedRect(s.label, 3, 3)
        p.setPen(ink.ink)
        flags = int(Qt.TextFlag.TextWordWrap | Qt.AlignmentFlag.AlignCenter)
        p.drawText(s.label.adjusted(5, 3, -5, -3), flags, s.text)

    # ------------------------------------------------------------ mouse
    def hoverEvent(self, ev) -> None:
        if ev.isExit():
            self.unsetCursor()
            return
        hit = self.hit(ev.pos())
        if hit is not None or self.ctl.tool:
            ev.acceptDrags(Qt.MouseButton.LeftButton)
            ev.acceptClicks(Qt.MouseButton.LeftButton)
        if self.ctl.tool in DRAWN_BY_DRAG:
            self.setCursor(Qt.CursorShape.CrossCursor)  # the drag draws, whatever is under it
        elif hit is not None:
            shape = (
                Qt.CursorShape.SizeHorCursor if hit[1] != "body" else Qt.CursorShape.SizeAllCursor
            )
            self.setCursor(shape)
        elif self.ctl.tool:
            self.setCursor(Qt.CursorShape.CrossCursor)
        else:
            self.unsetCursor()

    def mouseClickEvent(self, ev) -> None:
        if ev.button() != Qt.MouseButton.LeftButton:
            ev.ignore()
            return
        hit = self.hit(ev.pos())
        if hit is not None:
            ev.accept()
            self.ctl.select(hit[0])
            if ev.double():
                self.ctl.edit_text(hit[0])
        elif self.ctl.tool == "note":
            ev.accept()
            self.ctl.add_note_at(ev.pos())
        else:
            self.ctl.select(None)
            ev.ignore()

    def mouseDragEvent(self, ev) -> None:
        if ev.button() != Qt.MouseButton.LeftButton:
            ev.ignore()
            return
        if ev.isStart():
            start = ev.buttonDownPos()
            hit = self.hit(start)
            if self.ctl.tool in DRAWN_BY_DRAG:
                # An armed tool draws, even from another annotation's edge: edges sit on
                # events, where a ruler or a highlight starts too.
                self._drag = ("create", self.ctl.tool, self.ctl.snap(start.x(), start.y()))
            elif hit is not None:
                self._drag = ("edit", *hit)
            else:
                self._drag = None
                ev.ignore()
                return
        if self._drag is None:
            ev.ignore()
            return
        ev.accept()
        self.ctl.drag_to(self._drag, ev.buttonDownPos(), ev.pos(), ev.isFinish())
        if ev.isFinish():
            self._drag = None


class AnnotationController(QtCore.QObject):
    """The annotations of the log shown in ``view``: editing, tools, menu, sidecar.

    ``ask_text(title, initial)`` returns the text the user typed or None when
    cancelled; ``ask_replace(path, problem)`` whether to replace a sidecar that cannot
    be used (dialogs by default; tests replace them).  The annotations always belong to
    the log last passed to ``open_log``, whatever its sidecar holds.
    """

    changed = QtCore.Signal()
    tool_changed = QtCore.Signal(str)
    warning = QtCore.Signal(str)

    def __init__(self, view: TimelineView, parent: QtCore.QObject | None = None) -> None:
        super().__init__(parent or view)
        self.view = view
        self.annotations = AnnotationSet()
        self._unsubscribe = self.annotations.subscribe(self._on_set_changed)
        self.log_path: Path | None = None
        self.tool = ""
        self.selected: str | None = None
        self.preview: Annotation | None = None
        self.ask_text: Callable[[str, str], str | None] = self._ask_text_dialog
        self.ask_replace: Callable[[Path, str], bool] = self._ask_replace_dialog
        self._replace: bool | None = None  # the user's answer for this log's unusable sidecar
        # The edges snapped to, with what they are of: the lanes and the lane, held weakly
        # (a row's lane is made when asked for; an id could be another row's later).
        self._edges: tuple[tuple, np.ndarray] = ((), np.zeros(0))
        self._save_timer = QtCore.QTimer(self)
        self._save_timer.setSingleShot(True)
        self._save_timer.setInterval(SAVE_DEBOUNCE_MS)
        self._save_timer.timeout.connect(self.save_now)
        self.overlay = AnnotationOverlay(self)
        vb = view.view_box()
        vb.addItem(self.overlay, ignoreBounds=True)
        for signal in (vb.sigXRangeChanged, vb.sigYRangeChanged, vb.sigResized):
            signal.connect(self._refresh)
        view.session_changed.connect(self._refresh)
        view.context_requested.connect(self._on_context_requested)

    # ------------------------------------------------------------ model
    def session_index(self) -> int:
        return max(self.view.session_index(), 0)

    def drawn(self) -> list[Annotation]:
        """The annotations of the shown session, with the one being dragged in its new place."""
        items = self.annotations.in_session(self.session_index())
        if self.preview is None:
            return items
        out = [self.preview if a.id == self.preview.id else a for a in items]
        return out if self.preview.id in self.annotations else [*out, self.preview]

    def set_annotations(self, annotations: AnnotationSet, log_path: Path | None = None) -> None:
        self._unsubscribe()
        self.annotations = annotations
        self._unsubscribe = annotations.subscribe(self._on_set_changed)
        self.log_path = log_path
        self.selected, self.preview = None, None
        self._refresh()
        self.changed.emit()

    def open_log(self, log_path: str | Path) -> str | None:
        """Save the current log's annotations, then show those of ``log_path``; returns the
        sidecar warning (also emitted as ``warning``), None when all went well.

        From here on the annotations are ``log_path``'s, even when its sidecar cannot be
        read: that file is then kept as it is until the user chooses to replace it.
        """
        self.flush()
        self._replace = None
        self.set_annotations(AnnotationSet(), Path(log_path))
        annotations, problem = load(log_path)
        if len(annotations):
            self.set_annotations(annotations, Path(log_path))
        if problem:
            self.warning.emit(problem)
        return problem

    def sidecar_paths(self) -> list[Path]:
        """Where the shown log's sidecar is or would be (inputs no export may write over)."""
        return [] if self.log_path is None else sidecar_candidates(self.log_path)

    def save_now(self, leaving: bool = False) -> Path | None:
        """Write the sidecar if anything changed.  Over a sidecar that cannot be used only
        when the user says so: asked at the first save, and again on ``leaving`` the log
        (the annotations would be lost) if the answer was no."""
        self._save_timer.stop()
        if self.log_path is None or not self.annotations.dirty:
            return None
        name = display_path(self.log_path.name)
        try:
            return save(self.annotations, self.log_path, replace=bool(self._replace))
        except UnusableSidecar as exc:
            if self._replace is None or (leaving and not self._replace):
                self._replace = self.ask_replace(exc.path, exc.problem)
                if self._replace:
                    return self.save_now()
                self.warning.emit(
                    f"The annotations of {name} are not saved: {display_path(exc.path)} "
                    f"cannot be used ({exc.problem}) and is kept as it is."
                )
            return None
        except (OSError, ValueError) as exc:
            self.warning.emit(f"Could not save the annotations of {name}: {exc}")
            return None

    def flush(self) -> None:
        """Write pending changes now (before another log is opened, or on close)."""
        if self._save_timer.isActive() or self.annotations.dirty:
            self.save_now(leaving=True)

    def _on_set_changed(self) -> None:
        if self.selected is not None and self.selected not in self.annotations:
            self.selected = None
        self._refresh()
        if self.log_path is not None:
            self._save_timer.start()
        self.changed.emit()

    def _refresh(self, *args) -> None:
        self.overlay.prepare()

    # ------------------------------------------------------------ lanes
    def lane_name_at(self, y: float) -> str | None:
        lanes = self.view.lanes()
        lane = lanes.lane_at(y) if lanes is not None else None
        if lane is None:
            return None
        return lane.name or ("synthesis" if lane.kind == "synth" else None)

    def lane_extent(self, name: str | None) -> tuple[float, float] | None:
        """Top and bottom (view y) of the lane named ``name``; None if not shown."""
        lanes = self.view.lanes()
        if name is None or lanes is None:
            return None
        lane = lanes.lane_named(name)
        return None if lane is None else (lane.top, lane.top + lane.height)

    def snap(self, t_ms: float, y: float | None = None) -> float:
        """``t_ms`` moved onto the nearest event edge within a few pixels: edges of the lane
        at height ``y`` when there is one (a GPU worker's calls and kernels), else any."""
        lanes = self.view.lanes()
        if lanes is None:
            return t_ms
        lane = lanes.lane_at(y) if y is not None else None
        held = self._edges[0]
        if (
            not held
            or held[0]() is not lanes
            or (held[1] is None) != (lane is None)  # a lane's edges, or every lane's
            or (lane is not None and held[1]() is not lane)  # another lane's, or a dead one's
        ):
            key = (weakref.ref(lanes), lane and weakref.ref(lane))
            chosen = lane.layers.items() if lane is not None else lanes.layers()
            layers = [iv for k, iv in chosen if k not in WAITS]
            parts = [iv.edges() for iv in layers]
            v = np.unique(np.concatenate(parts)) if parts else np.zeros(0)
            self._edges = (key, v[np.isfinite(v)])
        edges = self._edges[1]
        if not len(edges):
            return t_ms
        i = int(np.searchsorted(edges, t_ms))
        near = edges[max(i - 1, 0) : i + 1]
        best = float(near[np.argmin(np.abs(near - t_ms))])
        return best if abs(best - t_ms) <= SNAP_PX * self.overlay._frame[1] else t_ms

    # ---------------------------------------------------------- editing
    def add(
        self,
        kind: str,
        t0_ms: float,
        t1_ms: float | None = None,
        *,
        lane=None,
        text: str = "",
        head_lane: str | None = None,
    ) -> Annotation:
        a = self.annotations.add(
            kind,
            t0_ms,
            t1_ms,
            lane=lane,
            text=text,
            session=self.session_index(),
            head_lane=head_lane,
        )
        self.select(a.id)
        return a

    def add_note_at(self, point: QtCore.QPointF, text: str | None = None) -> Annotation | None:
        """A note at view point ``point``, pinned to the lane there (asks for the text)."""
        self.set_tool("")
        if text is None:
            text = self.ask_text("Add note", "")
        if not text:
            return None
        return self.add("note", float(point.x()), lane=self.lane_name_at(point.y()), text=text)

    def edit_text(self, id_: str, text: str | None = None) -> Annotation | None:
        a = self.annotations.get(id_)
        if text is None:
            text = self.ask_text(f"Edit {a.kind}", a.text)
        if text is None or text == a.text:
            return None
        return self.annotations.update(id_, text=text)

    def delete(self, id_: str | None = None) -> None:
        id_ = id_ or self.selected
        if id_ is not None and id_ in self.annotations:
            self.annotations.remove(id_)

    def undo(self) -> bool:
        return self.annotations.undo()

    def redo(self) -> bool:
        return self.annotations.redo()

    def select(self, id_: str | None) -> None:
        if id_ != self.selected:
            self.selected = id_
            self.overlay.update()

    def set_tool(self, tool: str) -> None:
        """Arm ``tool`` (one of TOOLS) for the next click or drag in the view; "" disarms."""
        tool = tool if tool in TOOLS else ""
        if tool != self.tool:
            self.tool = tool
            self.tool_changed.emit(tool)

    def drag_to(
        self, drag: tuple, down: QtCore.QPointF, now: QtCore.QPointF, finished: bool
    ) -> None:
        """Follow a drag of the overlay: preview while moving, one undo step when released."""
        if drag[0] == "create":
            _, kind, t0 = drag
            lane = None if kind == "range" else self.lane_name_at(down.y())
            head = self._head_lane(kind, lane, now.y())
            t1 = self.snap(now.x(), down.y() if head is None else now.y())
            new = Annotation(
                PREVIEW_ID, kind, t0, t1, lane, session=self.session_index(), head_lane=head
            )
        else:
            _, id_, part = drag
            old = self.annotations.get(id_)
            if part == "body":
                new = old.moved(now.x() - down.x())
                if old.kind == "note" and old.lane is not None:
                    new = replace(new, lane=self.lane_name_at(now.y()) or old.lane)
            else:
                new = replace(old, **{f"{part}_ms": self.snap(now.x(), now.y())})
                if old.kind == "arrow" and part == "t1":
                    new = replace(new, head_lane=self._head_lane("arrow", old.lane, now.y()))
        self.preview = new
        if finished:
            self.preview = None
            self._commit(drag, new)
        self._refresh()

    def _head_lane(self, kind: str, lane: str | None, y: float) -> str | None:
        """An arrow dragged into another lane points into it (any angle); else None."""
        if kind != "arrow" or lane is None:
            return None
        head = self.lane_name_at(y)
        return head if head not in (None, lane) else None

    def _commit(self, drag: tuple, new: Annotation) -> None:
        if drag[0] == "create":
            self.set_tool("")
            if new.t1_ms == new.t0_ms:
                return
            text = "" if new.kind == "ruler" else self.ask_text(TOOL_NAMES[new.kind], "")
            if text is None:
                return
            self.add(
                new.kind, new.t0_ms, new.t1_ms, lane=new.lane, text=text, head_lane=new.head_lane
            )
            return
        old = self.annotations.get(new.id)
        if new == old:
            return
        if drag[2] == "body":
            self.annotations.move(new.id, new.t0_ms - old.t0_ms, lane=new.lane)
        else:
            self.annotations.update(
                new.id, t0_ms=new.t0_ms, t1_ms=new.t1_ms, head_lane=new.head_lane
            )

    # ------------------------------------------------------------- menu
    def context_menu(self, point: QtCore.QPointF, parent=None) -> QtWidgets.QMenu:
        """The right-click menu at view point ``point`` (built, not shown)."""
        menu = QtWidgets.QMenu(parent or self.view)
        has_log = self.view.session() is not None
        hit = self.overlay.hit(point)
        if hit is not None:
            a = self.annotations.get(hit[0])
            self.select(a.id)
            menu.addAction("Edit text…", lambda: self.edit_text(a.id))
            menu.addAction(f"Delete {a.kind}", lambda: self.delete(a.id))
            menu.addSeparator()
        menu.addAction("Add note here…", lambda: self.add_note_at(point)).setEnabled(has_log)
        selection = self.view.selection()
        for kind, text in (("range", "Highlight selected range…"), ("ruler", "Measure selection")):
            act = menu.addAction(text, lambda k=kind: self._annotate_selection(k))
            act.setEnabled(has_log and selection is not None)
        for kind in DRAWN_BY_DRAG:
            act = menu.addAction(f"{TOOL_NAMES[kind]} (drag)", lambda k=kind: self.set_tool(k))
            act.setEnabled(has_log)
        menu.addSeparator()
        undo = self.annotations.undo_label
        redo = self.annotations.redo_label
        menu.addAction(f"Undo {undo or ''}".strip(), self.undo).setEnabled(undo is not None)
        menu.addAction(f"Redo {redo or ''}".strip(), self.redo).setEnabled(redo is not None)
        return menu

    def _annotate_selection(self, kind: str) -> Annotation | None:
        selection = self.view.selection()
        if selection is None:
            return None
        text = "" if kind == "ruler" else self.ask_text(TOOL_NAMES[kind], "")
        if text is None:
            return None
        return self.add(kind, *selection, text=text)

    def _on_context_requested(self, point: QtCore.QPointF, screen: QtCore.QPoint) -> None:
        menu = self.context_menu(point)
        menu.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        menu.popup(screen)

    def _ask_replace_dialog(self, path: Path, problem: str) -> bool:
        box = QtWidgets.QMessageBox(self.view.window())
        box.setIcon(QtWidgets.QMessageBox.Icon.Warning)
        box.setWindowTitle("Annotations file cannot be used")
        box.setTextFormat(Qt.TextFormat.PlainText)
        box.setText(
            f"The annotations file {display_path(path)} cannot be used ({problem}).\n\n"
            "Replace it with the annotations you made now? The old file is kept, renamed "
            "to end in .corrupt-<date>. Otherwise your new annotations are not saved."
        )
        replace = box.addButton("Replace", QtWidgets.QMessageBox.ButtonRole.AcceptRole)
        box.addButton("Keep the file", QtWidgets.QMessageBox.ButtonRole.RejectRole)
        box.exec()
        return box.clickedButton() is replace

    def _ask_text_dialog(self, title: str, initial: str) -> str | None:
        return ask_note_text(self.view, title, initial)

"""Flow arrows of the selected partition: its synthesis, queue wait and GPU call outlined,
with arrows synthesis -> queue -> GPU across the lanes (drawn in device space, so the
arrowheads keep their size at any zoom)."""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui

from viewer.analysis.stages import stages
from viewer.lanes.data import SessionLanes
from viewer.ui.palette import Theme

ARROW_PX = 8.0  # arrowhead length
MIN_ARROW_PX = 10.0  # shorter hops (a queue event 1 ms after SYNTH_END) get no arrow


class FlowItem(pg.GraphicsObject):
    """Partition ``row``'s path through the pipeline, over the lanes of ``lanes``."""

    def __init__(self, lanes: SessionLanes, row: int, theme: Theme) -> None:
        super().__init__()
        self.theme = theme
        self.row = row
        self.setZValue(20)
        p = lanes.session.partitions.row(row)
        st = stages(lanes.session).row(row)
        self.synth_lane = lanes.lane_holding(row, ("synth", "open"))
        self.gpu_lane = lanes.lane_holding(row, ("bar", "open"))
        s0, s1 = float(p["synth_start"]), float(p["synth_end"])
        g0, g1 = float(p["gpu_start"]), float(p["gpu_end"])
        if not math.isfinite(s1) and math.isfinite(s0):
            s1 = lanes.x_max  # never ended
        if not math.isfinite(g1) and math.isfinite(g0):
            g1 = lanes.x_max
        self.synth = (s0, s1)
        self.queue = (float(st["ready"]), float(st["wait_end"]))
        self.call = (g0, g1)
        xs = [x for x in (*self.synth, *self.queue, *self.call) if math.isfinite(x)]
        lo, hi = (min(xs), max(xs)) if xs else (lanes.x_min, lanes.x_max)
        self._bounds = QtCore.QRectF(lo, 0.0, max(hi - lo, 1.0), lanes.height)

    def set_theme(self, theme: Theme) -> None:
        self.theme = theme
        self.update()

    def boundingRect(self) -> QtCore.QRectF:
        # Arrowheads and outlines reach a few pixels past the bars: pad by a view's worth.
        return QtCore.QRectF(self._bounds)

    def segments(self) -> list[tuple[QtCore.QPointF, QtCore.QPointF]]:
        """The arrows in view coordinates: synthesis end -> queue start, queue end -> GPU
        call start (those whose ends are known and whose lanes are shown)."""
        out = []
        synth = self.synth_lane if self.synth_lane is not None and self.synth_lane.height else None
        gpu = self.gpu_lane if self.gpu_lane is not None and self.gpu_lane.height else None
        if synth is not None:
            y = synth.top + synth.height / 2
            if all(map(math.isfinite, (self.synth[1], self.queue[0]))):
                out.append((QtCore.QPointF(self.synth[1], y), QtCore.QPointF(self.queue[0], y)))
            if gpu is not None and all(map(math.isfinite, (self.queue[1], self.call[0]))):
                out.append(
                    (
                        QtCore.QPointF(self.queue[1], y),
                        QtCore.QPointF(self.call[0], gpu.top + gpu.height / 2),
                    )
                )
        return out

    def _outlines(self) -> list[QtCore.QRectF]:
        rects = []
        for lane, (a, b) in ((self.synth_lane, self.synth), (self.gpu_lane, self.call)):
            if lane is not None and lane.height and math.isfinite(a) and math.isfinite(b):
                rects.append(QtCore.QRectF(a, lane.top, b - a, lane.height))
        lane = self.synth_lane
        if lane is not None and lane.height and all(map(math.isfinite, self.queue)):
            rects.append(
                QtCore.QRectF(
                    self.queue[0], lane.top + 0.2 * lane.height, self.queue[1] - self.queue[0],
                    0.6 * lane.height,
                )
            )  # fmt: skip
        return rects

    def paint(self, painter: QtGui.QPainter, *args) -> None:
        transform = painter.transform()
        painter.save()
        painter.resetTransform()
        painter.setRenderHint(QtGui.QPainter.RenderHint.Antialiasing, True)
        halo = QtGui.QPen(self.theme.background, 4.0)
        ink = QtGui.QPen(self.theme.flow, 2.0)
        painter.setBrush(QtCore.Qt.BrushStyle.NoBrush)
        for rect in self._outlines():
            dev = transform.mapRect(rect)
            for pen in (halo, ink):
                painter.setPen(pen)
                painter.drawRect(dev)
        for a, b in self.segments():
            pa, pb = transform.map(a), transform.map(b)
            if math.hypot(pb.x() - pa.x(), pb.y() - pa.y()) < MIN_ARROW_PX:
                continue
            path = QtGui.QPainterPath(pa)
            bend = max(abs(pb.y() - pa.y()) * 0.5, 12.0)
            if abs(pb.y() - pa.y()) < 1:
                path.lineTo(pb)
                tangent = pb - pa
            else:
                c1 = QtCore.QPointF(pa.x() + bend, pa.y())
                c2 = QtCore.QPointF(pb.x() - bend, pb.y())
                path.cubicTo(c1, c2, pb)
                tangent = pb - c2
            for pen in (halo, ink):
                painter.setPen(pen)
                painter.drawPath(path)
            painter.setPen(QtCore.Qt.PenStyle.NoPen)
            painter.setBrush(self.theme.flow)
            painter.drawPolygon(_head(pb, tangent))
            painter.setBrush(QtCore.Qt.BrushStyle.NoBrush)
        painter.restore()


def _head(tip: QtCore.QPointF, tangent: QtCore.QPointF) -> QtGui.QPolygonF:
    """An arrowhead at ``tip`` pointing along ``tangent``."""
    length = math.hypot(tangent.x(), tangent.y()) or 1.0
    ux, uy = tangent.x() / length, tangent.y() / length
    base = np.array([tip.x() - ux * ARROW_PX, tip.y() - uy * ARROW_PX])
    side = np.array([-uy, ux]) * ARROW_PX * 0.45
    return QtGui.QPolygonF([tip, QtCore.QPointF(*(base + side)), QtCore.QPointF(*(base - side))])

"""The counter tracks under the GPU lanes: queue depth, syntheses and GPU calls in flight.

One ``pg.GraphicsObject`` draws every counter lane.  ``prepare`` asks each counter's
``Envelope`` for the min and max of every pixel column of the view (O(pixels), however
many steps the view holds) and paints the columns into a small image per lane with numpy:
up to the max in the lighter colour, up to the min (what the column surely held) in the
solid one.  ``paint`` blits three images: filling polygons or rectangles per column costs
Qt several milliseconds a frame.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from PySide6 import QtCore, QtGui

from viewer.analysis.counters import Envelope
from viewer.lanes.data import LaneGroup
from viewer.ui.palette import Theme
from viewer.ui.view.lanes import GroupItem

#: Pixel columns per view, at most (views are a few thousand pixels wide).
MAX_COLUMNS = 1 << 14


@dataclass(frozen=True)
class Track:
    """One counter lane as prepared: columns of ``px`` ms from ``start``, their min / max,
    and the image drawn over ``rect`` (view coordinates)."""

    key: str
    start: float
    px: float
    lo: np.ndarray
    hi: np.ndarray
    pixels: np.ndarray  # uint32 ARGB, (height, columns); the image's buffer
    image: QtGui.QImage
    rect: QtCore.QRectF


class CounterTrackItem(GroupItem):
    """Every counter lane of ``group``, each scaled from 0 to its peak."""

    def __init__(
        self,
        group: LaneGroup,
        envelopes: dict[str, Envelope],
        x_min: float,
        x_max: float,
        theme: Theme,
    ) -> None:
        super().__init__()
        self.group = group
        self.envelopes = envelopes
        self.theme = theme
        self._x_min, self._x_max = x_min, x_max
        self._tracks: list[Track] = []
        self._baselines: list[QtCore.QLineF] = []
        self._view: tuple[float, float, float] | None = None
        self._bounds = QtCore.QRectF()
        self._update_bounds()

    def set_theme(self, theme: Theme) -> None:
        self.theme = theme
        self._reprepare()

    def relayout(self) -> None:
        self._update_bounds()
        self._reprepare()

    def _reprepare(self) -> None:
        if self._view is not None:
            self.prepare(*self._view)

    def column_range(self, key: str, x: float, px: float) -> tuple[int, int] | None:
        """(min, max) of counter ``key`` over the pixel column at ``x`` ms (hover text);
        None past the log's end, where it is not known."""
        start = math.floor(x / px) * px
        if start >= self._x_max:
            return None
        lo, hi = self.envelopes[key].columns(start, px, 1)
        return int(lo[0]), int(hi[0])

    def _columns(
        self, envelope: Envelope, start: float, px: float, n: int
    ) -> tuple[np.ndarray, np.ndarray]:
        """``envelope.columns``, none past the log's end: what a count was after its last
        event is not known (the memory estimate's last level, never back to 0, ran on to
        the view's edge, past the other lanes and, in an export, into the margin)."""
        lo, hi = envelope.columns(start, px, n)
        past = start + np.arange(n) * px >= self._x_max
        if past.any():
            lo, hi = np.where(past, 0, lo), np.where(past, 0, hi)
        return lo, hi

    def tracks(self) -> list[Track]:
        return list(self._tracks)

    def column_count(self) -> int:
        """Pixel columns prepared for the view, all tracks together (O(pixels))."""
        return sum(len(t.lo) for t in self._tracks)

    def prepare(self, x0: float, x1: float, px: float) -> None:
        """The tracks' images for the view [x0, x1] ms where one pixel is ``px`` ms."""
        self._view = (x0, x1, px)
        self._tracks, self._baselines = [], []
        lanes = [] if self.group.collapsed else self.group.lanes
        if px > 0 and x1 > x0:
            # Columns fixed in time (multiples of px): a pan keeps the same columns.
            start = math.floor(x0 / px) * px
            n = min(int(math.ceil((x1 - start) / px)) + 1, MAX_COLUMNS)
            px = max(px, (x1 - start) / (MAX_COLUMNS - 1))
            solid = self.theme.counter.rgba()
            ranged = self.theme.counter_range.rgba()
            for lane in lanes:
                envelope = self.envelopes.get(lane.counter)
                height = int(round(lane.height))
                if envelope is None or height <= 0:
                    continue
                lo, hi = self._columns(envelope, start, px, n)
                scale = height / max(envelope.steps.peak, 1)
                # Pixel row r (0 at the top) is filled when its centre lies under the value.
                row = height - 0.5 - np.arange(height, dtype=np.float64)[:, None]
                pixels = np.zeros((height, n), np.uint32)
                pixels[row < hi * scale] = ranged
                pixels[row < lo * scale] = solid
                image = QtGui.QImage(
                    pixels.data, n, height, 4 * n, QtGui.QImage.Format.Format_ARGB32_Premultiplied
                )
                rect = QtCore.QRectF(start, lane.top, n * px, lane.height)
                self._tracks.append(Track(lane.counter, start, px, lo, hi, pixels, image, rect))
                bottom = lane.top + lane.height
                self._baselines.append(QtCore.QLineF(self._x_min, bottom, self._x_max, bottom))
        self.update()

    def _update_bounds(self) -> None:
        span = self._x_max - self._x_min
        self._set_bounds(self._x_min - span, 3 * span)

    def paint(self, painter: QtGui.QPainter, *args) -> None:
        painter.setRenderHint(QtGui.QPainter.RenderHint.SmoothPixmapTransform, False)
        for track in self._tracks:
            painter.drawImage(track.rect, track.image)
        if self._baselines:
            pen = QtGui.QPen(self.theme.separator, 1.0)
            pen.setCosmetic(True)
            painter.setPen(pen)
            painter.drawLines(self._baselines)

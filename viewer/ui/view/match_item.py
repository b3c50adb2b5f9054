"""Search matches over the lanes: every matched partition's GPU call and synthesis bar
washed in the match colour and outlined, the current match outlined thicker; as a filter
(``set_dim``), the rest of the lanes fade and the matches keep their sector colours.

The matched bars of every lane are kept end to end in one ``lanes.lod.Stack``, so a frame
cuts and merges them below a pixel as the lanes do: O(pixels), however many match.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui

from viewer.lanes.data import Lane, Rows, SessionLanes, bands
from viewer.lanes.lod import Stack
from viewer.ui.palette import JOB_COLORS, Theme, with_alpha
from viewer.ui.view.lanes import RectBatch

#: The current match's column through the lanes is at least this wide (logical pixels).
CURRENT_MIN_PX = 8.0
#: Layers a match shows in: the GPU call, the synthesis, and either when it never ended.
LAYERS = ("bar", "open", "synth")


def _numbering(lanes: Sequence[Lane], among: Sequence[Lane]) -> np.ndarray:
    """Where each of ``among`` (some of ``lanes``, in order) lies in ``lanes``."""
    if among is lanes:
        return np.arange(len(lanes))
    where = {id(lane): i for i, lane in enumerate(lanes)}
    return np.array([where[id(lane)] for lane in among], np.int64)


class MatchItem(pg.GraphicsObject):
    """The bars of the partitions ``rows`` (of ``lanes.session.partitions``), highlighted."""

    def __init__(self, lanes: SessionLanes, rows: np.ndarray, theme: Theme) -> None:
        super().__init__()
        self.lanes = lanes
        self.theme = theme
        self.setZValue(5)
        matched = np.zeros(len(lanes.session.partitions) + 1, dtype=bool)
        matched[np.asarray(rows, dtype=np.int64)] = True  # row -1 lands on the spare slot
        # Every lane is numbered across the groups, top down; the matched bars are taken
        # from each group's stacks at once (no pass over 10^5 synthesis rows).
        pieces, first = [], 0
        for group in lanes.groups:
            stacks = group.stacks()
            for name in LAYERS:
                stack = stacks.get(name)
                if stack is None or not len(stack.data):
                    continue
                level = stack.data.level(0)
                at = np.flatnonzero(matched[stack.data.row])
                lane = np.searchsorted(level.bounds, at, side="right") - 1
                number = _numbering(group.lanes, stack.lanes)
                row = stack.data.row[at]
                pieces.append(
                    (level.starts(at), level.ends(at), level.key[at], row, first + number[lane])
                )
            first += len(group.lanes)

        def joined(i: int) -> np.ndarray:
            return np.concatenate([p[i] for p in pieces]) if pieces else np.zeros(0, np.int64)

        number = joined(4)
        #: The lanes with a match (their numbers across the groups) and their stack.
        self._numbers = np.unique(number)
        self._stack = Stack.of_lanes(
            *map(joined, range(4)), np.searchsorted(self._numbers, number), len(self._numbers)
        )
        self._dim = False
        self._view = (lanes.x_min, lanes.x_max)
        self._batch = RectBatch()
        self._slots: list[tuple[int, int, int]] = []  # colour slot, first, count
        self._current: list[QtCore.QRectF] = []
        self._current_row = -1
        self._current_at = float("nan")  # the current match's event time, ms
        self._width_px = 1.0  # pixels across the view, for the current match's column
        self._bounds = QtCore.QRectF(lanes.x_min, 0, lanes.x_max - lanes.x_min, lanes.height)

    def _bands(self) -> tuple[np.ndarray, np.ndarray]:
        """(top, height) of every lane, numbered across the groups (as laid out now)."""
        both = [bands(group.lanes) for group in self.lanes.groups]
        return np.concatenate([b[0] for b in both]), np.concatenate([b[1] for b in both])

    def set_theme(self, theme: Theme) -> None:
        self.theme = theme
        self.update()

    def set_current(self, row: int, at_ms: float | None = None) -> None:
        """Mark partition ``row`` (-1: none) as the current match, its matched event at
        ``at_ms`` (None: the middle of its first bar)."""
        self._current_row = row
        if at_ms is not None:
            self._current_at = at_ms
        self._current = []
        level = self._stack.level(0)
        at = np.flatnonzero(self._stack.row == row)
        lane = np.searchsorted(level.bounds, at, side="right") - 1
        top, height = (v[self._numbers[lane]] for v in self._bands())
        for a, b, y, h in zip(
            *(v.tolist() for v in (level.starts(at), level.ends(at), top, height)), strict=True
        ):
            if h > 0:
                self._current.append(QtCore.QRectF(a, y, b - a, h))
        if at_ms is None and self._current and not np.isfinite(self._current_at):
            self._current_at = self._current[0].center().x()
        self.update()

    def current_rects(self) -> list[QtCore.QRectF]:
        """The current match's bars (view coordinates: ms, layout px)."""
        return list(self._current)

    def set_dim(self, dim: bool) -> None:
        """Fade everything but the matches (a filter), or only mark the matches."""
        self._dim = dim
        self.update()

    def dimmed(self) -> bool:
        return self._dim

    def rect_count(self) -> int:
        return len(self._batch)

    def prepare(self, x0: float, x1: float, px: float) -> None:
        """Rectangles of the matches in the view [x0, x1] ms where one pixel is ``px`` ms."""
        top, height = (v[self._numbers] for v in self._bands())
        self._view = (x0, x1)
        self._width_px = (x1 - x0) / px if px > 0 else 1.0
        s, e, key, lane = self._stack.drawable(x0, x1, px, lanes=height > 0)
        buffer = np.empty((len(s), 4))
        buffer[:, 0], buffer[:, 2] = s, e - s
        buffer[:, 1], buffer[:, 3] = top[lane], height[lane]
        # Sorted by sector colour: drawn in those colours over the faded lanes as a filter.
        slot = np.where(key < 0, -1, key % len(JOB_COLORS))
        order = np.argsort(slot, kind="stable")
        self._batch = RectBatch(np.ascontiguousarray(buffer[order]))
        slot = slot[order]
        firsts = np.flatnonzero(np.r_[True, slot[1:] != slot[:-1]]) if len(slot) else []
        counts = np.diff(np.append(firsts, len(slot)))
        self._slots = [(int(slot[f]), int(f), int(c)) for f, c in zip(firsts, counts, strict=True)]
        if self._current_row >= 0:
            self.set_current(self._current_row)  # lanes may have moved (a group collapsed)
        self.update()

    def boundingRect(self) -> QtCore.QRectF:
        return QtCore.QRectF(self._bounds)

    def paint(self, painter: QtGui.QPainter, *args) -> None:
        painter.setRenderHint(QtGui.QPainter.RenderHint.Antialiasing, False)
        x0, x1 = max(self._view[0], self._bounds.left()), min(self._view[1], self._bounds.right())
        if self._dim and x1 > x0:
            painter.setPen(QtCore.Qt.PenStyle.NoPen)
            fade = with_alpha(self.theme.background, 0.8)
            for group in self.lanes.groups:
                if group.is_counters or group.collapsed:
                    continue
                if isinstance(group.lanes, Rows):  # the rows as one band, header left as is
                    rows = group.lanes
                    band = QtCore.QRectF(x0, rows.top, x1 - x0, rows.bottom - rows.top)
                    painter.fillRect(band, fade)
                    continue
                for lane in group.lanes:
                    if lane.height > 0 and lane.kind != "counter":
                        painter.fillRect(QtCore.QRectF(x0, lane.top, x1 - x0, lane.height), fade)
        pen = QtGui.QPen(self.theme.match, 1.5)
        pen.setCosmetic(True)
        painter.setPen(pen)
        wash = with_alpha(self.theme.match, 0.35)
        self._batch.runs = [
            (QtGui.QBrush(self.theme.job(slot) if self._dim else wash), first, count)
            for slot, first, count in self._slots
        ]
        self._batch.draw(painter)
        if self._current:
            # The current match: a column through every lane at its event (found at a glance
            # among hundreds of washed matches), then its bars filled in the match colour
            # and outlined in the text colour, so it reads in both palettes.
            px = max((self._view[1] - self._view[0]) / max(self._width_px, 1.0), 0.0)
            half = CURRENT_MIN_PX * px / 2
            at = self._current_at
            column = QtCore.QRectF(at - half, 0.0, 2 * half, self._bounds.height())
            painter.setPen(QtCore.Qt.PenStyle.NoPen)
            painter.fillRect(column, with_alpha(self.theme.match, 0.18))
            painter.setBrush(QtGui.QBrush(with_alpha(self.theme.match, 0.85)))
            pen = QtGui.QPen(self.theme.foreground, 2.5)
            pen.setCosmetic(True)
            painter.setPen(pen)
            painter.drawRects(self._current)

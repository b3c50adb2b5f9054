"""The swimlane view: GPU workers, GPU busy lanes and synthesis rows on one zoomable time axis.

Only time zooms; lanes keep their pixel height (the view's y range is always
its height in pixels, scrolled by a vertical scroll bar).  Drawing lives in
``lanes.LaneGroupItem`` (one item per lane group) and ``lane_overlay``;
this module wires navigation, picking, selection and signals.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from viewer.analysis.units import Clock, duration
from viewer.lanes.data import LaneGroup, SessionLanes, build_lanes
from viewer.lanes.text import describe_counter, describe_gap, describe_partition
from viewer.model import Session, Timeline
from viewer.ui.palette import Theme, with_alpha
from viewer.ui.view.axis import LaneHeaderAxis, TimeAxisItem
from viewer.ui.view.counter_tracks import CounterTrackItem
from viewer.ui.view.flow_item import FlowItem
from viewer.ui.view.grid import TimeGridItem
from viewer.ui.view.lane_hover import HoverTip, pick
from viewer.ui.view.lane_legend import LegendBar
from viewer.ui.view.lane_overlay import OverlayItem
from viewer.ui.view.lanes import LaneGroupItem
from viewer.ui.view.match_item import MatchItem
from viewer.ui.view.time_viewbox import TimeViewBox

DEBOUNCE_MS = 35
KEY_ZOOM = 2.0
KEY_PAN = 0.25
Qt = QtCore.Qt


#: A search step zooms in until the current match's call is at least this wide (px).
MATCH_MIN_PX = 40.0
#: Rows scrolled to are kept this far below the view's top, clear of the transition labels.
SCROLL_CLEAR_PX = 40.0


class TimelineView(QtWidgets.QWidget):
    """Swimlanes of one session of a Timeline, with zoom, pan, picking and a range selection.

    ``selection_changed`` carries (start, end) in ms, or (0.0, 0.0) when the
    selection is cleared; it and ``x_range_changed`` are debounced.
    """

    selection_changed = QtCore.Signal(float, float)
    #: A right click: the view point (x ms, y px) and the global screen position.
    context_requested = QtCore.Signal(QtCore.QPointF, QtCore.QPoint)
    x_range_changed = QtCore.Signal(float, float)
    cursor_moved = QtCore.Signal(float)
    partition_clicked = QtCore.Signal(int)
    session_changed = QtCore.Signal(int)
    #: A short note for the status bar (where a transition step landed, ...).
    message_ready = QtCore.Signal(str)
    #: The wall time of offset 0 (epoch ms) the axis shows, or None for the session's clock.
    wall_start_changed = QtCore.Signal(object)
    #: The clock every time in the window is written on (``units.Clock``): it changes with
    #: the session, the wall clock and aligned time.
    clock_changed = QtCore.Signal(object)

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.theme = Theme.from_palette(self.palette())
        self._timeline: Timeline | None = None
        self._index = 0
        self._clock: Clock | None = None  # the one last said (``clock_changed``)
        self._lanes: SessionLanes | None = None
        self._cache: dict[int, SessionLanes] = {}
        self._items: list[LaneGroupItem] = []
        self._counters: CounterTrackItem | None = None
        self._matches: MatchItem | None = None
        self._flow: FlowItem | None = None
        self._overlay: OverlayItem | None = None
        self._job: int | None = None
        self._has_selection = False
        self._framed_transition: tuple[int, tuple[float, float]] | None = None

        self._vb = TimeViewBox(self._on_drag_span, self._on_click, self.context_requested.emit)
        self._time_axis = TimeAxisItem()
        self._header = LaneHeaderAxis(self._on_toggle_group, self._scroll_by)
        self.plot = pg.PlotWidget(
            viewBox=self._vb, axisItems={"bottom": self._time_axis, "left": self._header}
        )
        item = self.plot.getPlotItem()
        item.hideButtons()
        item.setMenuEnabled(False)
        for hidden in ("top", "right"):  # else they re-format their SI label on every pan
            item.getAxis(hidden).enableAutoSIPrefix(False)
        self._grid = TimeGridItem(self._time_axis, self._vb)
        item.addItem(self._grid, ignoreBounds=True)
        self._vb.disableAutoRange()
        self._region = pg.LinearRegionItem(orientation="vertical", swapMode="sort")
        self._region.setZValue(30)
        self._region.hide()
        self._band = pg.LinearRegionItem(orientation="vertical", movable=False)
        self._band.setZValue(31)
        self._band.hide()
        item.addItem(self._region, ignoreBounds=True)
        item.addItem(self._band, ignoreBounds=True)

        self._scrollbar = QtWidgets.QScrollBar(Qt.Orientation.Vertical)
        self._scrollbar.valueChanged.connect(self._on_scrolled)
        self.legend = LegendBar()
        self._tip = HoverTip(self)

        # The row joins the view's layout empty and is filled after. PySide's addLayout
        # wraps each item already in the added layout (a QWidgetItem, not a QObject) in a
        # Python object parented to the outer layout; when the collector tears down an
        # unparented view (an offscreen export), clearing such a wrapper before the view
        # hands it ownership, it deletes its item while the row still lists it, and the
        # view's ~QBoxLayout then deletes freed memory (a segfault in the tests'
        # gc.collect()). Filled in place, the row's items never get a Python wrapper.
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        row = QtWidgets.QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(0)
        layout.addLayout(row, 1)
        row.addWidget(self.plot, 1)
        row.addWidget(self._scrollbar)
        layout.addWidget(self.legend)

        self._selection_timer = self._single_shot(self._emit_selection)
        self._range_timer = self._single_shot(self._emit_x_range)
        # The hover label follows what comes under a still pointer when the view moves.
        self._tip_timer = QtCore.QTimer(self)
        self._tip_timer.setSingleShot(True)
        self._tip_timer.setInterval(0)
        self._tip_timer.timeout.connect(self._refresh_tip)
        self._vb.sigXRangeChanged.connect(self._on_x_range)
        self._vb.sigYRangeChanged.connect(self._on_y_range)
        self._vb.sigResized.connect(self._on_resized)
        for signal in (self._vb.sigXRangeChanged, self._vb.sigYRangeChanged, self._vb.sigResized):
            signal.connect(self._schedule_tip)
        self._region.sigRegionChanged.connect(self._on_region_changed)
        self.plot.scene().sigMouseMoved.connect(self._on_mouse_moved)
        self.plot.installEventFilter(self)
        self.plot.viewport().installEventFilter(self)
        self._apply_theme()

    def _single_shot(self, slot) -> QtCore.QTimer:
        timer = QtCore.QTimer(self)
        timer.setSingleShot(True)
        timer.setInterval(DEBOUNCE_MS)
        timer.timeout.connect(slot)
        return timer

    # ------------------------------------------------------------- data
    def set_timeline(
        self,
        timeline: Timeline | None,
        session_index: int = 0,
        lanes: dict[int, SessionLanes] | None = None,
    ) -> None:
        """Show ``timeline``; ``lanes`` (session index -> ``build_lanes`` result) may be
        prepared off the GUI thread, since building them costs seconds on big logs."""
        self._timeline = timeline
        self._cache.clear()
        self._cache.update(lanes or {})
        self._index = -1
        self.set_session(session_index)

    def timeline(self) -> Timeline | None:
        return self._timeline

    def session_index(self) -> int:
        return self._index

    def session(self) -> Session | None:
        return self._lanes.session if self._lanes is not None else None

    def lanes(self) -> SessionLanes | None:
        return self._lanes

    def group_items(self) -> list[LaneGroupItem]:
        return list(self._items)

    def counter_item(self) -> CounterTrackItem | None:
        """The counter tracks (queue depth, syntheses and GPU calls in flight)."""
        return self._counters

    def set_session(self, index: int) -> None:
        sessions = self._timeline.sessions if self._timeline is not None else []
        if not sessions:
            self._show(None)
            return
        index = min(max(int(index), 0), len(sessions) - 1)
        if index == self._index:
            return
        if index not in self._cache:
            self._cache[index] = build_lanes(sessions[index])
        self._index = index
        self._show(self._cache[index])
        self.session_changed.emit(index)
        self._clock_may_have_changed()

    def _show(self, lanes: SessionLanes | None) -> None:
        for old in [*self._items, self._overlay, self._counters, self._matches, self._flow]:
            if old is not None:
                self._vb.removeItem(old)
        self._items, self._overlay, self._lanes, self._job = [], None, lanes, None
        self._schedule_tip()
        self._counters = self._matches = self._flow = None
        self._set_selection_visible(False)
        self._header.set_lanes(lanes, self.theme)
        if lanes is None:
            return
        for group in lanes.groups:
            if group.is_counters:
                self._counters = CounterTrackItem(
                    group, lanes.counters, lanes.x_min, lanes.x_max, self.theme
                )
                self._vb.addItem(self._counters, ignoreBounds=True)
                continue
            group_item = LaneGroupItem(
                group, lanes.x_min, lanes.x_max, self.theme, lanes.kernel_parts
            )
            self._vb.addItem(group_item, ignoreBounds=True)
            self._items.append(group_item)
        self._overlay = OverlayItem(lanes, self.theme)
        self._overlay.setZValue(10)
        self._vb.addItem(self._overlay, ignoreBounds=True)
        span = lanes.x_max - lanes.x_min
        self._vb.setLimits(
            xMin=lanes.x_min - span, xMax=lanes.x_max + span, minXRange=0.05, maxXRange=3 * span
        )
        self._apply_y_range()
        self.fit()
        self._prepare()

    # ------------------------------------------------ hooks for add-ons
    def view_box(self) -> pg.ViewBox:
        """The ViewBox of the lanes (x in ms, y in pixels from the top), for overlays."""
        return self._vb

    @contextlib.contextmanager
    def hidden_for_export(self, selection: bool = False) -> Iterator[None]:
        """Hide the hover tooltip, the zoom band and (unless ``selection``) the range
        selection while an image of the view is rendered."""
        shown = [w for w in (self._tip, self._band, self._region) if w.isVisible()]
        keep = {self._region} if selection else set()
        for w in shown:
            if w not in keep:
                w.hide()
        try:
            with self.drawn_anew():
                yield
        finally:
            for w in shown:
                w.show()

    @contextlib.contextmanager
    def drawn_anew(self) -> Iterator[None]:
        """Draw everything anew while an export paints: the lane names' pixmap cache (for
        pans) went into an SVG as an image, and into a 2x PNG as a 1x pixmap scaled up."""
        cache = self._header.cacheMode()
        self._header.setCacheMode(QtWidgets.QGraphicsItem.CacheMode.NoCache)
        try:
            yield
        finally:
            self._header.setCacheMode(cache)

    # -------------------------------------------------------- wall clock
    def set_wall_start(self, wall_ms: float | None) -> None:
        """Show the wall clock (UTC) on the axis, offset 0 being ``wall_ms`` (epoch ms), or
        the session's own clock (None)."""
        if wall_ms != self.wall_start():
            self._time_axis.set_wall_start(wall_ms)
            self._grid.update()
            self.wall_start_changed.emit(wall_ms)
            self._clock_may_have_changed()

    def wall_start(self) -> float | None:
        return self._time_axis.wall_start()

    def set_time_zero(self, zero_ms: float | None, what: str = "") -> None:
        """Label the axis (and the cursor) in aligned time, 0 being ``zero_ms`` of the
        session's clock and ``what`` saying what it is ("first GPU_START"); None: the
        session's own clock.  The compare window aligns two runs so."""
        self._time_axis.set_zero(zero_ms, what)
        self._grid.update()
        self._clock_may_have_changed()

    def clock(self) -> Clock:
        """The clock the axis shows, for every time the window writes (``units.Clock``)."""
        session = self.session()
        ends = (session.start_ms, session.end_ms) if session is not None else (0.0, 0.0)
        return Clock.of(*ends, wall=self.wall_start(), zero=self._time_axis.zero())

    def _clock_may_have_changed(self) -> None:
        session = self.session()
        if session is not None:
            self._time_axis.set_bounds(session.start_ms, session.end_ms)
        clock = self.clock()
        if clock != self._clock:
            self._clock = clock
            self.clock_changed.emit(clock)

    def format_time(self, ms: float) -> str:
        """A time of the session as the axis shows it: "01:01:15.742 UTC" on the wall
        clock, "-12.000 s aligned" in aligned time, else "75.742 s" (or "1:12:05.742" for
        every time of a session past 2 min) since the daemon started."""
        return self.clock().stamp(ms)

    # ------------------------------------------------------- navigation
    def x_range(self) -> tuple[float, float]:
        x0, x1 = self._vb.viewRange()[0]
        return float(x0), float(x1)

    def set_x_range(self, start_ms: float, end_ms: float) -> None:
        if end_ms > start_ms:
            self._vb.setXRange(float(start_ms), float(end_ms), padding=0)

    def fit(self) -> None:
        if self._lanes is not None:
            self._vb.setXRange(self._lanes.x_min, self._lanes.x_max, padding=0.01)

    def zoom(self, factor: float, center: float | None = None) -> None:
        """Scale the visible span by ``factor`` (< 1 zooms in) around ``center`` (ms)."""
        x0, x1 = self.x_range()
        c = (x0 + x1) / 2 if center is None else center
        self.set_x_range(c - (c - x0) * factor, c + (x1 - c) * factor)

    def pan(self, fraction: float) -> None:
        x0, x1 = self.x_range()
        d = (x1 - x0) * fraction
        self.set_x_range(x0 + d, x1 + d)

    def next_transition(self) -> None:
        self._step_transition(+1)

    def prev_transition(self) -> None:
        self._step_transition(-1)

    def _step_transition(self, step: int) -> None:
        """Frame the next (``step`` > 0) or previous transition: the one after the one framed
        last while the view still shows it, else the first after the view's left edge (the
        last before its right edge going back); ``message_ready`` says where that is."""
        if self._lanes is None:
            return
        t = self._lanes.transitions
        n = len(t)
        if not n:
            self.message_ready.emit("no sector transitions in this session")
            return
        times = t["time"]
        x0, x1 = self.x_range()
        framed = self._framed_transition
        if framed is not None and np.allclose(framed[1], (x0, x1), rtol=0, atol=1e-6 * (x1 - x0)):
            i = framed[0] + step
        elif step > 0:
            i = int(np.searchsorted(times, x0, side="right"))
        else:
            i = int(np.searchsorted(times, x1, side="left")) - 1
        if not 0 <= i < n:
            self.message_ready.emit("last transition" if i >= n else "first transition")
            return
        half = max(1.5 * max(float(t["gap_ms"][i]), float(t["overlap_ms"][i])), 2000.0)
        self.set_x_range(times[i] - half, times[i] + half)
        self._framed_transition = (i, self.x_range())
        row = t.row(i)
        where = " (last transition)" if i == n - 1 else " (first transition)" if i == 0 else ""
        self.message_ready.emit(
            f"transition {i + 1} of {n}: sector {int(row['from_job'])}->{int(row['to_job'])}, "
            f"gap {duration(float(row['gap_ms']))}, overlap {duration(float(row['overlap_ms']))}"
            + where
        )

    def frame_partition(self, row: int) -> None:
        """Show partition ``row`` (of session.partitions) in the middle third of the view."""
        session = self.session()
        if session is None or not 0 <= row < len(session.partitions):
            return
        p = session.partitions.row(row)
        start = float(p["gpu_start"]) if np.isfinite(p["gpu_start"]) else float(p["synth_start"])
        end = float(p["gpu_end"]) if np.isfinite(p["gpu_end"]) else session.end_ms
        if not np.isfinite(start):
            return
        d = max(end - start, 1.0)
        self.set_x_range(start - d, end + d)

    def select_job(self, job: int | None) -> None:
        """Outline every bar of job ``job`` (row of session.jobs) in all lanes; None clears."""
        self._job = job
        for group_item in self._items:
            group_item.set_selected_job(job)

    def selected_job(self) -> int | None:
        return self._job

    def show_flow(self, row: int) -> None:
        """Outline partition ``row``'s synthesis, queue wait and GPU call, with arrows from
        one to the next (-1 clears)."""
        if self._flow is not None:
            self._vb.removeItem(self._flow)
            self._flow = None
        session = self.session()
        if session is not None and 0 <= row < len(session.partitions):
            self._flow = FlowItem(self._lanes, row, self.theme)
            self._vb.addItem(self._flow, ignoreBounds=True)

    def flow_item(self) -> FlowItem | None:
        return self._flow

    # ----------------------------------------------------------- search
    def set_matches(self, rows: np.ndarray | None, dim: bool = False) -> None:
        """Highlight the bars of the partitions ``rows`` (search matches), fading the rest
        with ``dim`` (a filter); None clears."""
        if self._matches is not None:
            self._vb.removeItem(self._matches)
            self._matches = None
        if rows is not None and self._lanes is not None and len(rows):
            self._matches = MatchItem(self._lanes, rows, self.theme)
            self._matches.set_dim(dim)
            self._vb.addItem(self._matches, ignoreBounds=True)
            x0, x1 = self.x_range()
            self._matches.prepare(x0, x1, self.ms_per_px())

    def match_item(self) -> MatchItem | None:
        return self._matches

    def show_match(self, row: int, at_ms: float) -> None:
        """Bring partition ``row``'s matched event (at ``at_ms``) to the middle of the view
        and its lanes into sight, and mark it as the current match. The view zooms in
        until the match's GPU call is at least ``MATCH_MIN_PX`` wide (a match among 10^4
        bars is otherwise a pixel), never out."""
        session = self.session()
        if session is None or not 0 <= row < len(session.partitions):
            return
        p = session.partitions.row(row)
        # The GPU call is the bar a match is read by; a synthesis when there is no call.
        spans = [
            float(p[y]) - float(p[x])
            for x, y in (("gpu_start", "gpu_end"), ("synth_start", "synth_end"))
        ]
        call = next((v for v in spans if np.isfinite(v) and v > 0), 0.0)
        x0, x1 = self.x_range()
        span = x1 - x0
        if call > 0 and call / self.ms_per_px() < MATCH_MIN_PX:
            span = max(min(span, call * self._vb.width() / MATCH_MIN_PX), 2000.0)
        self.set_x_range(at_ms - span / 2, at_ms + span / 2)
        if self._matches is not None:
            self._matches.set_current(row, at_ms)
            rects = self._matches.current_rects()
            if rects:
                self._scroll_to(min(r.top() for r in rects), max(r.bottom() for r in rects))

    def _scroll_to(self, top: float, bottom: float) -> None:
        """Scroll the lanes so that layout rows ``top``..``bottom`` (px) are in sight, clear
        of the transition labels over the top of the view; where they cannot all be, the
        top ones (a match's GPU call above its synthesis)."""
        first = self._scrollbar.value()
        height = max(self._vb.height(), 1.0)
        clear = SCROLL_CLEAR_PX if first > 0 or top > 0 else 0.0
        if top - clear >= first and bottom <= first + height:
            return
        if bottom - top + clear > height or top - clear < first:
            self._scrollbar.setValue(int(max(top - clear, 0.0)))
        else:
            self._scrollbar.setValue(int(bottom - height))

    # -------------------------------------------------------- selection
    def set_selection(self, start_ms: float, end_ms: float) -> None:
        a, b = sorted((float(start_ms), float(end_ms)))
        self._region.setRegion((a, b))
        self._set_selection_visible(True)
        self._selection_timer.start()

    def selection(self) -> tuple[float, float] | None:
        if not self._has_selection:
            return None
        a, b = self._region.getRegion()
        return float(a), float(b)

    def clear_selection(self) -> None:
        self._set_selection_visible(False)
        self._selection_timer.start()

    def select_visible(self) -> None:
        self.set_selection(*self.x_range())

    def _set_selection_visible(self, visible: bool) -> None:
        self._has_selection = visible
        self._region.setVisible(visible)

    def _on_region_changed(self) -> None:
        if self._has_selection:
            self._selection_timer.start()

    def _emit_selection(self) -> None:
        self.selection_changed.emit(*(self.selection() or (0.0, 0.0)))

    def _emit_x_range(self) -> None:
        self.x_range_changed.emit(*self.x_range())

    def _on_drag_span(self, mode: str, a: float, b: float, finished: bool) -> None:
        if mode == "select":
            self.set_selection(a, b)
            return
        self._band.setRegion((a, b))
        self._band.setVisible(not finished)
        if finished and b > a:
            self.set_x_range(a, b)

    # ------------------------------------------------------------ paint
    def _on_x_range(self, *args) -> None:
        self._prepare()
        self._time_axis.update_label()
        self._range_timer.start()

    def _on_resized(self) -> None:
        self._apply_y_range()
        self._prepare()

    def ms_per_px(self) -> float:
        """Milliseconds per pixel of the lanes at the current zoom (every pick, snap and
        level of detail of the view reads this one)."""
        x0, x1 = self.x_range()
        return (x1 - x0) / max(self._vb.width(), 1.0)

    def _prepare(self) -> None:
        """Rebuild the rectangles of every lane group for the current view."""
        x0, x1 = self.x_range()
        px = self.ms_per_px()
        y0, y1 = self._vb.viewRange()[1]
        for group_item in self._items:
            group_item.prepare(x0, x1, px, (float(y0), float(y1)))
        if self._counters is not None:
            self._counters.prepare(x0, x1, px)
        if self._matches is not None:
            self._matches.prepare(x0, x1, px)
        self._prepare_overlay()

    def _on_y_range(self, *args) -> None:
        y0, y1 = self._vb.viewRange()[1]
        for group_item in self._items:
            group_item.set_y_view(float(y0), float(y1))
        self._prepare_overlay()

    def _prepare_overlay(self, *args) -> None:
        if self._overlay is None:
            return
        x0, x1 = self.x_range()
        self._overlay.prepare(x0, x1, self.ms_per_px(), float(self._vb.viewRange()[1][0]))

    def _apply_y_range(self) -> None:
        height = max(self._vb.height(), 1.0)
        total = self._lanes.height if self._lanes is not None else height
        scroll_max = int(max(0.0, total - height))
        self._scrollbar.blockSignals(True)
        self._scrollbar.setRange(0, scroll_max)
        self._scrollbar.setPageStep(int(height))
        self._scrollbar.blockSignals(False)
        self._scrollbar.setVisible(scroll_max > 0)
        top = float(min(self._scrollbar.value(), scroll_max))
        self._vb.setYRange(top, top + height, padding=0)

    def _on_scrolled(self, value: int) -> None:
        self._apply_y_range()

    def _scroll_by(self, pixels: float) -> None:
        self._scrollbar.setValue(int(self._scrollbar.value() + pixels))

    def _on_toggle_group(self, group: LaneGroup) -> None:
        if self._lanes is None:
            return
        group.collapsed = not group.collapsed
        self._lanes.layout()
        for group_item in self._items:
            group_item.relayout()
        if self._counters is not None:
            self._counters.relayout()
        self._header.update()
        self._apply_y_range()
        self._prepare()
        self._schedule_tip()

    # ---------------------------------------------------- theme, events
    def changeEvent(self, event: QtCore.QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QtCore.QEvent.Type.PaletteChange:
            self._apply_theme()

    def _apply_theme(self) -> None:
        self.theme = theme = Theme.from_palette(self.palette())
        self.plot.setBackground(theme.background)
        for axis in (self._time_axis, self._header):
            axis.setPen(theme.separator)
            axis.setTextPen(theme.foreground)
        self._region.setBrush(theme.selection)
        self._region.setHoverBrush(with_alpha(theme.selection, 0.35))
        for line in self._region.lines:
            line.setPen(pg.mkPen(theme.foreground, width=1))
        self._band.setBrush(with_alpha(theme.foreground, 0.12))
        self._grid.set_colours(theme.foreground, theme.background)
        self.legend.set_theme(theme)
        self._header.set_lanes(self._lanes, theme)
        for group_item in self._items:
            group_item.set_theme(theme)
        if self._counters is not None:
            self._counters.set_theme(theme)
        if self._matches is not None:
            self._matches.set_theme(theme)
        if self._flow is not None:
            self._flow.set_theme(theme)
        if self._overlay is not None:
            self._overlay.set_theme(theme)

    def eventFilter(self, watched: QtCore.QObject, event: QtCore.QEvent) -> bool:
        if event.type() == QtCore.QEvent.Type.KeyPress and self._on_key(event):
            return True
        if event.type() == QtCore.QEvent.Type.Leave:
            self._tip.hide()
        return super().eventFilter(watched, event)

    def keyPressEvent(self, event: QtGui.QKeyEvent) -> None:
        if not self._on_key(event):
            super().keyPressEvent(event)

    def _on_key(self, event: QtGui.QKeyEvent) -> bool:
        if event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier:
            return False
        key = event.key()
        actions = {
            Qt.Key.Key_W: lambda: self.zoom(1 / KEY_ZOOM),
            Qt.Key.Key_S: lambda: self.zoom(KEY_ZOOM),
            Qt.Key.Key_A: lambda: self.pan(-KEY_PAN),
            Qt.Key.Key_D: lambda: self.pan(KEY_PAN),
            Qt.Key.Key_F: self.fit,
            Qt.Key.Key_Home: self.fit,
            Qt.Key.Key_BracketRight: self.next_transition,
            Qt.Key.Key_N: self.next_transition,
            Qt.Key.Key_BracketLeft: self.prev_transition,
            Qt.Key.Key_P: self.prev_transition,
        }
        if key in actions:
            actions[key]()
            return True
        if Qt.Key.Key_1 <= key <= Qt.Key.Key_9:
            self.set_session(int(key) - int(Qt.Key.Key_1))
            return True
        return False

    # ---------------------------------------------------------- picking
    def pick(self, x_ms: float, y: float) -> tuple[str, int]:
        """What lies at view point (x ms, y px): ("partition", row), ("gap", index) or ("", -1)."""
        if self._lanes is None:
            return "", -1
        return pick(self._lanes, x_ms, y, self.ms_per_px())

    def tooltip_text_at(self, x_ms: float, y: float) -> str:
        """The plain-text tooltip for view point (x ms, y px); empty over nothing."""
        lane = self._lanes.lane_at(y) if self._lanes is not None else None
        if lane is not None and lane.kind == "counter" and self._counters is not None:
            got = self._counters.column_range(lane.counter, x_ms, self.ms_per_px())
            return (
                "" if got is None else describe_counter(lane.counter, *got, self.format_time(x_ms))
            )
        kind, index = self.pick(x_ms, y)
        if kind == "partition":
            return describe_partition(self._lanes.session, index, self.clock())
        if kind == "gap":
            return describe_gap(self._lanes.session, self._lanes.gaps, index, self.clock())
        return ""

    def tooltip_label(self) -> QtWidgets.QLabel:
        return self._tip

    def _schedule_tip(self, *_args) -> None:
        """Refresh the hover label once the view has settled (only while it shows: the
        ViewBox's signals also fire while the view is torn down, when there is none)."""
        try:
            if self._tip.isVisible():
                self._tip_timer.start()
        except RuntimeError:  # the view's C++ side is gone
            pass

    def _refresh_tip(self) -> None:
        """The view moved, scrolled, changed session or size under a still pointer (a key,
        the search bar, a transition step): say what is under it now, or nothing."""
        if not self._tip.isVisible():
            return
        port = self.plot.viewport()
        at = port.mapFromGlobal(QtGui.QCursor.pos())
        if not port.rect().contains(at) or not port.isVisible():
            self._tip.hide()
            return
        self._on_mouse_moved(self.plot.mapToScene(at))

    def _on_mouse_moved(self, scene_pos: QtCore.QPointF) -> None:
        if not self._vb.sceneBoundingRect().contains(scene_pos):
            self._tip.hide()
            return
        p = self._vb.mapSceneToView(scene_pos)
        self.cursor_moved.emit(float(p.x()))
        at = self.plot.mapTo(self, self.plot.mapFromScene(scene_pos))
        self._tip.show_text(self.tooltip_text_at(p.x(), p.y()), at)

    def _on_click(self, pos: QtCore.QPointF, double: bool) -> None:
        kind, index = self.pick(pos.x(), pos.y())
        if kind != "partition":
            self.select_job(None)
            self.show_flow(-1)
            self.partition_clicked.emit(-1)
            return
        self.select_job(int(self._lanes.session.partitions["job"][index]))
        self.show_flow(index)
        self.partition_clicked.emit(index)
        if double:
            self.frame_partition(index)

"""Search: a query finds partitions, highlights them on the lanes, and next / previous
bring each into view; both ways (field -> view, view -> where next starts)."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6 import QtCore, QtGui

from tests.ui.conftest import load_and_wait
from tests.ui.test_main_window import PHASE8, window  # noqa: F401
from tests.ui.test_timeline_view import scene_point
from viewer.analysis.search import find
from viewer.ui.view.timeline_view import MATCH_MIN_PX

Qt = QtCore.Qt


def type_query(qtbot, win, text: str) -> None:
    bar = win.search_bar
    bar.field.clear()
    qtbot.keyClicks(bar.field, text)
    bar.search()  # what the debounce timer would do


def test_ctrl_k_opens_the_bar_and_a_job_prefix_highlights_its_bars(qtbot, window) -> None:  # noqa: F811
    timeline = load_and_wait(qtbot, window, PHASE8)
    session = timeline.sessions[0]
    bar = window.search_bar
    assert not bar.isVisible()
    assert QtGui.QKeySequence("Ctrl+K") in window.find_action.shortcuts()
    assert QtGui.QKeySequence("/") in window.find_action.shortcuts()
    window.find_action.trigger()
    assert bar.isVisible() and bar.field.hasFocus()
    job = session.jobs["job_id"][2]
    type_query(qtbot, window, job[:6].upper())
    assert bar.count.text() == "10 matches"
    item = window.view.match_item()
    assert item is not None and item.rect_count() > 0
    # Every bar of that job (10 GPU calls and 10 syntheses) is washed in the match colour.
    rows = np.flatnonzero(session.partitions["job"] == 2)
    assert sorted(find(session, job[:6]).rows.tolist()) == rows.tolist()
    qtbot.keyClick(bar.field, Qt.Key.Key_Return)  # first match after the left edge
    assert bar.current() == 0
    row = int(bar.matches().rows[0])
    lo, hi = window.view.x_range()
    start = float(session.partitions["gpu_start"][row])
    assert lo < start < hi
    qtbot.wait(20)
    image = window.view.plot.grab().toImage()
    worker = int(session.partitions["worker"][row])
    lane = window.view.lanes().lanes()[worker]
    colour = image.pixelColor(scene_point(window.view, start + 400, lane.top + 3))
    assert colour.name() != window.view.theme.job(2).name()  # tinted by the match wash
    assert bar.count.text() == "1 of 10"


def test_next_previous_wrap_and_events_go_to_their_time(qtbot, window) -> None:  # noqa: F811
    timeline = load_and_wait(qtbot, window, PHASE8)
    session = timeline.sessions[0]
    window.find_action.trigger()
    type_query(qtbot, window, "p:3 GPU_PICKUP")
    bar = window.search_bar
    m = bar.matches()
    assert len(m) == 5 and m.event == "GPU_PICKUP"
    assert (session.partitions["partition"][m.rows] == 3).all()
    window.view.set_x_range(0, 20_000)  # zoomed in before the first pickup
    window.find_next_action.trigger()  # F3
    assert bar.current() == 0
    assert sum(window.view.x_range()) / 2 == np.float64(m.times[0])  # panned to it
    assert np.diff(window.view.x_range())[0] == 20_000  # the zoom kept
    window.view.fit()  # every match in view: the next one still comes to the middle
    span = np.diff(window.view.x_range())[0]
    window.find_next_action.trigger()
    assert sum(window.view.x_range()) / 2 == pytest.approx(m.times[1])  # issue 28 item 8
    assert np.diff(window.view.x_range())[0] <= span  # zoomed in (never out) until it reads
    assert bar.count.text() == "2 of 5"
    for _ in range(3):
        window.find_next_action.trigger()
    assert bar.count.text() == "5 of 5"
    window.find_next_action.trigger()
    assert bar.count.text() == "1 of 5  (wrapped)"
    qtbot.keyClick(bar.field, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    assert bar.current() == 4


def test_a_bad_query_says_why_and_esc_closes(qtbot, window) -> None:  # noqa: F811
    load_and_wait(qtbot, window, PHASE8)
    window.find_action.trigger()
    type_query(qtbot, window, "worker:x")
    bar = window.search_bar
    assert "expects numbers" in bar.count.text()
    assert window.view.match_item() is None
    window.view.set_selection(10_000, 20_000)
    qtbot.keyClick(bar.field, Qt.Key.Key_Escape)
    assert not bar.isVisible()
    assert window.view.selection() is not None  # Esc closed the bar, the range stays


def test_dim_the_rest_filters_to_the_matches(qtbot, window) -> None:  # noqa: F811
    timeline = load_and_wait(qtbot, window, PHASE8)
    session = timeline.sessions[0]
    window.find_action.trigger()
    type_query(qtbot, window, "p:3")
    bar, view = window.search_bar, window.view
    item = view.match_item()
    assert not item.dimmed()
    bar.dim.setChecked(True)
    assert item.dimmed()
    p = session.partitions
    hit = int(bar.matches().rows[2])
    miss = hit + 1 if int(p["partition"][hit + 1]) != 3 else hit - 1
    qtbot.wait(20)
    image = view.plot.grab().toImage()
    lanes = view.lanes().lanes()

    def colour_at(row: int):
        lane = lanes[int(p["worker"][row])]
        x = float(p["gpu_start"][row]) + 300
        return image.pixelColor(scene_point(view, x, lane.top + 2))

    job = int(p["job"][hit])
    assert colour_at(hit).name() == view.theme.job(job).name()  # a match keeps its colour
    faded = colour_at(miss)
    other = view.theme.job(int(p["job"][miss]))
    assert faded.name() != other.name()  # the rest fades towards the background
    assert abs(faded.lightness() - view.theme.background.lightness()) < abs(
        other.lightness() - view.theme.background.lightness()
    )
    type_query(qtbot, window, "p:4")  # a new query keeps the filter on
    assert view.match_item().dimmed()


def test_a_pasted_page_is_cut_and_refused(qtbot, window) -> None:  # noqa: F811
    """issue 27 item 13: pasting 100 000 characters stalled the window 19.5 s."""
    load_and_wait(qtbot, window, PHASE8)
    window.find_action.trigger()
    bar = window.search_bar
    QtGui.QGuiApplication.clipboard().setText("73b04127 " * 11_000)
    bar.field.setFocus()
    bar.field.paste()
    assert len(bar.field.text()) == bar.field.maxLength() == 1001
    bar.search()
    assert bar.count.text() == "a search of 1 001 characters: at most 1 000"
    assert window.view.match_item() is None


def test_a_step_frames_a_small_match_scrolls_to_it_and_marks_it(qtbot, window) -> None:  # noqa: F811
    """issue 28 item 8: Enter / F3 counted "1 of 10" but left the view alone, and the
    current match barely stood out among the others."""
    load_and_wait(qtbot, window, PHASE8)
    view = window.view
    view.fit()
    window.find_action.trigger()
    type_query(qtbot, window, "p:9 GPU_END")
    bar = window.search_bar
    m = bar.matches()
    assert len(m) == 5
    qtbot.keyClick(bar.field, Qt.Key.Key_Return)
    assert bar.current() == 0
    p = view.session().partitions.row(int(m.rows[0]))
    call_px = (p["gpu_end"] - p["gpu_start"]) / view.ms_per_px()
    assert call_px >= MATCH_MIN_PX - 1  # zoomed in until the call reads
    assert sum(view.x_range()) / 2 == pytest.approx(m.times[0])
    rects = view.match_item().current_rects()
    assert rects
    first = view._scrollbar.value()
    assert all(first <= r.top() and r.bottom() <= first + view._vb.height() + 1 for r in rects)
    # The current match has a column through every lane in the match colour.
    image = view.plot.grab().toImage()
    x = view.plot.mapFromScene(view._vb.mapViewToScene(QtCore.QPointF(m.times[0], 0))).x()
    column = [
        image.pixelColor(int(x * image.devicePixelRatio()), y) for y in range(0, image.height(), 7)
    ]
    tinted = [c for c in column if c.red() > c.green() + 25 and c.blue() > c.green()]
    assert len(tinted) > len(column) // 4, "the current match's column is not drawn"

"""Loading off the GUI thread: the log is drawn first, then its figures computed; workers yield
to the GUI."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

import pytest
from PySide6 import QtCore

from viewer.analysis import summarize
from viewer.ui import MainWindow
from viewer.ui.background import GUI_SWITCH_INTERVAL_S, WORKER_NICE, BackgroundWorker
from viewer.ui.windows.loader import LoadJob
from viewer.ui.windows.main_window import FIRST_PAINT_WAIT_MS

PHASE8 = Path(__file__).resolve().parents[2] / "sample_logs" / "phase8_pw10_5sectors.log"


def test_load_job_brings_the_whole_session_summary(qtbot):
    job = LoadJob(PHASE8, with_summary=True)
    with qtbot.waitSignal(job.loaded, timeout=15000) as loaded:
        job.start()
    job.wait()
    timeline, index, lanes, summary = loaded.args
    session = timeline.sessions[index]
    assert set(lanes) == {index}
    assert summary.rng is None
    assert summary.kernel.total_ms == pytest.approx(summarize(session).kernel.total_ms)
    assert len(summary.jobs) == len(session.jobs)


def test_load_job_without_summary_leaves_it_to_the_caller(qtbot):
    job = LoadJob(PHASE8)
    with qtbot.waitSignal(job.loaded, timeout=15000) as loaded:
        job.start()
    job.wait()
    assert loaded.args[3] is None


def test_window_draws_the_log_before_computing_its_figures(qtbot, tmp_path):
    """Issue 15, item 2: the plot's first frame with the log comes first; the whole
    session's figures are computed after it (once) and fill the panels."""
    settings = QtCore.QSettings(str(tmp_path / "s.ini"), QtCore.QSettings.Format.IniFormat)
    win = MainWindow(settings=settings)
    qtbot.addWidget(win)
    win.show()
    order: list[object] = []

    class Painted(QtCore.QObject):
        def eventFilter(self, obj, event):
            if event.type() == QtCore.QEvent.Type.Paint and "painted" not in order:
                order.append("painted")
            return False

    spy = Painted()
    win.timeline_loaded.connect(lambda _: win.view.plot.viewport().installEventFilter(spy))
    request = win.runner.task.request
    win.runner.task.request = lambda *args: (order.append(args[2:]), request(*args))
    with qtbot.waitSignal(win.summary_ready, timeout=15000) as ready:
        win.open_paths([PHASE8])
        assert win.is_loading()
    assert order[0] == "painted" and len(order) == 2, order
    assert order[1] == (win.session(), None)  # the whole session, asked once
    assert ready.args[0] is win.current_summary()
    assert win.transitions_panel.frame().equals(ready.args[0].transitions)
    assert "whole session" in win.range_label.text()


def test_a_range_chosen_before_the_first_frame_is_not_overridden(qtbot, tmp_path):
    settings = QtCore.QSettings(str(tmp_path / "s.ini"), QtCore.QSettings.Format.IniFormat)
    win = MainWindow(settings=settings)
    qtbot.addWidget(win)
    win.show()
    with qtbot.waitSignal(win.timeline_loaded, timeout=15000):
        win.open_paths([PHASE8])
    session = win.session()
    a, b = session.start_ms, (session.start_ms + session.end_ms) / 2
    win.view.set_selection(a, b)  # before the deferred whole-session request fires
    with qtbot.waitSignal(win.summary_ready, timeout=15000):
        pass
    qtbot.wait(2 * FIRST_PAINT_WAIT_MS)  # the deferred request's fallback timer, had it one
    assert win.current_summary().rng == (a, b)
    assert "range" in win.range_label.text() and "whole session" not in win.range_label.text()


def test_hidden_window_loads_without_waiting_for_a_paint(qtbot, tmp_path):
    settings = QtCore.QSettings(str(tmp_path / "s.ini"), QtCore.QSettings.Format.IniFormat)
    win = MainWindow(settings=settings)
    qtbot.addWidget(win)
    win.open_paths([PHASE8])
    assert win._job is not None  # started at once: nothing to paint first
    with qtbot.waitSignal(win.timeline_loaded, timeout=15000):
        pass


def test_workers_yield_to_the_gui_thread(qtbot):
    worker = BackgroundWorker()
    seen = {}

    def record():
        if sys.platform.startswith("linux"):
            seen["nice"] = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
        return True

    with qtbot.waitSignal(worker.finished, timeout=5000):
        worker.submit("token", record)
    assert sys.getswitchinterval() <= GUI_SWITCH_INTERVAL_S
    if sys.platform.startswith("linux"):
        gui = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
        assert seen["nice"] == min(gui + WORKER_NICE, 19)


def test_the_plot_is_not_watched_once_the_figures_are_asked_for(qtbot, tmp_path):
    """The wait for the log's first frame installs an event filter on the plot; it goes
    with the request, also when the fallback timer asks before any paint, so the plot's
    events (every mouse move) pass no Python filter afterwards."""
    settings = QtCore.QSettings(str(tmp_path / "s.ini"), QtCore.QSettings.Format.IniFormat)
    win = MainWindow(settings=settings)
    qtbot.addWidget(win)
    win.show()
    seen: list[int] = []
    filter_events = win.eventFilter
    win.eventFilter = lambda obj, event: (  # type: ignore[method-assign]
        seen.append(1) if obj is win.view.plot.viewport() else None,
        filter_events(obj, event),
    )[1]
    # The fallback timer's call, before the plot could paint.
    win.timeline_loaded.connect(lambda _: win._summary_after_first_frame())
    with qtbot.waitSignal(win.summary_ready, timeout=15000):
        win.open_paths([PHASE8])
    seen.clear()
    win.view.plot.viewport().update()
    qtbot.wait(50)
    assert not seen
    assert "whole session" in win.range_label.text()

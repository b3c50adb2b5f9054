"""Loading off the GUI thread: the first summary comes with the log; workers yield to the GUI."""

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
from viewer.ui.loader import LoadJob

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


def test_window_fills_panels_from_the_loaders_summary(qtbot, tmp_path):
    """No second pass over the session after a load: the runner computes nothing."""
    settings = QtCore.QSettings(str(tmp_path / "s.ini"), QtCore.QSettings.Format.IniFormat)
    win = MainWindow(settings=settings)
    qtbot.addWidget(win)
    win.show()
    computed = []
    request = win.runner.task.request
    win.runner.task.request = lambda *args: (computed.append(args), request(*args))
    with qtbot.waitSignal(win.summary_ready, timeout=15000) as ready:
        win.open_paths([PHASE8])
        assert win.is_loading()
    assert computed == []
    assert ready.args[0] is win.current_summary()
    assert win.transitions_panel.frame().equals(ready.args[0].transitions)
    assert "whole session" in win.range_label.text()


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
